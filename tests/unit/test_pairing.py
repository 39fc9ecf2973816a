"""Exact pairing of two results on one manifest."""

from __future__ import annotations

import pytest

from emberbench.errors import PairingError
from emberbench.results.manifest import EvaluationManifest, ManifestEntry, build_manifest
from emberbench.results.pairing import load_pair, pair_results
from emberbench.results.artifact import load_result
from emberbench.evaluation.runner import run_evaluation


@pytest.fixture(scope="module")
def manifest(suite):  # noqa: ANN001
    full = build_manifest(suite, [0, 1])
    keep = [e for e in full.episodes if e.scenario_id == "v1-pub-01-single-exit-sparse" or
            e.scenario_id == "v1-pub-10-route-invalidation"]
    return EvaluationManifest(full.suite_id, full.suite_version, full.suite_hash,
                              tuple(ManifestEntry(i, e.scenario_id, e.scenario_hash, e.seed) for i, e in enumerate(keep)))


def _partial(manifest, suite, path, model, keep):  # noqa: ANN001
    """Write an artifact holding only the episodes in ``keep`` (by rewriting a full run)."""
    import json

    from emberbench.io.canonical import canonical_bytes

    run_evaluation(manifest, suite, "greedy", model, path)
    data = json.loads(path.read_bytes())
    data["episodes"] = [e for e in data["episodes"] if e["index"] in keep]
    path.write_bytes(canonical_bytes(data) + b"\n")
    return load_result(path, suite)


def test_pairing_report_fields(tmp_path, suite, manifest) -> None:  # noqa: ANN001
    """paired holds keys both have, in manifest order; each missing list names what one lacks."""
    a = _partial(manifest, suite, tmp_path / "a.json", "A", {0, 1, 3})
    b = _partial(manifest, suite, tmp_path / "b.json", "B", {1, 2, 3})
    report = pair_results(a, b)
    h = manifest.hash
    keys = [e.key(h) for e in manifest.episodes]
    assert report.manifest_hash == h and (report.model_a, report.model_b) == ("A", "B")
    assert report.total_scheduled == 4
    assert report.paired == (keys[1], keys[3]) and report.paired_count == 2
    assert report.missing_from_a == (keys[2],) and report.missing_from_b == (keys[0],)
    d = report.to_dict()
    assert d["paired_count"] == 2 and d["paired"][0] == list(keys[1])


def test_episode_missing_from_both_is_in_both_lists(tmp_path, suite, manifest) -> None:  # noqa: ANN001
    """A scheduled episode neither result has appears in both missing lists."""
    a = _partial(manifest, suite, tmp_path / "a.json", "A", {0})
    b = _partial(manifest, suite, tmp_path / "b.json", "B", {0})
    report = pair_results(a, b)
    assert report.missing_from_a == report.missing_from_b and len(report.missing_from_a) == 3


def test_different_manifests_are_refused_before_replay(tmp_path, suite, manifest, monkeypatch) -> None:  # noqa: ANN001
    """Results of different manifests raise PairingError without authenticating any record."""
    a_path, b_path = tmp_path / "a.json", tmp_path / "b.json"
    run_evaluation(manifest, suite, "stay", "A", a_path)
    run_evaluation(build_manifest(suite, [0]), suite, "stay", "B", b_path)
    import emberbench.results.artifact as results

    def no_replay(*args, **kwargs):  # noqa: ANN002, ANN003
        raise AssertionError("replayed before the manifest comparison")

    monkeypatch.setattr(results, "authenticate_all", no_replay)
    with pytest.raises(PairingError, match="different evaluation manifests"):
        load_pair(a_path, b_path, suite)
