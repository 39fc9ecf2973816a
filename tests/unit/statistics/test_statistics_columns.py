"""Compact columns and streamed artifacts: the same statistics, the same bytes, far less memory."""

from __future__ import annotations

import pickle
import random
from fractions import Fraction

import numpy as np
import pytest

from emberbench.io.canonical import canonical_bytes
from emberbench.records.metric_defs import METRIC_NAMES
from emberbench.statistics import (
    DeltaColumn,
    EpisodeValues,
    TableBuilder,
    aggregate_from_table,
    aggregate_from_values,
    describe,
    paired_from_values,
    write_artifact,
)
from emberbench.statistics.exact import ExactVector
from stats_factory import DIGEST_A, DIGEST_B, all_episodes, make_ctx
from stats_reference import ref_describe
from tests.conftest import ROOT

GOLDEN = ROOT / "tests" / "golden"


def test_wide_values_fall_back_to_python_integers_with_the_same_statistics() -> None:
    """Values beyond int64 make an object column; the exact statistics still equal plain Fraction arithmetic."""
    rng = random.Random(4)
    values = [Fraction(rng.randint(-2**70, 2**70), rng.randint(1, 2**66)) for _ in range(40)]
    vector = ExactVector.from_parts([v.numerator for v in values], [v.denominator for v in values])
    assert vector.numerators.dtype == object
    got, want = describe(vector), ref_describe(values)
    assert (got.mean, got.variance, got.min, got.max, got.median) == (
        want["mean"], want["variance"], want["min"], want["max"], want["median"])


def test_builder_keeps_int64_columns_and_switches_one_column_when_needed() -> None:
    """A column stays int64 until a value does not fit; only that column changes form; order is by index."""
    builder = TableBuilder()
    base = {name: Fraction(1, 3) for name in METRIC_NAMES}
    builder.add(5, "s1", "all_resolved", 1, 0, 0, base)
    builder.add(2, "s2", "max_steps", 0, 1, 1, {**base, "mean_exposure": Fraction(2**80, 3), "blocked_rate": None})
    table = builder.build()
    assert table.indices.tolist() == [2, 5]
    exposure = table.columns[METRIC_NAMES.index("mean_exposure")]
    assert exposure.numerators.dtype == object and exposure.numerators.tolist() == [2**80, 1]
    assert table.columns[0].numerators.dtype == np.int64
    assert table.columns[METRIC_NAMES.index("blocked_rate")].defined.tolist() == [False, True]
    assert table.scenario_names[table.scenario_codes[0]] == "s2" and table.resolved.tolist() == [False, True]


def test_an_index_added_twice_is_refused() -> None:
    """A repeated index is an input error, as for the list API."""
    from emberbench.errors import StatisticsInputError

    builder = TableBuilder()
    values = {name: None for name in METRIC_NAMES}
    builder.add(1, "s", "all_resolved", 0, 0, 0, values)
    builder.add(1, "s", "all_resolved", 0, 0, 0, values)
    with pytest.raises(StatisticsInputError, match="episode index 1 appears twice"):
        builder.build()


def test_table_and_values_give_the_same_artifact() -> None:
    """An EpisodeTable filled one episode at a time gives the bytes of the list API."""
    ctx = make_ctx(scenarios=(("s1", 9), ("s2", 7)))
    episodes = all_episodes(ctx, skip=(3,))
    builder = TableBuilder()
    for e in sorted(episodes, key=lambda e: e.index):
        builder.add(e.index, e.scenario_id, e.termination, e.evacuated, e.casualties, e.stranded, e.values)
    table = aggregate_from_table(ctx, "m", DIGEST_A, builder.build(), resamples=150)
    assert table.to_json_bytes() == aggregate_from_values(ctx, "m", DIGEST_A, episodes, resamples=150).to_json_bytes()


@pytest.fixture(scope="module")
def paired():
    """A paired artifact of the factory's two results (scenario hashes made real SHA-256 digests)."""
    import dataclasses
    import hashlib

    ctx = make_ctx(scenarios=(("s1", 9), ("s2", 7)))
    ctx = dataclasses.replace(ctx, scheduled=tuple(
        (i, sid, hashlib.sha256(h.encode()).hexdigest(), seed) for i, sid, h, seed in ctx.scheduled))
    return paired_from_values(ctx, "a", "b", DIGEST_A, DIGEST_B, all_episodes(ctx, skip=(3,)),
                              all_episodes(ctx, shift=5, skip=(10,)), resamples=150)


def test_group_deltas_are_views_of_one_column_per_metric(paired) -> None:  # noqa: ANN001
    """Every group's deltas of a metric share the arrays of the overall column; only selected rows are kept."""
    overall = paired.overall.metrics[0].deltas
    scenario = paired.scenarios[0].metrics[0].deltas
    assert isinstance(overall, DeltaColumn) and isinstance(scenario, DeltaColumn)
    assert overall._arrays is scenario._arrays
    assert list(scenario) == [pair for pair in overall if pair[0] in paired.scenarios[0].paired_indices]
    clone = pickle.loads(pickle.dumps(scenario))
    assert clone == scenario and clone[0] == scenario[0] and clone[1:3] == list(scenario)[1:3]


def test_artifacts_stream_to_the_same_bytes_and_digest(paired, tmp_path) -> None:  # noqa: ANN001
    """The pieces written one group and metric at a time are exactly the canonical JSON of the whole form."""
    whole = canonical_bytes(paired.to_dict())
    assert b"".join(paired.json_chunks()) == whole
    assert write_artifact(paired, tmp_path / "p.json") == paired.digest()
    assert (tmp_path / "p.json").read_bytes() == whole + b"\n"
    table = paired.table_form()
    assert all(m["deltas"] == [] for m in table["overall"]["metrics"])
    assert table["overall"]["metrics"][0]["statistics"] == paired.to_dict()["overall"]["metrics"][0]["statistics"]


def test_golden_statistics_artifacts_are_written_byte_for_byte(tmp_path, suite) -> None:  # noqa: ANN001
    """Statistics of freshly run results equal the golden aggregate and paired artifacts (made before streaming)."""
    from emberbench.results.manifest import EvaluationManifest, ManifestEntry
    from emberbench.evaluation.runner import run_evaluation
    from emberbench.statistics import aggregate_artifact, paired_artifacts

    small = ["v1-pub-01-single-exit-sparse", "v1-pub-12-smouldering-two-exits"]
    entries = []
    for seed in range(5):
        for sid in small:
            entries.append(ManifestEntry(len(entries), sid, suite.scenario(sid).content_hash, seed))
    manifest = EvaluationManifest(suite.id, suite.version, suite.hash, tuple(entries))
    for policy in ("greedy", "stay"):
        run_evaluation(manifest, suite, policy, f"golden-{policy}", tmp_path / f"{policy}.json")
    aggregate = aggregate_artifact(tmp_path / "greedy.json", suite, 100)
    compared = paired_artifacts(tmp_path / "greedy.json", tmp_path / "stay.json", suite, 100)
    assert aggregate.to_json_bytes() == (GOLDEN / "statistics-aggregate-1.0.json").read_bytes()
    assert compared.to_json_bytes() == (GOLDEN / "statistics-paired-1.0.json").read_bytes()


def test_episode_values_still_take_fractions() -> None:
    """The list API keeps its Fraction-valued EpisodeValues."""
    ctx = make_ctx()
    e = all_episodes(ctx)[0]
    assert isinstance(e, EpisodeValues) and isinstance(e.values["evacuated_rate"], Fraction)
