"""An evaluation that writes nothing: play every scheduled episode here and return the result object.

:func:`emberbench.evaluation.runner.run_evaluation` is the evaluation of record: it
writes the artifact, resumes, journals into a store and can run on Ray.
:func:`evaluate` is for notebooks, tests and quick experiments: the same
episodes, played in this process, assembled into exactly the bytes the
runner would write, and returned as an :class:`EvaluationResult` (its
``digest`` equals the digest of that file). It keeps every record in
memory, so it suits small manifests; for large ones write to a path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..io.canonical import canonical_bytes, sha256_hex
from ..records.episode import play_episode
from ..results.manifest import EvaluationManifest, check_manifest
from ..records.metrics import EpisodeMetrics
from ..policies.spec import PolicyFactory, closing, resolve_policy
from ..results.artifact import EvaluationResult, artifact_chunks, episode_chunk, parse_result_bytes, result_from_dict
from ..results.model_id import validate_model_id
from ..sim.suite import Suite


def evaluate(manifest: EvaluationManifest, suite: Suite, policy: str | PolicyFactory, model_id: str, *,
             progress: Callable[[int, int], None] | None = None) -> EvaluationResult:
    """Play every episode of ``manifest`` in this process; return the result without writing a file.

    The public :func:`emberbench.evaluate` calls this when it plays in
    process; it also chooses Ray or a store, and draws the progress bar.

    Args:
        manifest: the evaluation manifest (checked against ``suite`` first).
        suite: the suite the manifest targets.
        policy: a policy spec (``"greedy"``, ``"pkg.mod:factory"``...) or a
            no-argument factory returning a fresh policy per episode.
        model_id: the label of this model in the result (1-256 printable characters).
        progress: called as ``progress(done, total)`` before the first
            episode and after each one.

    Returns:
        The result, as :func:`emberbench.results.artifact.load_result` would return
        it for the artifact :func:`~emberbench.evaluation.runner.run_evaluation` writes.

    Raises:
        ManifestError: the manifest does not match the suite.
        ResultError: a bad model id.
        Exception: whatever the policy raises, or InvalidActionError.
    """
    validate_model_id(model_id)
    check_manifest(manifest, suite)
    factory = resolve_policy(policy) if isinstance(policy, str) else policy
    chunks: list[bytes] = []
    played: list[EpisodeMetrics] = []
    total = len(manifest.episodes)
    if progress is not None:
        progress(0, total)
    for entry in manifest.episodes:
        scenario = suite.resolve(entry.scenario_id, entry.scenario_hash)
        with closing(factory()) as the_policy:
            record, metrics = play_episode(scenario, entry.seed, the_policy)
        record_bytes = record.canonical_bytes()
        chunks.append(episode_chunk(entry, record_bytes, sha256_hex(record_bytes), canonical_bytes(metrics.to_dict())))
        played.append(metrics)
        if progress is not None:
            progress(len(played), total)
    raw = b"".join(artifact_chunks(manifest, model_id, chunks))

    def just_played(records: list[dict[str, Any]], _suite: Suite) -> list[EpisodeMetrics]:
        # The records were produced by the simulator a moment ago, in this
        # process: their metrics are the ones just computed, no replay needed.
        return played

    return result_from_dict(parse_result_bytes(raw, where="in-memory result"), suite, raw=raw,
                            where="in-memory result", authenticator=just_played)


__all__ = ["evaluate"]
