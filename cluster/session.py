"""Starting or joining Ray: the embedded local instance, an existing cluster, token authentication.

This is the one place where ``ray`` is first imported and initialised. Two
modes exist:

* **Embedded** (no address): ``ray.init`` starts a private Ray instance on this
  machine, sized to the requested number of workers, without a dashboard,
  quiet, with every server bound to ``127.0.0.1``. On Linux Ray replaces a
  loopback node address by the machine's routable address unless
  ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER`` is ``0`` (the switch Ray uses for
  single-machine instances on macOS and Windows), so that variable is set
  before ``ray`` is imported. The price is that ``ray start`` refuses to add
  worker nodes from that environment, which an embedded instance never does.
* **Joined** (an address such as ``10.0.0.5:6379``, or ``auto``): connects to a
  running cluster, whose size decides the default number of workers.

Token authentication (``RAY_AUTH_MODE=token``) is required in both modes: an
unset mode is set to ``token``; any other explicit value is refused. Ray reads
the token from ``RAY_AUTH_TOKEN``, else the file named by
``RAY_AUTH_TOKEN_PATH``, else ``~/.ray/auth_token``; for an embedded instance
that file is created here if no token exists, readable only by its owner
(:func:`emberbench.cluster.hygiene.ensure_private_token`).

An embedded instance leaves nothing behind (:mod:`emberbench.cluster.hygiene`):
``--workers`` is checked against this machine's CPUs before anything starts,
a failed ``ray.init`` is cleaned up, and every process of the instance is
ended when the session ends, however it ends (an exception, SIGTERM, or the
command killed outright). ``ray.init`` installs its own SIGTERM handling
(which exits with a native stack dump); the handler the command had before
is put back once Ray is up.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from emberbench.errors import ClusterError

AUTH_MODE_VAR = "RAY_AUTH_MODE"
LOOPBACK_VAR = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
EMBEDDED_OBJECT_STORE_BYTES = 512 * 1024 * 1024
"""Objects that cross processes here are small (batches of outcomes, chunks of
records), so an embedded instance does not reserve Ray's default third of RAM."""
EMBEDDED_SYSTEM_CONFIG: dict[str, Any] = {"enable_metrics_collection": False, "event_stats": False,
                                          "worker_niceness": 0}
"""How an embedded instance differs from Ray's defaults.

* No metrics and no event-loop statistics: every Ray process records and
  exports metrics to the dashboard agent, and statistics of each event-loop
  handler. Nothing reads them (there is no dashboard), and they cost CPU in
  every process of the instance (docs/cluster.md, "What Ray costs"). Task
  events are turned off per actor and task instead
  (``enable_task_events=False``), which holds on a joined cluster too.
* Workers at the command's own priority (``worker_niceness`` 0: no niceness
  added), not Ray's default of 15: the workers are the command's work, and at
  niceness 15 they got a small fraction of the CPU whenever anything else ran
  on the machine, so a Ray run was slower than the same run in process."""


def require_token_auth() -> None:
    """Make sure Ray runs with token authentication in this process and its children.

    Raises:
        ClusterError: ``RAY_AUTH_MODE`` is set to something other than ``token``.
    """
    mode = os.environ.get(AUTH_MODE_VAR)
    if mode is None or mode == "":
        os.environ[AUTH_MODE_VAR] = "token"
    elif mode.lower() != "token":
        raise ClusterError(
            f"{AUTH_MODE_VAR}={mode!r}: EMBERBench runs Ray only with token authentication; "
            f"unset {AUTH_MODE_VAR} or set it to 'token' (see docs/cluster.md)"
        )


def import_ray(*, loopback: bool = False) -> ModuleType:
    """Import ``ray`` with token authentication on (and, for an embedded instance, loopback only).

    Args:
        loopback: bind a local instance to ``127.0.0.1``; effective only when
            ``ray`` has not been imported yet in this process.
    """
    require_token_auth()
    if loopback and "ray" not in sys.modules:
        os.environ.setdefault(LOOPBACK_VAR, "0")
    import ray

    return ray


@dataclass(frozen=True, slots=True)
class ClusterInfo:
    """The Ray instance a command runs on.

    Attributes:
        address: the cluster address joined, or None for an embedded instance.
        workers: how many workers (one CPU each) the command will start.
        cpus: CPUs of the whole Ray instance.
        nodes: live nodes of the Ray instance.
    """

    address: str | None
    workers: int
    cpus: int
    nodes: int


def _cluster_cpus(ray: ModuleType) -> tuple[int, int]:
    cpus = int(ray.cluster_resources().get("CPU", 0))
    nodes = sum(1 for n in ray.nodes() if n.get("Alive"))
    return cpus, nodes


def _check_workers(workers: int | None) -> None:
    if workers is not None and (not isinstance(workers, int) or isinstance(workers, bool) or workers < 1):
        raise ClusterError(f"--workers must be a positive integer, got {workers!r}")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@contextlib.contextmanager
def _keep_sigterm_handler() -> Iterator[None]:
    """Give back the SIGTERM handler ``ray.init`` replaces; a SIGTERM during the init goes to it too.

    Ray installs ``sys.exit(15)`` as the handler, and its core library a
    failure handler that prints a native stack dump; neither is how this
    process ends (the CLI's handler is, see :mod:`emberbench.cli._common`).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    try:
        yield
    except SystemExit as exc:
        if exc.code == signal.SIGTERM and callable(previous):
            previous(signal.SIGTERM, None)  # Ray's handler ran: hand the signal to ours
        raise
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def check_embedded_workers(address: str | None, workers: int | None) -> None:
    """Refuse ``--workers`` beyond this machine's CPUs for an embedded instance (``address`` None).

    Cheap, so a command calls it before anything slow or anything on disk;
    a cluster's CPUs are counted once it is joined.

    Raises:
        ClusterError: more workers than CPUs on an embedded instance.
    """
    from .hygiene import local_cpus

    if address is not None or workers is None:
        return
    available = local_cpus()
    if workers > available:
        raise ClusterError(f"--workers {workers} exceeds the {available} CPUs of this machine "
                           "(an embedded Ray instance runs one worker per CPU)")


def _start_embedded(ray: ModuleType, workers: int | None, kwargs: dict[str, Any]) -> None:
    """``ray.init`` of an embedded instance, sized to ``workers`` (checked against this machine first)."""
    from .hygiene import ensure_private_token, local_cpus

    check_embedded_workers(None, workers)
    available = local_cpus()
    ensure_private_token()
    ray.init(address="local", num_cpus=workers or available, include_dashboard=False,
             object_store_memory=EMBEDDED_OBJECT_STORE_BYTES, _system_config=dict(EMBEDDED_SYSTEM_CONFIG), **kwargs)


@contextlib.contextmanager
def ray_session(address: str | None = None, *, workers: int | None = None,
                runtime_env: dict[str, Any] | None = None) -> Iterator[ClusterInfo]:
    """Start or join Ray for the duration of a ``with`` block.

    If Ray is already initialised in this process (a test fixture, a Ray Job
    driver that initialised it) it is used as is and left running.

    Args:
        address: a Ray cluster address to join; None starts an embedded
            instance on this machine.
        workers: workers to start; default: every CPU of this machine
            (embedded) or of the cluster (joined).
        runtime_env: a Ray runtime environment for the workers (how user
            policy code reaches them, docs/cluster.md).

    Yields:
        A :class:`ClusterInfo`.

    Raises:
        ClusterError: Ray cannot be started or joined, or ``workers`` is invalid.
    """
    _check_workers(workers)
    ray = import_ray(loopback=address is None)
    if ray.is_initialized():  # not ours: use it as it is, leave it running
        yield _cluster_info(ray, address, workers)
        return
    kwargs: dict[str, Any] = {"logging_level": logging.ERROR, "configure_logging": True}
    if runtime_env:
        kwargs["runtime_env"] = runtime_env
    with contextlib.ExitStack() as stack:
        if address is None:
            from .hygiene import ProcessGuard

            stack.enter_context(ProcessGuard())  # entered first, closed last: after ray.shutdown
        stack.callback(ray.shutdown)
        try:
            with _keep_sigterm_handler():
                if address is None:
                    _start_embedded(ray, workers, kwargs)
                else:
                    ray.init(address=address, **kwargs)
        except ClusterError:
            raise
        except Exception as exc:  # noqa: BLE001 - whatever Ray raises, the command reports one line
            where = "an embedded Ray instance" if address is None else f"the Ray cluster at {address}"
            raise ClusterError(f"cannot start or join {where}: {type(exc).__name__}: {_first_line(exc)}") from None
        yield _cluster_info(ray, address, workers)


def _cluster_info(ray: ModuleType, address: str | None, workers: int | None) -> ClusterInfo:
    """Check ``workers`` against the running instance's CPUs (before any worker starts)."""
    cpus, nodes = _cluster_cpus(ray)
    if cpus < 1:
        raise ClusterError("the Ray cluster has no CPU to run workers on")
    if workers is not None and workers > cpus:
        raise ClusterError(f"--workers {workers} exceeds the {cpus} CPUs of the Ray cluster")
    return ClusterInfo(address=address, workers=workers or cpus, cpus=cpus, nodes=nodes)
