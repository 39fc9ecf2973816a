"""The fail-closed entry points: statistics of results that are re-verified first.

:func:`aggregate_statistics` and :func:`paired_statistics` never trust a result
in memory. Before any episode is used they rebuild the manifest from its
dictionary and require equality, run the manifest check, rebuild the whole
result (every structural check), and re-authenticate every record by replay,
requiring the stored metrics to equal the recomputed ones. Any failure is a
:class:`StatisticsInputError`. Results of different manifests are refused by
the pairing before any replay.
"""

from __future__ import annotations

from typing import Any

from ..io.canonical import sha256_hex
from ..errors import EvaluationError, PairingError, ResultError, StatisticsInputError
from ..records.metrics import metric_fractions
from ..sim.suite import Suite
from .aggregate import AggregateStatistics, Mapper, aggregate_from_values
from .inputs import EpisodeValues, StatisticsContext
from .paired import PairedStatistics, paired_from_values

DEFAULT_RESAMPLES = 2000


def verify_result(result: Any, suite: Suite, *, authenticator: Any = None, label: str = "result") -> Any:
    """Re-verify an in-memory result completely; return the freshly rebuilt result.

    The result is first turned into the bytes a file of it would hold
    (:func:`emberbench.results.held.artifact_of`: any part of the wrong type,
    or that cannot be serialized, is refused there), and those bytes are then
    verified exactly as a file's.

    Raises:
        StatisticsInputError: naming the check that failed.
    """
    from ..results.manifest import check_manifest, manifest_from_dict
    from ..results.held import artifact_of
    from ..results.artifact import authenticate_all, result_from_dict

    if not isinstance(suite, Suite):
        raise StatisticsInputError(f"expected a Suite, got {type(suite).__name__}")
    try:
        data, raw = artifact_of(result, label)
        rebuilt_manifest = manifest_from_dict(data["manifest"], where=f"{label} manifest")
        if rebuilt_manifest != result.manifest or rebuilt_manifest.hash != result.manifest.hash:
            raise StatisticsInputError(f"{label}: the manifest rebuilt from its dictionary differs")
        check_manifest(rebuilt_manifest, suite)
        rebuilt = result_from_dict(data, suite, raw=raw, where=label,
                                   authenticator=authenticator or authenticate_all)
    except StatisticsInputError:
        raise
    except EvaluationError as exc:
        raise StatisticsInputError(f"{label}: re-verification failed: {exc}") from None
    if rebuilt.digest != sha256_hex(raw):  # pragma: no cover - result_from_dict defines it so
        raise StatisticsInputError(f"{label}: digest mismatch")
    if result.digest != rebuilt.digest:
        raise StatisticsInputError(f"{label}: its digest is not the SHA-256 of the result's artifact bytes "
                                   f"({rebuilt.digest})")
    return rebuilt


def context_of(manifest: Any, suite: Suite) -> StatisticsContext:
    """The statistics context of a manifest on a suite."""
    return StatisticsContext(
        evaluation_manifest_hash=manifest.hash,
        suite_id=manifest.suite_id,
        suite_version=manifest.suite_version,
        suite_hash=manifest.suite_hash,
        simulator_version=manifest.simulator_version,
        observation_version=manifest.observation_version,
        metrics_version=manifest.metrics_version,
        scheduled=tuple((e.index, e.scenario_id, e.scenario_hash, e.seed) for e in manifest.episodes),
        scenario_order=tuple(s.id for s in suite.scenarios),
        families=tuple((f.id, f.scenarios) for f in suite.families),
    )


def episode_values(result: Any) -> list[EpisodeValues]:
    """The exact per-episode values of a verified result."""
    out = []
    for e in result.episodes:
        m = e.metrics
        out.append(EpisodeValues(
            index=e.index, scenario_id=e.entry.scenario_id, termination=m.termination,
            evacuated=m.count("evacuated"), casualties=m.count("casualties"), stranded=m.count("stranded"),
            values=metric_fractions(m),
        ))
    return out


def aggregate_statistics(result: Any, suite: Suite, resamples: int = DEFAULT_RESAMPLES, *,
                         authenticator: Any = None, mapper: Mapper | None = None) -> AggregateStatistics:
    """Aggregate statistics of one result, after complete re-verification.

    ``authenticator`` replays the records and ``mapper`` computes the
    (group, metric) jobs; both run in process by default, and the cluster
    package passes parallel ones that give the same bytes.
    """
    verified = verify_result(result, suite, authenticator=authenticator)
    return aggregate_from_values(context_of(verified.manifest, suite), verified.model_id, verified.digest,
                                 episode_values(verified), resamples, mapper=mapper)


def paired_statistics(result_a: Any, result_b: Any, suite: Suite, resamples: int = DEFAULT_RESAMPLES, *,
                      authenticator: Any = None, mapper: Mapper | None = None) -> PairedStatistics:
    """Paired A - B statistics on identical episodes, after pairing and complete re-verification."""
    from ..results.pairing import pair_results

    try:
        pair_results(result_a, result_b)  # different manifests: refused before any replay
    except PairingError:
        raise
    except ResultError as exc:  # a malformed result in memory
        raise StatisticsInputError(str(exc)) from None
    a = verify_result(result_a, suite, authenticator=authenticator, label="result A")
    b = verify_result(result_b, suite, authenticator=authenticator, label="result B")
    return paired_from_values(context_of(a.manifest, suite), a.model_id, b.model_id, a.digest, b.digest,
                              episode_values(a), episode_values(b), resamples, mapper=mapper)
