"""Small result artifacts for the viewer, report and plot tests (a few public scenarios, few seeds)."""

from __future__ import annotations

from pathlib import Path

from emberbench.results.manifest import EvaluationManifest, ManifestEntry, build_manifest
from emberbench.evaluation.runner import run_evaluation

SCENARIOS = ("v1-pub-01-single-exit-sparse", "v1-pub-04-dead-end-corridor", "v1-pub-12-smouldering-two-exits")
POLICIES = ("stay", "greedy", "fire-aware")


def small_manifest(suite, seeds=(0, 1)) -> EvaluationManifest:  # noqa: ANN001
    """A manifest of :data:`SCENARIOS` under ``seeds``, indices renumbered from 0."""
    full = build_manifest(suite, list(seeds))
    chosen = [e for e in full.episodes if e.scenario_id in SCENARIOS]
    entries = tuple(ManifestEntry(i, e.scenario_id, e.scenario_hash, e.seed) for i, e in enumerate(chosen))
    return EvaluationManifest(full.suite_id, full.suite_version, full.suite_hash, entries)


def make_results(folder: Path, suite, policies=POLICIES) -> dict[str, Path]:  # noqa: ANN001
    """Run each policy on the small manifest; return model id -> result path."""
    manifest = small_manifest(suite)
    out = {}
    for policy in policies:
        path = folder / f"{policy}.json"
        run_evaluation(manifest, suite, policy, policy, path)
        out[policy] = path
    return out


def make_result(folder: Path, suite, policy: str = "greedy", seeds=range(12), model_id: str | None = None) -> Path:  # noqa: ANN001
    """One result of ``policy`` on :data:`SCENARIOS` under ``seeds`` (36 episodes by default)."""
    path = folder / f"{model_id or policy}.json"
    run_evaluation(small_manifest(suite, seeds=tuple(seeds)), suite, policy, model_id or policy, path)
    return path
