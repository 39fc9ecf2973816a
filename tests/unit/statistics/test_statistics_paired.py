"""Paired comparison: deltas A - B, win/loss/tie by direction, pairing, swapping."""

from __future__ import annotations

from fractions import Fraction

import pytest

from emberbench.records.metric_defs import METRIC_NAMES, METRICS_BY_NAME
from emberbench.statistics import paired_from_values
from stats_factory import DIGEST_A, DIGEST_B, all_episodes, make_ctx, metric_values

A_SKIP = (2,)
B_SKIP = (5, 8)


@pytest.fixture(scope="module")
def ctx():
    """Six s1 episodes and three s2 episodes."""
    return make_ctx()


def _compare(ctx, swap=False, resamples=100):
    a = ("model-a", DIGEST_A, all_episodes(ctx, shift=0, skip=A_SKIP))
    b = ("model-b", DIGEST_B, all_episodes(ctx, shift=3, skip=B_SKIP))
    if swap:
        a, b = b, a
    return paired_from_values(ctx, a[0], b[0], a[1], b[1], a[2], b[2], resamples=resamples)


@pytest.fixture(scope="module")
def paired(ctx):
    """A (shift 0) against B (shift 3)."""
    return _compare(ctx)


def test_pairing_and_missing_lists(ctx, paired):
    """Only indices in both results are paired; missing keys are listed per side."""
    form = paired.to_dict()
    assert paired.overall.paired_indices == (0, 1, 3, 4, 6, 7)
    assert form["paired_count"] == 6 and form["delta"] == "A - B"
    assert [k["index"] for k in form["missing_from_a"]] == list(A_SKIP)
    assert [k["index"] for k in form["missing_from_b"]] == list(B_SKIP)
    assert set(form["missing_from_b"][0]) == {"index", "scenario_id", "scenario_hash", "seed"}
    assert form["artifact"] == "paired"
    assert {"model_a", "model_b", "result_digest_a", "result_digest_b"} <= set(form)


def test_deltas_are_a_minus_b_in_manifest_order(paired):
    """Each delta is value_A - value_B, listed as [index, float] in manifest order."""
    metric = next(m for m in paired.overall.metrics if m.metric == "evacuated_rate")
    expected = [(i, metric_values(i, 0)["evacuated_rate"] - metric_values(i, 3)["evacuated_rate"])
                for i in (0, 1, 3, 4, 6, 7)]
    assert list(metric.deltas) == expected
    assert metric.to_dict()["deltas"] == [[i, float(d)] for i, d in expected]
    assert metric.statistics.mean == sum((d for _, d in expected), Fraction(0)) / 6


def test_undefined_pairs_are_counted_not_compared(paired):
    """Episodes where A or B lacks the metric count as undefined and give no delta."""
    blocked = next(m for m in paired.overall.metrics if m.metric == "blocked_rate")
    undefined = [i for i in (0, 1, 3, 4, 6, 7) if i % 4 == 0]
    assert blocked.undefined == len(undefined)
    assert [i for i, _ in blocked.deltas] == [i for i in (0, 1, 3, 4, 6, 7) if i % 4]
    assert blocked.statistics.n == blocked.paired - blocked.undefined


def test_win_loss_tie_follow_direction_and_are_null_without_one(paired):
    """higher: A better when delta > 0; lower: when delta < 0; descriptive metrics: null counts."""
    for metric in paired.overall.metrics:
        direction = METRICS_BY_NAME[metric.metric].direction
        pos, neg, zero = metric.delta_positive, metric.delta_negative, metric.delta_zero
        assert pos + neg + zero == len(metric.deltas)
        if direction == "higher":
            assert (metric.a_better, metric.b_better, metric.ties) == (pos, neg, zero)
        elif direction == "lower":
            assert (metric.a_better, metric.b_better, metric.ties) == (neg, pos, zero)
        else:
            assert (metric.a_better, metric.b_better, metric.ties) == (None, None, None)
    trapped = next(m for m in paired.overall.metrics if m.metric == "terminal_trapped_rate")
    assert trapped.ties == 6 and trapped.statistics.variance == 0


def test_swapping_a_and_b_negates_deltas_and_swaps_counts(ctx, paired):
    """Swapped inputs give negated deltas, swapped a_better/b_better and swapped missing lists."""
    swapped = _compare(ctx, swap=True)
    assert swapped.to_dict()["missing_from_a"] == paired.to_dict()["missing_from_b"]
    for group, other in zip((paired.overall, *paired.scenarios, *paired.families),
                            (swapped.overall, *swapped.scenarios, *swapped.families)):
        for m, s in zip(group.metrics, other.metrics):
            assert [(i, -d) for i, d in m.deltas] == list(s.deltas)
            assert (m.a_better, m.b_better, m.ties) == (s.b_better, s.a_better, s.ties)
            assert (m.delta_positive, m.delta_negative) == (s.delta_negative, s.delta_positive)
            if m.statistics.n:
                assert s.statistics.mean == -m.statistics.mean


def test_group_lists_and_per_metric_counts(paired):
    """Scenario groups list their own paired and missing indices; metrics repeat the counts."""
    s1, s2 = paired.scenarios
    assert (s1.name, s2.name) == ("s1", "s2")
    # Scheduled: s1 = 0, 2, 4, 6, 7, 8 and s2 = 1, 3, 5.
    assert s1.paired_indices == (0, 4, 6, 7) and s2.paired_indices == (1, 3)
    assert (s1.missing_from_a, s1.missing_from_b) == ((2,), (8,))
    assert (s2.missing_from_a, s2.missing_from_b) == ((), (5,))
    for m in s1.metrics:
        assert (m.paired, m.missing_from_a, m.missing_from_b) == (4, 1, 1)
    assert [m.metric for m in paired.overall.metrics] == list(METRIC_NAMES)
    entry = paired.to_dict()["overall"]["metrics"][0]
    assert set(entry) == {
        "metric", "paired", "missing_from_a", "missing_from_b", "undefined", "deltas", "statistics",
        "mean_delta_ci", "delta_positive", "delta_negative", "delta_zero", "a_better", "b_better", "ties",
    }
    assert entry["mean_delta_ci"]["statistic"] == "mean_delta"
