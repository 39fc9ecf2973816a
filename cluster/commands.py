"""One call per CLI command: open a Ray session, run the core's function with Ray parts, close.

Each function here is the Ray variant of one core entry point and writes or
returns exactly what the core would: :func:`run_on_ray` is
:func:`emberbench.evaluation.runner.run_evaluation` with a :class:`~cluster.executor.RayExecutor`;
:func:`verify_on_ray` and :func:`audit_on_ray` stream the artifact and
replay its records with a :class:`~cluster.auth.RayAuthenticator`;
:func:`aggregate_on_ray` and :func:`paired_on_ray` also run the statistics'
jobs with a :class:`~cluster.reducer.RayMapper`. The driver never holds more
than the header, the records in flight and the compact metric values.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from emberbench.evaluation.drive import ONE_AT_A_TIME, DriveOptions
from emberbench.results.manifest import EvaluationManifest
from emberbench.evaluation.runner import Progress, RunSummary, check_before_start, claim_output, run_evaluation
from emberbench.sim.suite import Suite

from .auth import RayAuthenticator
from .executor import RayExecutor
from .reducer import RayMapper
from .resources import NO_EXTRA, WorkerResources
from .session import check_embedded_workers, ray_session


def run_on_ray(manifest: EvaluationManifest, suite: Suite, policy: str, model_id: str, out: str | Path, *,
               store: Any = None, workers: int | None = None, address: str | None = None,
               runtime_env: dict[str, Any] | None = None, agent_timeout: float | None = None,
               agent_log: str | None = None, resume: bool = True, progress: Progress | None = None, checkpoint_every: int = 0,
               checkpoint_seconds: float = 60.0, drive: DriveOptions = ONE_AT_A_TIME,
               resources: WorkerResources | None = None, tags: tuple[str, ...] = ()) -> RunSummary:
    """Run an evaluation with episode workers on Ray (embedded, or the cluster at ``address``).

    The output is locked before Ray starts; resume authentication replays on
    the episode workers (they hold every CPU the run was given).

    Args:
        store: the object store; every worker reopens it from its locator
            (an S3 URL, or a folder mounted at the same path on every node);
            None sends records back to the coordinator instead.
        workers: episode workers; default: every CPU (fewer when ``resources``
            allow fewer, see :meth:`~cluster.resources.WorkerResources.fit_workers`).
        agent_log: folder for external agents' stderr logs (the same path on
            every node), or None.
        drive: how each worker drives the policy (a batch size or a concurrency).
        resources: GPUs and custom resources of each worker (None: one CPU each, nothing else).
        Other arguments: as :func:`emberbench.evaluation.runner.run_evaluation`.
    """
    # The output is claimed before Ray starts, so a second run on it is refused at once; so is a resume
    # under another policy (the output's sidecar, the journal header), before Ray's slow start.
    check_embedded_workers(address, workers)
    with claim_output(out) as lock:
        check_before_start(manifest, model_id, out, policy, store=store, resume=resume)
        with ray_executor(suite, policy, store=store, workers=workers, address=address, runtime_env=runtime_env,
                          agent_timeout=agent_timeout, agent_log=agent_log, drive=drive,
                          resources=resources) as executor:
            return run_evaluation(manifest, suite, policy, model_id, out, resume=resume, executor=executor,
                                  store=store, progress=progress, checkpoint_every=checkpoint_every,
                                  checkpoint_seconds=checkpoint_seconds, policy_spec=policy, output_lock=lock,
                                  tags=tags)


@contextlib.contextmanager
def ray_executor(suite: Suite, policy: str, *, store: Any = None, workers: int | None = None,
                 address: str | None = None, runtime_env: dict[str, Any] | None = None,
                 agent_timeout: float | None = None, agent_log: str | None = None,
                 drive: DriveOptions = ONE_AT_A_TIME,
                 resources: WorkerResources | None = None) -> Iterator[RayExecutor]:
    """Open a Ray session and its episode workers; close both on exit (arguments as :func:`run_on_ray`).

    Given to :func:`emberbench.evaluation.runner.run_evaluation` as ``executor_for``,
    Ray starts only once the run knows it has work for it.
    """
    with ray_session(address, workers=workers, runtime_env=runtime_env) as info:
        store_root = None if store is None else store.locator
        resources = resources or NO_EXTRA
        count = info.workers
        if resources != NO_EXTRA:
            import ray

            count = resources.fit_workers(workers, info.workers, ray.cluster_resources())
        with RayExecutor(suite, policy, workers=count, store_root=store_root, store=store,
                         agent_timeout=agent_timeout, agent_log=agent_log, drive=drive, resources=resources) as executor:
            yield executor


def load_on_ray(path: str | Path, suite: Suite, authenticator: RayAuthenticator) -> Any:
    """:func:`emberbench.results.artifact.load_result` with replay on Ray (the result is held in memory).

    Commands use :func:`verify_on_ray`, which keeps no episode.
    """
    from emberbench.results.artifact import load_result

    return load_result(path, suite, authenticator=authenticator)


def verify_on_ray(path: str | Path, suite: Suite, *, workers: int | None = None, address: str | None = None) -> Any:
    """:func:`emberbench.results.stream.verify_artifact` with records replayed in parallel (streaming)."""
    from emberbench.results.stream import verify_artifact

    with ray_session(address, workers=workers) as info, RayAuthenticator(info.workers) as authenticator:
        return verify_artifact(path, suite, replayer=authenticator)


def audit_on_ray(store: Any, suite: Suite, *, workers: int | None = None, address: str | None = None) -> Any:
    """:func:`emberbench.runs.audit.audit_store` with records replayed in parallel."""
    from emberbench.runs.audit import audit_store

    with ray_session(address, workers=workers) as info, RayAuthenticator(info.workers) as authenticator:
        return audit_store(store, suite, authenticator=authenticator)


def verify_run_on_ray(store: Any, short_id: str, suite: Suite, *, workers: int | None = None,
                      address: str | None = None, keyring: Any = None, record: bool = True) -> Any:
    """:func:`emberbench.runs.verify.verify_run` with records replayed in parallel."""
    from emberbench.runs.verify import verify_run

    with ray_session(address, workers=workers) as info, RayAuthenticator(info.workers) as authenticator:
        return verify_run(store, short_id, suite, authenticator=authenticator, keyring=keyring, record=record)


def aggregate_on_ray(path: str | Path, suite: Suite, resamples: int, *, workers: int | None = None,
                     address: str | None = None) -> Any:
    """:func:`emberbench.statistics.aggregate_artifact`: replay and reducer on Ray, each record replayed once."""
    from emberbench.statistics import aggregate_artifact

    with ray_session(address, workers=workers) as info, RayAuthenticator(info.workers) as authenticator:
        return aggregate_artifact(path, suite, resamples, replayer=authenticator, mapper=RayMapper(info.workers))


def paired_on_ray(path_a: str | Path, path_b: str | Path, suite: Suite, resamples: int, *,
                  workers: int | None = None, address: str | None = None) -> Any:
    """:func:`emberbench.statistics.paired_artifacts`: manifests compared first, replay and reducer on Ray."""
    from emberbench.statistics import paired_artifacts

    with ray_session(address, workers=workers) as info, RayAuthenticator(info.workers) as authenticator:
        return paired_artifacts(path_a, path_b, suite, resamples, replayer=authenticator,
                                mapper=RayMapper(info.workers))


@contextlib.contextmanager
def ray_mapper(address: str | None = None, *, workers: int | None = None,
               jobs_per_task: int = 3) -> Iterator[RayMapper]:
    """A :class:`RayMapper` on a Ray session that lasts for the ``with`` block.

    For the generator's calibration jobs (one scenario under one seed, a few
    milliseconds to a second each): three jobs per task, one scenario under
    the default three seeds. One job per task spread unequal scenarios no
    better and spent 10-15 % more CPU on Ray's per-task work on a 2-core
    machine; the mapper's refill on any finished task keeps the tail short.
    """
    with ray_session(address, workers=workers) as info:
        yield RayMapper(info.workers, jobs_per_task=jobs_per_task)
