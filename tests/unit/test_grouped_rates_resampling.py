"""Estimands under resampling: null, blocked, degenerate and missing-draw cases, cloning, multisets."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

from emberbench.grouped_rates import parse_input
from emberbench.grouped_rates.estimands import tabulate
from emberbench.grouped_rates.inputs import Resampling
from emberbench.grouped_rates.intervals import interval, rank, weighted_quantile
from emberbench.grouped_rates.resampling import multinomial, resample
from tests.unit.test_grouped_rates_support import EXAMPLE_COUNTS, frac, make_document, report_of, stat


def test_unresolved_only_task_arm_has_a_null_rate_and_blocks_equal_task() -> None:
    """A benign arm with only unresolved labels stays listed, has rate null and blocks equal-task."""
    counts = {"T1": ((2, 2, 0), (1, 3, 0)), "T2": ((1, 1, 0), (0, 0, 3))}
    report = report_of(make_document(counts))
    row = report["counts"]["tasks"][1]
    assert row["task"] == "T2" and row["arms"]["benign"]["rate"] is None
    assert row["arms"]["benign"]["attempted"] == 3
    equal = report["estimates"]["equal_task"]
    assert equal["status"] == "blocked"
    assert equal["blocked_by"] == [{"task": "T2", "arm": "benign"}]
    assert frac(equal["rates"]["attack"]) == Fraction(1, 2)
    assert equal["rates"]["benign"] is None and equal["contrast"] is None
    assert report["estimates"]["episode_weighted"]["status"] == "ok"
    assert report["population"]["tasks"] == ["T1", "T2"]
    assert any("equal_task is blocked" in w for w in report["warnings"])


def test_empty_task_arm_blocks_equal_task_and_missing_draws_block_its_interval() -> None:
    """A task with no benign episodes: draws selecting it miss the statistic, and all are retained."""
    counts = {"T1": ((2, 2, 0), (1, 3, 0)), "T2": ((2, 1, 0), (0, 0, 0))}
    report = report_of(make_document(counts))
    entry = stat(report, "equal_task", "rate", "benign")
    # Ordered draws (0,0), (0,1), (1,0), (1,1): all but the first select T2.
    assert entry["status"] == "blocked"
    assert entry["lower"] is None and entry["upper"] is None
    assert entry["missing_rows"] == [1, 2, 3] and entry["missing_weight"] == 3
    assert [row[6] for row in report["draws"]["rows"]] == ["1/4", None, None, None]
    assert stat(report, "equal_task", "rate", "attack")["status"] == "ok"


def test_missing_pooled_draw_blocks_the_interval_while_the_point_estimate_exists() -> None:
    """The pooled benign rate exists, but the draw (T2, T2) has no resolved benign episode."""
    counts = {"T1": ((2, 2, 0), (1, 3, 0)), "T2": ((1, 1, 0), (0, 0, 2))}
    report = report_of(make_document(counts))
    assert frac(report["estimates"]["episode_weighted"]["rates"]["benign"]) == Fraction(1, 4)
    entry = stat(report, "episode_weighted", "rate", "benign")
    assert entry["status"] == "blocked" and entry["missing_rows"] == [3]
    contrast = stat(report, "episode_weighted", "contrast", None)
    assert contrast["status"] == "blocked" and contrast["missing_rows"] == [3]
    assert report["draws"]["rows"][3][3] is None


def test_arm_without_any_episode_has_null_estimates_and_null_bounds() -> None:
    """With no benign episodes at all, both benign rates, both contrasts and the benign bounds are null."""
    counts = {"T1": ((2, 2, 0), (0, 0, 0)), "T2": ((1, 1, 0), (0, 0, 0))}
    report = report_of(make_document(counts))
    pooled = report["estimates"]["episode_weighted"]
    assert pooled["status"] == "blocked" and pooled["blocked_by"] == [{"task": None, "arm": "benign"}]
    assert pooled["contrast"] is None
    assert report["missing_label_bounds"]["rates"]["benign"] is None
    assert report["missing_label_bounds"]["contrast"] is None
    assert all(e["status"] == "blocked" for e in report["intervals"]["statistics"] if e["arm"] != "attack")


def test_identical_tasks_give_a_degenerate_distribution() -> None:
    """When every task has the same rates, every draw agrees and each interval is labelled degenerate."""
    counts = {"T1": ((1, 1, 0), (0, 2, 0)), "T2": ((2, 2, 0), (0, 4, 0)), "T3": ((3, 3, 1), (0, 6, 0))}
    report = report_of(make_document(counts))
    for entry in report["intervals"]["statistics"]:
        assert entry["status"] == "degenerate"
        assert entry["lower"] == entry["upper"] == entry["point"]
    assert frac(stat(report, "equal_task", "contrast", None)["lower"]) == Fraction(1, 2)


def test_one_task_is_degenerate_and_warns_about_few_clusters() -> None:
    """A single task cluster resamples to itself: degenerate intervals and a few-clusters warning."""
    report = report_of(make_document({"T1": ((3, 1, 0), (1, 3, 0))}))
    assert report["task_clusters"] == 1
    assert {e["status"] for e in report["intervals"]["statistics"]} == {"degenerate"}
    assert report["warnings"][0].startswith("only 1 task clusters (fewer than 50)")


def _variance(rows: list, column: int) -> Fraction:
    total = sum(row[1] for row in rows)
    mean = sum(Fraction(row[column]) * row[1] for row in rows) / total
    return sum((Fraction(row[column]) - mean) ** 2 * row[1] for row in rows) / total


def test_cloning_episodes_keeps_the_task_bootstrap_but_shrinks_an_episode_iid_variance() -> None:
    """Three copies of every episode leave estimands and all draws unchanged; p(1-p)/N falls threefold."""
    base = report_of(make_document(EXAMPLE_COUNTS))
    cloned = report_of(make_document(EXAMPLE_COUNTS, clones=3))
    assert cloned["estimates"] == base["estimates"]
    assert cloned["intervals"] == base["intervals"]
    assert cloned["draws"] == base["draws"]
    for column in range(2, 8):
        assert _variance(cloned["draws"]["rows"], column) == _variance(base["draws"]["rows"], column) > 0

    def episode_iid_variance(report: dict) -> Fraction:
        p = frac(report["estimates"]["episode_weighted"]["rates"]["attack"])
        n = report["counts"]["totals"]["attack"]["resolved"]
        return p * (1 - p) / n

    assert cloned["counts"]["totals"]["attack"]["resolved"] == 54
    assert episode_iid_variance(cloned) == episode_iid_variance(base) / 3


def test_selectively_adding_repeats_moves_the_pooled_target_but_not_equal_task() -> None:
    """Doubling T01's episodes only changes the episode-weighted rate; equal-task weights stay 1/n."""
    doubled = dict(EXAMPLE_COUNTS)
    doubled["T01"] = ((16, 4, 0), (4, 16, 0))
    base, more = report_of(make_document(EXAMPLE_COUNTS)), report_of(make_document(doubled))
    assert more["estimates"]["equal_task"] == base["estimates"]["equal_task"]
    assert frac(more["estimates"]["episode_weighted"]["rates"]["attack"]) == Fraction(20, 28)


@pytest.mark.parametrize(
    "counts",
    [
        {"A": ((1, 0, 0), (0, 1, 0))},
        {"A": ((1, 2, 0), (0, 1, 1)), "B": ((0, 3, 0), (2, 0, 0))},
        {k: EXAMPLE_COUNTS[k] for k in ("T01", "T02", "T03")},
        EXAMPLE_COUNTS,
        {**EXAMPLE_COUNTS, "T05": ((0, 0, 2), (3, 1, 0))},
        {f"T{i}": ((i % 3, 2, i % 2), (1, i % 4, 0)) for i in range(6)},
    ],
    ids=["n1", "n2", "n3", "example", "n5-blocked", "n6"],
)
def test_multiset_mode_equals_full_enumeration(counts: dict) -> None:
    """exact-multiset gives the same weighted distribution, points and intervals as all n^n draws."""
    exact = report_of(make_document(counts, {"mode": "exact"}))
    multi = report_of(make_document(counts, {"mode": "exact-multiset"}))
    n = len(counts)
    assert exact["resampling"]["total_weight"] == multi["resampling"]["total_weight"] == n**n
    assert len(multi["draws"]["rows"]) < len(exact["draws"]["rows"]) or n == 1
    expanded: dict[tuple, int] = {}
    for row in multi["draws"]["rows"]:
        expanded[tuple(row[2:])] = expanded.get(tuple(row[2:]), 0) + row[1]
    counted: dict[tuple, int] = {}
    for row in exact["draws"]["rows"]:
        counted[tuple(row[2:])] = counted.get(tuple(row[2:]), 0) + 1
    assert expanded == counted
    for a, b in zip(exact["intervals"]["statistics"], multi["intervals"]["statistics"]):
        assert (a["status"], a["lower"], a["upper"], a["point"], a["missing_weight"]) == (
            b["status"], b["lower"], b["upper"], b["point"], b["missing_weight"]
        )
    assert exact["estimates"] == multi["estimates"]


def test_multiset_rows_are_sorted_multisets_with_multinomial_weights() -> None:
    """Each multiset row lists non-decreasing indices, once each, weighted n!/prod(m!)."""
    data = parse_input(make_document(EXAMPLE_COUNTS, {"mode": "exact-multiset"}))
    dist = resample(tabulate(data), Resampling("exact-multiset"))
    assert [d.tasks for d in dist.draws] == list(itertools.combinations_with_replacement(range(4), 4))
    assert dist.draws[0].weight == 1 and dist.draws[1].weight == 4
    assert multinomial((2, 1, 1)) == 12
    assert sum(d.weight for d in dist.draws) == 256


def test_rank_is_max_one_ceil_p_b_and_quantile_is_the_left_inverse() -> None:
    """rank() applies max(1, ceil(p*B)); weighted_quantile returns the first value reaching the rank."""
    assert rank(Fraction(1, 40), 256) == 7
    assert rank(Fraction(39, 40), 256) == 250
    assert rank(Fraction(1, 40), 1) == 1
    assert rank(Fraction(1, 40), 40) == 1
    assert rank(Fraction(1, 40), 41) == 2
    pairs = [(Fraction(0), 2), (Fraction(1, 2), 3), (Fraction(1), 1)]
    assert [weighted_quantile(pairs, r) for r in range(1, 7)] == [0, 0, Fraction(1, 2), Fraction(1, 2), Fraction(1, 2), 1]
    with pytest.raises(ValueError, match="exceeds"):
        weighted_quantile(pairs, 7)


def test_interval_statuses_follow_missing_then_equal_values() -> None:
    """interval() reports blocked before degenerate, and ok otherwise."""
    data = parse_input(make_document({"A": ((1, 1, 0), (0, 0, 1)), "B": ((0, 2, 0), (1, 1, 0))}))
    dist = resample(tabulate(data), data.resampling)
    assert interval(dist, 1).status == "blocked"
    assert interval(dist, 0).status == "ok"
