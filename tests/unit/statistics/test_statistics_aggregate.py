"""Aggregate statistics: groups, robustness, missing/undefined accounting, layout, seeds."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from emberbench.io.canonical import canonical_bytes, digest
from emberbench.records.metric_defs import METRIC_NAMES, METRICS
from emberbench.statistics import aggregate_from_values, describe
from stats_factory import DIGEST_A, DIGEST_B, MANIFEST, all_episodes, make_ctx, metric_values
from stats_reference import ref_interval, ref_seed

MISSING = (4, 7)


@pytest.fixture(scope="module")
def ctx():
    """Six s1 episodes and three s2 episodes, interleaved."""
    return make_ctx()


@pytest.fixture(scope="module")
def result(ctx):
    """An interrupted result: episodes 4 and 7 are missing."""
    return aggregate_from_values(ctx, "model-x", DIGEST_A, all_episodes(ctx, skip=MISSING), resamples=100)


def test_groups_kinds_names_and_order(result):
    """Overall, scenarios in suite order, families in declaration order; empty ones are left out."""
    assert (result.overall.kind, result.overall.name) == ("overall", "overall")
    assert [(g.kind, g.name) for g in result.scenarios] == [("scenario", "s1"), ("scenario", "s2")]
    assert [(g.kind, g.name) for g in result.families] == [("family", "fam-both"), ("family", "fam-s2")]


def test_family_views_overlap_and_do_not_add_up(result):
    """A scenario in two families counts in both, so family counts exceed the overall count."""
    family_total = sum(g.robustness.scheduled for g in result.families)
    assert result.overall.robustness.scheduled == 9
    assert family_total == 9 + 3


def test_missing_episodes_are_listed_and_counted_never_imputed(ctx, result):
    """Missing episodes appear with their full keys, in missing_indices and robustness, and nowhere else."""
    form = result.to_dict()
    assert form["missing_episodes"] == [
        {"index": k[0], "scenario_id": k[1], "scenario_hash": k[2], "seed": k[3]}
        for k in ctx.scheduled if k[0] in MISSING
    ]
    assert (form["scheduled_episodes"], form["observed_episodes"]) == (9, 7)
    overall = result.overall
    assert overall.missing_indices == MISSING
    assert 4 not in overall.episode_indices and 7 not in overall.episode_indices
    r = overall.robustness
    assert (r.scheduled, r.observed, r.missing) == (9, 7, 2)
    observed = [i for i in range(9) if i not in MISSING]
    assert r.all_resolved + r.max_steps == r.observed
    assert r.zero_evacuation == sum(i % 5 == 2 for i in observed)
    assert r.with_casualties == sum(i % 2 for i in observed)
    assert r.with_stranded == sum(i % 3 == 1 for i in observed)
    evac = overall.metrics[0]
    assert (evac.scheduled, evac.observed, evac.missing, evac.statistics.n) == (9, 7, 2, 7)
    assert evac.statistics.mean == sum((metric_values(i)["evacuated_rate"] for i in observed), Fraction(0)) / 7


def test_undefined_values_are_counted_and_left_out(result):
    """blocked_rate is None for indices divisible by 4: counted as undefined, excluded from n and mean."""
    observed = [i for i in range(9) if i not in MISSING]
    blocked = next(m for m in result.overall.metrics if m.metric == "blocked_rate")
    defined = [metric_values(i)["blocked_rate"] for i in observed if i % 4]
    assert blocked.undefined == sum(1 for i in observed if i % 4 == 0)
    assert blocked.statistics.n == len(defined) == blocked.observed - blocked.undefined
    assert blocked.statistics == describe(defined)


def test_overall_uses_episodes_not_a_mean_of_group_means(result):
    """With unequal group sizes the overall mean is the episode mean, not the mean of scenario means."""
    observed = [i for i in range(9) if i not in MISSING]
    episode_mean = sum((metric_values(i)["casualty_rate"] for i in observed), Fraction(0)) / len(observed)
    overall = next(m for m in result.overall.metrics if m.metric == "casualty_rate")
    group_means = [next(m for m in g.metrics if m.metric == "casualty_rate").statistics.mean for g in result.scenarios]
    assert overall.statistics.mean == episode_mean
    assert overall.statistics.mean != sum(group_means, Fraction(0)) / len(group_means)


def test_interval_uses_the_spec_seed_and_equals_the_reference(ctx, result):
    """The overall casualty_rate interval equals the reference bootstrap under the spec's seed."""
    observed = [i for i in range(9) if i not in MISSING]
    values = [metric_values(i)["casualty_rate"] for i in observed]
    seed = ref_seed("aggregate_mean", MANIFEST, [DIGEST_A], "overall", "overall", "casualty_rate", 100)
    summary = next(m for m in result.overall.metrics if m.metric == "casualty_rate")
    assert summary.mean_ci is not None and summary.mean_ci.seed == seed
    assert (summary.mean_ci.lower, summary.mean_ci.upper) == ref_interval(values, seed, 100)
    s2 = next(m for m in result.scenarios[1].metrics if m.metric == "casualty_rate")
    assert s2.statistics.n == 3 and s2.mean_ci is None  # n < 5: no interval


def test_layout_metric_order_and_definitions(result):
    """The dict has the section 10 keys; metrics follow the metric table; definitions come from it."""
    form = result.to_dict()
    assert set(form) == {
        "statistics_version", "artifact", "model_id", "evaluation_manifest_hash", "suite_id",
        "suite_version", "suite_hash", "simulator_version", "observation_version", "metrics_version",
        "result_digest", "scheduled_episodes", "observed_episodes", "missing_episodes",
        "metric_definitions", "methods", "overall", "scenarios", "families",
    }
    assert form["artifact"] == "aggregate" and form["statistics_version"] == "1.0"
    assert [d["metric"] for d in form["metric_definitions"]] == list(METRIC_NAMES)
    assert [d["direction"] for d in form["metric_definitions"]] == [m.direction for m in METRICS]
    assert set(form["methods"]) == {"quantiles", "variance", "std", "bootstrap"}
    group = form["overall"]
    assert set(group) == {"kind", "name", "episode_indices", "missing_indices", "robustness", "metrics"}
    assert [m["metric"] for m in group["metrics"]] == list(METRIC_NAMES)
    entry = group["metrics"][1]
    assert set(entry) == {"metric", "scheduled", "observed", "missing", "undefined", "statistics", "mean_ci"}
    assert set(entry["mean_ci"]) == {"method", "statistic", "level", "resamples", "seed", "lower", "upper"}


def test_json_bytes_are_canonical_and_digest_matches(result):
    """to_json_bytes is canonical JSON plus a newline; digest is SHA-256 of the canonical JSON."""
    text = result.to_json_bytes()
    assert text.endswith(b"\n") and text[:-1] == canonical_bytes(result.to_dict())
    assert json.loads(text) == result.to_dict()
    assert result.digest() == digest(result.to_dict())


def test_model_id_changes_digest_resamples_and_input_digest_change_seeds(ctx, result):
    """The model id changes the artifact digest; the input digest and resamples change every seed."""
    episodes = all_episodes(ctx, skip=MISSING)
    relabelled = aggregate_from_values(ctx, "model-y", DIGEST_A, episodes, resamples=100)
    other_input = aggregate_from_values(ctx, "model-x", DIGEST_B, episodes, resamples=100)
    more = aggregate_from_values(ctx, "model-x", DIGEST_A, episodes, resamples=101)
    assert relabelled.digest() != result.digest()
    assert relabelled.overall.metrics[0].statistics == result.overall.metrics[0].statistics
    for changed in (other_input, more):
        assert changed.digest() != result.digest()
        for old, new in zip(result.overall.metrics, changed.overall.metrics):
            if old.mean_ci is not None:
                assert new.mean_ci is not None and new.mean_ci.seed != old.mean_ci.seed


def test_episode_order_does_not_matter(ctx, result):
    """Episodes given in reverse order give the identical artifact."""
    reversed_input = aggregate_from_values(
        ctx, "model-x", DIGEST_A, all_episodes(ctx, skip=MISSING)[::-1], resamples=100
    )
    assert reversed_input.to_json_bytes() == result.to_json_bytes()
