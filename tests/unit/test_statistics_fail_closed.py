"""Statistics never trust a result in memory: every kind of tampering is a StatisticsInputError."""

from __future__ import annotations

import dataclasses

import pytest

from emberbench.errors import EvaluationError, PairingError, StatisticsInputError
from emberbench.results.manifest import EvaluationManifest, ManifestEntry, build_manifest
from emberbench.records.metrics import EpisodeMetrics
from emberbench.results.artifact import load_result
from emberbench.evaluation.runner import run_evaluation
from emberbench.statistics import aggregate_statistics, paired_statistics

IDS = ["v1-pub-01-single-exit-sparse", "v1-pub-10-route-invalidation"]


@pytest.fixture(scope="module")
def results(tmp_path_factory, suite):  # noqa: ANN001
    entries = []
    for sid in IDS:
        for seed in range(3):
            entries.append(ManifestEntry(len(entries), sid, suite.scenario(sid).content_hash, seed))
    manifest = EvaluationManifest(suite.id, suite.version, suite.hash, tuple(entries))
    folder = tmp_path_factory.mktemp("stats")
    out = {}
    for name in ("greedy", "fire-aware"):
        run_evaluation(manifest, suite, name, name, folder / f"{name}.json")
        out[name] = load_result(folder / f"{name}.json", suite)
    return out


def _replace_episode(result, i, **changes):  # noqa: ANN001, ANN003
    episodes = list(result.episodes)
    episodes[i] = dataclasses.replace(episodes[i], **changes)
    return dataclasses.replace(result, episodes=tuple(episodes))


def _tampered(result, suite):  # noqa: ANN001
    e0 = result.episodes[0]
    counts = tuple((k, v + 1 if k == "steps" else v) for k, v in e0.metrics.counts)
    other_seed_record = dataclasses.replace(e0.record, seed=e0.record.seed + 100)
    changed_action = dataclasses.replace(
        e0.record, actions=(("S" if e0.record.actions[0][0] != "S" else "N") + e0.record.actions[0][1:],)
        + e0.record.actions[1:])
    fake_manifest = object.__new__(EvaluationManifest)
    for f in ("suite_id", "suite_version", "suite_hash", "simulator_version", "observation_version",
              "metrics_version", "manifest_version", "hash"):
        object.__setattr__(fake_manifest, f, getattr(result.manifest, f))
    object.__setattr__(fake_manifest, "episodes", result.manifest.episodes[:-1])
    wrong_version = object.__new__(EvaluationManifest)
    for f in ("suite_id", "suite_version", "suite_hash", "observation_version", "metrics_version",
              "manifest_version", "episodes"):
        object.__setattr__(wrong_version, f, getattr(result.manifest, f))
    object.__setattr__(wrong_version, "simulator_version", "0.1.0")
    object.__setattr__(wrong_version, "hash", result.manifest.hash)
    return {
        "stored metrics": _replace_episode(result, 0, metrics=EpisodeMetrics(
            counts, e0.metrics.termination, e0.metrics.exposure_histogram, e0.metrics.exit_counts)),
        "record digest": _replace_episode(result, 0, record_digest="0" * 64),
        "record seed": _replace_episode(result, 0, record=other_seed_record),
        "changed action": _replace_episode(result, 0, record=changed_action),
        "episode order": dataclasses.replace(result, episodes=tuple(reversed(result.episodes))),
        "duplicate episode": dataclasses.replace(result, episodes=(e0, e0) + result.episodes[1:]),
        "manifest differs from its dict": dataclasses.replace(result, manifest=fake_manifest),
        "version mismatch": dataclasses.replace(result, manifest=wrong_version),
        "model id": dataclasses.replace(result, model_id=" bad"),
        "not a result": {"model_id": "x"},
    }


@pytest.mark.parametrize("kind", ["stored metrics", "record digest", "record seed", "changed action",
                                  "episode order", "duplicate episode", "manifest differs from its dict",
                                  "version mismatch", "model id", "not a result"])
def test_aggregate_refuses_tampered_results(results, suite, kind) -> None:  # noqa: ANN001
    """Every tampered in-memory result raises StatisticsInputError (an EvaluationError)."""
    bad = _tampered(results["greedy"], suite)[kind]
    with pytest.raises(StatisticsInputError) as info:
        aggregate_statistics(bad, suite, 100)
    assert isinstance(info.value, EvaluationError)


@pytest.mark.parametrize("kind", ["stored metrics", "changed action", "record digest"])
def test_paired_refuses_tampered_results(results, suite, kind) -> None:  # noqa: ANN001
    """A tampered B (or A) stops the paired statistics too."""
    bad = _tampered(results["fire-aware"], suite)[kind]
    with pytest.raises(StatisticsInputError):
        paired_statistics(results["greedy"], bad, suite, 100)
    with pytest.raises(StatisticsInputError):
        paired_statistics(bad, results["greedy"], suite, 100)


def test_paired_refuses_different_manifests_before_replay(results, suite, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Results of different manifests raise PairingError and replay nothing."""
    other = tmp_path / "o.json"
    run_evaluation(build_manifest(suite, [0]), suite, "stay", "stay", other)
    other_result = load_result(other, suite)
    import emberbench.statistics.verified as verified

    def boom(*a, **k):  # noqa: ANN002, ANN003
        raise AssertionError("re-verification ran before pairing")

    monkeypatch.setattr(verified, "verify_result", boom)
    with pytest.raises(PairingError):
        paired_statistics(results["greedy"], other_result, suite, 100)


def test_verified_statistics_are_deterministic_and_accept_good_input(results, suite) -> None:  # noqa: ANN001
    """Untampered results pass; the same call twice gives identical bytes; resamples range is enforced."""
    a = aggregate_statistics(results["greedy"], suite, 100)
    assert a.to_json_bytes() == aggregate_statistics(results["greedy"], suite, 100).to_json_bytes()
    assert a.to_dict()["result_digest"] == results["greedy"].digest
    p = paired_statistics(results["greedy"], results["fire-aware"], suite, 100)
    q = paired_statistics(results["fire-aware"], results["greedy"], suite, 100)
    for ma, mb in zip(p.to_dict()["overall"]["metrics"], q.to_dict()["overall"]["metrics"]):
        assert [d for _, d in ma["deltas"]] == [-d for _, d in mb["deltas"]]
    with pytest.raises(StatisticsInputError):
        aggregate_statistics(results["greedy"], suite, 99)


def test_model_id_reaches_the_bootstrap_seed_through_the_result_digest(results, suite, tmp_path) -> None:  # noqa: ANN001
    """Two results that differ only in model id have different digests, hence different bootstrap seeds."""
    from emberbench.io.canonical import canonical_bytes

    original = results["greedy"]
    data = original.to_dict()
    data["model_id"] = "greedy-renamed"
    path = tmp_path / "renamed.json"
    path.write_bytes(canonical_bytes(data) + b"\n")
    renamed = load_result(path, suite)
    assert renamed.digest != original.digest
    seeds_a = [m["mean_ci"]["seed"] for m in aggregate_statistics(original, suite, 100).to_dict()["overall"]["metrics"]
               if m["mean_ci"]]
    seeds_b = [m["mean_ci"]["seed"] for m in aggregate_statistics(renamed, suite, 100).to_dict()["overall"]["metrics"]
               if m["mean_ci"]]
    assert seeds_a and len(seeds_a) == len(seeds_b)
    assert all(a != b for a, b in zip(seeds_a, seeds_b))
