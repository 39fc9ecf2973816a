"""``emberbench submit``, and the Ray options shared by run, verify, stats, compare and store audit.

The ``cluster`` package (and with it ``ray``) is imported inside the commands
that use it, never when this module is imported. Only this CLI layer reads
the environment: ``RAY_ADDRESS`` is the default of ``--address``, and
``EMBERBENCH_CONNECT_TIMEOUT`` (seconds, default 30) bounds how long joining a
cluster or reaching a job server may take before the command fails with one
line (docs/cluster.md).
"""

from __future__ import annotations

import math
import os
import re
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from ..errors import ClusterError
from ._common import fail, user_errors
from .args import parse_address, parse_positive

ADDRESS_ENV_VAR = "RAY_ADDRESS"
CONNECT_TIMEOUT_ENV_VAR = "EMBERBENCH_CONNECT_TIMEOUT"
DEFAULT_CONNECT_TIMEOUT = 30.0

WorkersOption = Annotated[
    Optional[int],  # noqa: UP007 - typer needs Optional on Python 3.11
    typer.Option("--workers", parser=parse_positive, metavar="N",
                 help="Ray workers, at most the CPUs of the Ray instance (default: all of them)."),
]
AddressOption = Annotated[
    Optional[str],  # noqa: UP007
    typer.Option("--address", parser=parse_address, metavar="ADDR", help=f"Join the Ray cluster at ADDR (default: ${ADDRESS_ENV_VAR}, else an "
                                   "embedded Ray instance on this machine)."),
]
ParallelWorkersOption = Annotated[
    Optional[int],  # noqa: UP007
    typer.Option("--workers", parser=parse_positive, metavar="N",
                 help="Replay (and reduce) on N Ray workers; without it or --address, in process."),
]
def parse_gpus(value: object) -> float:
    """``--gpus-per-worker``: a number from 0 to 1024, whole above 1 (Ray's rule).

    Raises:
        typer.BadParameter: anything else.
    """
    from emberbench.cluster.resources import WorkerResources

    text = str(value).strip()
    try:
        number = float(text) if _NUMBER.fullmatch(text) else math.nan
        return WorkerResources(gpus=number).gpus
    except ClusterError as exc:
        raise typer.BadParameter(f"{text[:40]!r}: {str(exc).removeprefix('--gpus-per-worker ')}") from None


def parse_resources(value: object) -> dict[str, float]:
    """``--resources``: a JSON object of custom resource name to quantity per worker.

    Raises:
        typer.BadParameter: not such an object, or a name or quantity Ray would refuse.
    """
    from emberbench.cluster.resources import WorkerResources

    text = str(value)
    try:
        parsed = _small_json_object(text, "--resources")
        return dict(WorkerResources.from_mapping(0.0, parsed).resources)
    except ClusterError as exc:
        raise typer.BadParameter(str(exc).removeprefix("--resources: ")) from None


_NUMBER = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")

GpusOption = Annotated[
    Optional[float],  # noqa: UP007
    typer.Option("--gpus-per-worker", parser=parse_gpus, metavar="G",
                 help="GPUs each Ray episode worker takes (a fraction shares a device; whole numbers above 1). "
                      "Means Ray."),
]
ResourcesOption = Annotated[
    Optional[dict],  # noqa: UP007
    typer.Option("--resources", parser=parse_resources, metavar="JSON",
                 help="Custom Ray resources each episode worker takes, as JSON, e.g. '{\"model_slot\": 1}'. "
                      "Means Ray."),
]

RuntimeEnvOption = Annotated[
    Optional[str],  # noqa: UP007
    typer.Option("--runtime-env", help="Ray runtime_env as JSON, e.g. '{\"py_modules\": [\"./my_policies\"]}'."),
]


def connect_timeout() -> float:
    """Seconds a cluster or job server gets to answer: ``$EMBERBENCH_CONNECT_TIMEOUT``, else 30.

    Raises:
        ClusterError: the variable is not a positive finite number of seconds.
    """
    text = os.environ.get(CONNECT_TIMEOUT_ENV_VAR, "").strip()
    if not text:
        return DEFAULT_CONNECT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= 86_400):
        raise ClusterError(f"{CONNECT_TIMEOUT_ENV_VAR}={text!r} must be a positive number of seconds (at most 86400)")
    return value


def resolve_address(address: str | None) -> str | None:
    """``--address`` if given, else ``$RAY_ADDRESS`` if set and not empty, else None (embedded).

    A cluster address is checked before it is returned: it must be joined
    within :func:`connect_timeout` seconds (a child process tries; see
    :func:`emberbench.cluster.probe.probe_cluster`), so a wrong address is one
    line after a bounded time instead of an endless retry.

    Raises:
        ClusterError: the cluster cannot be joined in time.
    """
    chosen = address or os.environ.get(ADDRESS_ENV_VAR) or None
    if chosen is not None:
        from emberbench.cluster.probe import probe_cluster

        probe_cluster(chosen, connect_timeout())
    return chosen


def replay_on_ray(workers: int | None, address: str | None) -> bool:
    """Whether a verifying command replays on Ray: only when ``--workers`` or ``--address`` asks for it."""
    return workers is not None or address is not None


def parse_runtime_env(text: str | None) -> dict[str, Any] | None:
    """Parse ``--runtime-env`` JSON (an object) under the input policy, or return None.

    Raises:
        ClusterError: the text is over the small-document cap, is not strict
            JSON (too deep, duplicate keys, NaN...) or is not an object.
    """
    return None if text is None else _small_json_object(text, "--runtime-env")


def _small_json_object(text: str, option: str) -> dict[str, Any]:
    """An option's JSON object, parsed under the input policy's small-document caps (ClusterError otherwise)."""
    from ..errors import CanonicalFormError
    from ..io.input_policy import SMALL_JSON, parse_json

    if len(text) > SMALL_JSON.max_bytes:
        raise ClusterError(f"{option} is longer than the cap of {SMALL_JSON.max_bytes} characters")
    try:
        value = parse_json(text, where=option, max_values=SMALL_JSON.max_values)
    except CanonicalFormError as exc:
        raise ClusterError(str(exc)) from None
    if not isinstance(value, dict):
        raise ClusterError(f"{option} must be a JSON object")
    return value


def register(app: typer.Typer) -> None:
    """Add ``submit`` to ``app``."""
    app.command("submit", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(submit)


@user_errors
def submit(
    ctx: typer.Context,
    address: Annotated[str, typer.Option("--address", parser=parse_address, metavar="URL", help="The cluster's job server, e.g. http://HOST:8265.")],
    follow: Annotated[bool, typer.Option("--follow", help="Stream the job's logs until it ends; exit 1 unless it succeeds.")] = False,
    job: Annotated[Optional[str], typer.Option("--job", help="Follow this existing job instead of submitting one.")] = None,  # noqa: UP007
    working_dir: Annotated[Optional[Path], typer.Option("--working-dir", file_okay=False, help="Project folder to upload (default: this installation's).")] = None,  # noqa: UP007
    runtime_env: RuntimeEnvOption = None,
) -> None:
    """Send an emberbench command to a Ray cluster as a Ray Job: submit --address URL -- run ..."""
    from emberbench.cluster import submit as jobs

    timeout = connect_timeout()
    if job is None:
        job = jobs.submit(address, list(ctx.args), working_dir=working_dir, runtime_env=parse_runtime_env(runtime_env),
                          connect_timeout=timeout)
        typer.echo(f"submitted job {job}")
    elif ctx.args:
        raise ClusterError("--job follows an existing job; do not also give a command")
    if follow:
        report = jobs.follow(address, job, write=lambda text: (sys.stdout.write(text), sys.stdout.flush()),
                             connect_timeout=timeout)
        typer.echo(f"job {report.job_id} {report.status}")
        if not report.succeeded:
            raise fail(f"job {report.job_id} ended with status {report.status}")
