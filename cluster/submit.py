"""Sending an ``emberbench`` command to a Ray cluster as a Ray Job, and following it.

The job's entrypoint is ``python -m emberbench.cli.main <args>``, run by the
cluster's job manager on the head node with the project folder uploaded as
``working_dir`` (so the cluster runs exactly the code that was submitted).
Inside the job, Ray sets ``RAY_ADDRESS``; ``emberbench run`` joins that cluster
instead of starting an embedded instance. Paths in the arguments (manifest,
``--out``, ``--store``) are read on the cluster: use absolute paths on the
storage every node mounts (docs/cluster.md).

The Job Submission client authenticates with the same token as every Ray
process (``RAY_AUTH_MODE=token`` and ``RAY_AUTH_TOKEN``, ``RAY_AUTH_TOKEN_PATH``
or ``~/.ray/auth_token``).

The address is the job server's URL (``http://HOST:8265``; a bare
``HOST:PORT`` means ``http://HOST:PORT``). Reaching it is bounded:
``connect_timeout`` seconds, after which the command fails with one line
(Ray's client would otherwise take a bare address for a cluster's GCS and
retry it for about forty seconds before a traceback). Every failure of the
client is one :class:`ClusterError` line.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shlex
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from emberbench.errors import ClusterError

from .session import import_ray

ENTRYPOINT = "python -m emberbench.cli.main"
EXCLUDES = [".venv", ".git", ".emberbench", "demo-out", ".pytest_cache", ".hypothesis", "**/__pycache__",
            "*.egg-info", "build", "dist"]
"""Never uploaded: environments, caches, local stores and outputs."""
TERMINAL = frozenset({"SUCCEEDED", "FAILED", "STOPPED"})
DEFAULT_CONNECT_TIMEOUT = 30.0


def project_root() -> Path:
    """The folder holding the ``emberbench`` package (the default ``working_dir``)."""
    import emberbench

    return Path(emberbench.__file__).resolve().parents[1]


@dataclass(frozen=True, slots=True)
class JobReport:
    """A submitted job.

    Attributes:
        job_id: the submission id Ray assigned.
        status: the last status seen (``PENDING``, ``RUNNING``, ``SUCCEEDED``...).
    """

    job_id: str
    status: str

    @property
    def succeeded(self) -> bool:
        """True when the job finished successfully."""
        return self.status == "SUCCEEDED"


def job_server_url(address: str) -> str:
    """The job server's URL: ``address`` itself if it is http(s), ``http://`` + it if it has no scheme.

    Raises:
        ClusterError: another scheme (``ray://``, a GCS ``auto``...).
    """
    url = address.strip()
    if "://" not in url:
        if not url or url == "auto":
            raise ClusterError(f"--address {address!r} is not a job server: give http://HOST:PORT (the dashboard port, "
                               "8265 by default)")
        url = f"http://{url}"
    if url.split("://", 1)[0].lower() not in ("http", "https"):
        raise ClusterError(f"--address {address!r} is not a job server: give http://HOST:PORT (the dashboard port, "
                           "8265 by default)")
    return url.rstrip("/")


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__


def _within(seconds: float, what: str, call: Callable[[], Any]) -> Any:
    """Run ``call`` in a daemon thread; its result, its error as one ClusterError line, or a timeout.

    A call still blocked after ``seconds`` is abandoned (its thread cannot
    outlive the process, which is about to report the failure and exit).
    """
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=run, name="ray-job-client", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise ClusterError(f"{what}: no answer within {seconds:g} s (EMBERBENCH_CONNECT_TIMEOUT sets how long "
                           "to wait)")
    if "error" in box:
        error = box["error"]
        if isinstance(error, ClusterError):
            raise error
        if not isinstance(error, Exception):
            raise error
        raise ClusterError(f"{what}: {_one_line(error)}") from None
    return box["value"]


SUBMIT_EXTRA_HINT = "pip install 'emberbench[submit]'"


def _client(address: str, connect_timeout: float) -> Any:
    import_ray()
    try:
        from ray.job_submission import JobSubmissionClient
    except ImportError as exc:
        raise ClusterError(f"submit needs Ray's job-submission client ({_one_line(exc)}): "
                           f"{SUBMIT_EXTRA_HINT}") from None

    url = job_server_url(address)

    def connect() -> Any:
        try:
            with _quiet_ray_logs():
                return JobSubmissionClient(url)
        except ImportError as exc:  # the client imports its dashboard packages lazily too
            raise ClusterError(f"submit needs Ray's job-submission client ({_one_line(exc)}): "
                               f"{SUBMIT_EXTRA_HINT}") from None

    return _within(connect_timeout, f"cannot reach the Ray job server at {url}", connect)


def job_runtime_env(working_dir: Path, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The runtime environment of a submitted job: the project as ``working_dir``, plus ``extra``."""
    if not (working_dir / "emberbench").is_dir():
        raise ClusterError(f"{working_dir} does not hold the emberbench package; pass the project folder")
    env: dict[str, Any] = {"working_dir": str(working_dir), "excludes": list(EXCLUDES)}
    for key, value in (extra or {}).items():
        env[key] = [*EXCLUDES, *value] if key == "excludes" else value
    return env


def submit(address: str, args: Sequence[str], *, working_dir: Path | None = None,
           runtime_env: dict[str, Any] | None = None, connect_timeout: float = DEFAULT_CONNECT_TIMEOUT) -> str:
    """Submit ``emberbench <args>`` as a Ray Job; return its submission id.

    Raises:
        ClusterError: no command given, or the job server refused, failed or
            did not answer within ``connect_timeout`` seconds.
    """
    if not args:
        raise ClusterError("nothing to submit: give the command after --, e.g. submit -- run --manifest ...")
    env = job_runtime_env(working_dir or project_root(), runtime_env)
    client = _client(address, connect_timeout)
    try:
        with _quiet_ray_logs():  # packing and uploading log to stderr, which holds only the command's error
            return client.submit_job(entrypoint=f"{ENTRYPOINT} {shlex.join(args)}", runtime_env=env)
    except Exception as exc:  # noqa: BLE001 - whatever the client raises is one line
        raise ClusterError(f"job submission to {address} failed: {_one_line(exc)}") from None


@contextlib.contextmanager
def _quiet_ray_logs() -> Iterator[None]:
    """Keep Ray's client-side log records below ERROR off stderr (the working folder's packing and upload).

    ``submit`` reports on stdout (the job id, the job's own output) and, on
    failure, one line on stderr; Ray's INFO and WARNING records about
    packing the working folder are neither.
    """
    # Ray's SDK modules set their loggers' own levels, so the records are held back where they are
    # written out: at the handlers Ray installs on its "ray" logger (and the root's, if they propagate).
    handlers = [*logging.getLogger("ray").handlers, *logging.getLogger().handlers]
    levels = [handler.level for handler in handlers]
    for handler in handlers:
        handler.setLevel(max(handler.level, logging.ERROR))
    try:
        yield
    finally:
        for handler, level in zip(handlers, levels):
            handler.setLevel(level)


def follow(address: str, job_id: str, *, write: Callable[[str], Any] = sys.stdout.write,
           connect_timeout: float = DEFAULT_CONNECT_TIMEOUT) -> JobReport:
    """Stream a job's logs until it ends; return its final status.

    Raises:
        ClusterError: the job or the job server cannot be reached.
    """
    client = _client(address, connect_timeout)

    async def tail() -> None:
        async for lines in client.tail_job_logs(job_id):
            write(lines)

    try:
        with _quiet_ray_logs():
            asyncio.run(tail())
        status = str(client.get_job_status(job_id).value)
    except Exception as exc:  # noqa: BLE001 - whatever the client raises is one line
        raise ClusterError(f"cannot follow job {job_id} at {address}: {_one_line(exc)}") from None
    return JobReport(job_id=job_id, status=status)


def status(address: str, job_id: str, *, connect_timeout: float = DEFAULT_CONNECT_TIMEOUT) -> JobReport:
    """The current status of a job."""
    client = _client(address, connect_timeout)
    try:
        return JobReport(job_id=job_id, status=str(client.get_job_status(job_id).value))
    except Exception as exc:  # noqa: BLE001 - whatever the client raises is one line
        raise ClusterError(f"cannot get the status of job {job_id} at {address}: {_one_line(exc)}") from None
