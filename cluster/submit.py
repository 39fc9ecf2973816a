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
"""

from __future__ import annotations

import asyncio
import shlex
import sys
from collections.abc import Callable, Sequence
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


def _client_errors() -> tuple[type[BaseException], ...]:
    """What the Job Submission client raises for an unreachable server or a refused token."""
    from ray.exceptions import AuthenticationError

    return (AuthenticationError, ConnectionError, RuntimeError, ValueError)


def _client(address: str) -> Any:
    import_ray()
    from ray.job_submission import JobSubmissionClient

    try:
        return JobSubmissionClient(address)
    except _client_errors() as exc:
        raise ClusterError(f"cannot reach the Ray job server at {address}: {exc}") from None


def job_runtime_env(working_dir: Path, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The runtime environment of a submitted job: the project as ``working_dir``, plus ``extra``."""
    if not (working_dir / "emberbench").is_dir():
        raise ClusterError(f"{working_dir} does not hold the emberbench package; pass the project folder")
    env: dict[str, Any] = {"working_dir": str(working_dir), "excludes": list(EXCLUDES)}
    for key, value in (extra or {}).items():
        env[key] = [*EXCLUDES, *value] if key == "excludes" else value
    return env


def submit(address: str, args: Sequence[str], *, working_dir: Path | None = None,
           runtime_env: dict[str, Any] | None = None) -> str:
    """Submit ``emberbench <args>`` as a Ray Job; return its submission id.

    Raises:
        ClusterError: no command given, or the job server refused or is unreachable.
    """
    if not args:
        raise ClusterError("nothing to submit: give the command after --, e.g. submit -- run --manifest ...")
    env = job_runtime_env(working_dir or project_root(), runtime_env)
    client = _client(address)
    try:
        return client.submit_job(entrypoint=f"{ENTRYPOINT} {shlex.join(args)}", runtime_env=env)
    except _client_errors() as exc:
        raise ClusterError(f"job submission to {address} failed: {exc}") from None


def follow(address: str, job_id: str, *, write: Callable[[str], Any] = sys.stdout.write) -> JobReport:
    """Stream a job's logs until it ends; return its final status.

    Raises:
        ClusterError: the job or the job server cannot be reached.
    """
    client = _client(address)

    async def tail() -> None:
        async for lines in client.tail_job_logs(job_id):
            write(lines)

    try:
        asyncio.run(tail())
        status = str(client.get_job_status(job_id).value)
    except _client_errors() as exc:
        raise ClusterError(f"cannot follow job {job_id} at {address}: {exc}") from None
    return JobReport(job_id=job_id, status=status)


def status(address: str, job_id: str) -> JobReport:
    """The current status of a job."""
    client = _client(address)
    try:
        return JobReport(job_id=job_id, status=str(client.get_job_status(job_id).value))
    except _client_errors() as exc:
        raise ClusterError(f"cannot get the status of job {job_id} at {address}: {exc}") from None
