"""``emberbench submit``, and the Ray options shared by run, verify, stats, compare and store audit.

The ``cluster`` package (and with it ``ray``) is imported inside the commands
that use it, never when this module is imported. Only this CLI layer reads
the environment: ``RAY_ADDRESS`` is the default of ``--address``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from ..errors import ClusterError
from ._common import fail, user_errors

ADDRESS_ENV_VAR = "RAY_ADDRESS"

WorkersOption = Annotated[
    Optional[int],  # noqa: UP007 - typer needs Optional on Python 3.11
    typer.Option("--workers", min=1, help="Ray workers (default: every CPU of this machine or of the cluster)."),
]
AddressOption = Annotated[
    Optional[str],  # noqa: UP007
    typer.Option("--address", help=f"Join the Ray cluster at ADDR (default: ${ADDRESS_ENV_VAR}, else an "
                                   "embedded Ray instance on this machine)."),
]
ParallelWorkersOption = Annotated[
    Optional[int],  # noqa: UP007
    typer.Option("--workers", min=1, help="Replay (and reduce) on N Ray workers; without it or --address, in process."),
]
RuntimeEnvOption = Annotated[
    Optional[str],  # noqa: UP007
    typer.Option("--runtime-env", help="Ray runtime_env as JSON, e.g. '{\"py_modules\": [\"./my_policies\"]}'."),
]


def resolve_address(address: str | None) -> str | None:
    """``--address`` if given, else ``$RAY_ADDRESS`` if set and not empty, else None (embedded)."""
    if address:
        return address
    return os.environ.get(ADDRESS_ENV_VAR) or None


def replay_on_ray(workers: int | None, address: str | None) -> bool:
    """Whether a verifying command replays on Ray: only when ``--workers`` or ``--address`` asks for it."""
    return workers is not None or address is not None


def parse_runtime_env(text: str | None) -> dict[str, Any] | None:
    """Parse ``--runtime-env`` JSON (an object) or return None.

    Raises:
        ClusterError: the text is not a JSON object.
    """
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ClusterError(f"--runtime-env is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ClusterError("--runtime-env must be a JSON object")
    return value


def register(app: typer.Typer) -> None:
    """Add ``submit`` to ``app``."""
    app.command("submit", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(submit)


@user_errors
def submit(
    ctx: typer.Context,
    address: Annotated[str, typer.Option("--address", help="The cluster's job server, e.g. http://HOST:8265.")],
    follow: Annotated[bool, typer.Option("--follow", help="Stream the job's logs until it ends; exit 1 unless it succeeds.")] = False,
    job: Annotated[Optional[str], typer.Option("--job", help="Follow this existing job instead of submitting one.")] = None,  # noqa: UP007
    working_dir: Annotated[Optional[Path], typer.Option("--working-dir", file_okay=False, help="Project folder to upload (default: this installation's).")] = None,  # noqa: UP007
    runtime_env: RuntimeEnvOption = None,
) -> None:
    """Send an emberbench command to a Ray cluster as a Ray Job: submit --address URL -- run ..."""
    from emberbench.cluster import submit as jobs

    if job is None:
        job = jobs.submit(address, list(ctx.args), working_dir=working_dir, runtime_env=parse_runtime_env(runtime_env))
        typer.echo(f"submitted job {job}")
    elif ctx.args:
        raise ClusterError("--job follows an existing job; do not also give a command")
    if follow:
        report = jobs.follow(address, job, write=lambda text: (sys.stdout.write(text), sys.stdout.flush()))
        typer.echo(f"job {report.job_id} {report.status}")
        if not report.succeeded:
            raise fail(f"job {report.job_id} ended with status {report.status}")
