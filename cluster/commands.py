"""One call per CLI command: open a Ray session, run the core's function with Ray parts, close.

Each function here is the Ray variant of one core entry point and writes or
returns exactly what the core would: :func:`run_on_ray` is
:func:`emberbench.runner.run_evaluation` with a :class:`~cluster.executor.RayExecutor`;
:func:`verify_on_ray` and :func:`audit_on_ray` use a
:class:`~cluster.auth.RayAuthenticator`; :func:`aggregate_on_ray` and
:func:`paired_on_ray` also use a :class:`~cluster.reducer.RayMapper`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from emberbench.manifest import EvaluationManifest
from emberbench.runner import Progress, RunSummary, claim_output, run_evaluation
from emberbench.suite import Suite

from .auth import RayAuthenticator
from .executor import RayExecutor
from .reducer import RayMapper
from .session import ray_session


def run_on_ray(manifest: EvaluationManifest, suite: Suite, policy: str, model_id: str, out: str | Path, *,
               store: Any = None, workers: int | None = None, address: str | None = None,
               runtime_env: dict[str, Any] | None = None, agent_timeout: float | None = None,
               agent_log: str | None = None, resume: bool = True, progress: Progress | None = None, checkpoint_every: int = 0,
               checkpoint_seconds: float = 60.0) -> RunSummary:
    """Run an evaluation with episode workers on Ray (embedded, or the cluster at ``address``).

    The output is locked before Ray starts; resume authentication replays on
    the episode workers (they hold every CPU the run was given).

    Args:
        store: the object store; every worker reopens it from its locator
            (an S3 URL, or a folder mounted at the same path on every node);
            None sends records back to the coordinator instead.
        workers: episode workers; default: every CPU.
        agent_log: folder for external agents' stderr logs (the same path on
            every node), or None.
        Other arguments: as :func:`emberbench.runner.run_evaluation`.
    """
    # The output is claimed before Ray starts, so a second run on it is refused at once.
    with claim_output(out) as lock, ray_session(address, workers=workers, runtime_env=runtime_env) as info:
        store_root = None if store is None else store.locator
        with RayExecutor(suite, policy, workers=info.workers, store_root=store_root,
                         agent_timeout=agent_timeout, agent_log=agent_log) as executor:
            return run_evaluation(manifest, suite, policy, model_id, out, resume=resume, executor=executor,
                                  store=store, progress=progress, checkpoint_every=checkpoint_every,
                                  checkpoint_seconds=checkpoint_seconds, policy_spec=policy, output_lock=lock)


def load_on_ray(path: str | Path, suite: Suite, authenticator: RayAuthenticator) -> Any:
    """:func:`emberbench.results.load_result` with replay on Ray, started while the loader checks structure.

    The same two steps as ``load_result`` (read, then ``result_from_dict``),
    with the first replay tasks prefetched in between.
    """
    from emberbench.results import read_result_manifest, result_from_dict

    _, _, data, raw = read_result_manifest(path)
    episodes = data.get("episodes")
    if isinstance(episodes, list) and all(isinstance(e, dict) for e in episodes):
        authenticator.prefetch([e.get("record") for e in episodes], suite)
    return result_from_dict(data, suite, raw=raw, where=str(path), authenticator=authenticator)


def verify_on_ray(path: str | Path, suite: Suite, *, workers: int | None = None, address: str | None = None) -> Any:
    """:func:`emberbench.results.load_result` with records replayed in parallel."""
    with ray_session(address, workers=workers) as info, RayAuthenticator(info.workers) as authenticator:
        return load_on_ray(path, suite, authenticator)


def audit_on_ray(store: Any, suite: Suite, *, workers: int | None = None, address: str | None = None) -> list[Any]:
    """:func:`emberbench.audit.audit_store` with records replayed in parallel."""
    from emberbench.audit import audit_store

    with ray_session(address, workers=workers) as info, RayAuthenticator(info.workers) as authenticator:
        return audit_store(store, suite, authenticator=authenticator)


def aggregate_on_ray(path: str | Path, suite: Suite, resamples: int, *, workers: int | None = None,
                     address: str | None = None) -> Any:
    """Load (with parallel replay) and aggregate one result, reducer on Ray."""
    from emberbench.statistics import aggregate_statistics

    with ray_session(address, workers=workers) as info, RayAuthenticator(info.workers) as authenticator:
        result = load_on_ray(path, suite, authenticator)
        return aggregate_statistics(result, suite, resamples, authenticator=authenticator,
                                    mapper=RayMapper(info.workers))


def paired_on_ray(path_a: str | Path, path_b: str | Path, suite: Suite, resamples: int, *,
                  workers: int | None = None, address: str | None = None) -> Any:
    """Load and pair two results (with parallel replay), paired statistics on Ray."""
    from emberbench.pairing import load_pair
    from emberbench.statistics import paired_statistics

    with ray_session(address, workers=workers) as info, RayAuthenticator(info.workers) as authenticator:
        result_a, result_b = load_pair(path_a, path_b, suite, authenticator=authenticator)
        return paired_statistics(result_a, result_b, suite, resamples, authenticator=authenticator,
                                 mapper=RayMapper(info.workers))


@contextlib.contextmanager
def ray_mapper(address: str | None = None, *, workers: int | None = None,
               tasks_per_worker: int = 8) -> Iterator[RayMapper]:
    """A :class:`RayMapper` on a Ray session that lasts for the ``with`` block.

    For the generator's jobs (one calibration per scenario, milliseconds to
    seconds each): more tasks per worker than the statistics use, so that
    unequal scenarios still spread evenly.
    """
    with ray_session(address, workers=workers) as info:
        yield RayMapper(info.workers, tasks_per_worker=tasks_per_worker)
