"""Properties of task-cluster resampling over random count tables (derandomized Hypothesis)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from emberbench.grouped_rates.estimands import ArmCounts, Evaluator, TaskTable
from emberbench.grouped_rates.inputs import Resampling
from emberbench.grouped_rates.intervals import interval
from emberbench.grouped_rates.resampling import resample
from emberbench.grouped_rates.sampler import task_draws

arm_counts = st.builds(ArmCounts, st.integers(0, 4), st.integers(0, 4), st.integers(0, 2))


@st.composite
def tables(draw: st.DrawFn, max_tasks: int = 4) -> TaskTable:
    """A random table of 1..max_tasks tasks; empty and unresolved-only arms occur."""
    n = draw(st.integers(1, max_tasks))
    counts = tuple((draw(arm_counts), draw(arm_counts)) for _ in range(n))
    return TaskTable(tuple(f"T{i}" for i in range(n)), ("a", "b"), counts)


def _weighted(dist) -> dict:
    out: dict = {}
    for d in dist.draws:
        out[d.values] = out.get(d.values, 0) + d.weight
    return out


@given(tables())
def test_multiset_distribution_equals_ordered_enumeration(table: TaskTable) -> None:
    """Weighted multisets reproduce the n^n ordered draws' joint distribution and every interval."""
    ordered = resample(table, Resampling("exact"))
    multi = resample(table, Resampling("exact-multiset"))
    assert ordered.total_weight == multi.total_weight == len(table.tasks) ** len(table.tasks)
    assert _weighted(ordered) == _weighted(multi)
    for column in range(6):
        a, b = interval(ordered, column), interval(multi, column)
        assert (a.status, a.lower, a.upper, a.missing_weight) == (b.status, b.lower, b.upper, b.missing_weight)


@given(tables(), st.integers(2, 4))
def test_cloning_every_episode_leaves_every_draw_unchanged(table: TaskTable, k: int) -> None:
    """Scaling every count of every task arm by k changes no point estimate and no draw value."""
    cloned = TaskTable(
        table.tasks,
        table.arms,
        tuple(
            tuple(ArmCounts(c.failure * k, c.success * k, c.unresolved * k) for c in row)
            for row in table.counts
        ),
    )
    assert Evaluator(cloned).point() == Evaluator(table).point()
    mode = Resampling("exact-multiset")
    assert resample(cloned, mode).draws == resample(table, mode).draws


@given(st.integers(0, 2**64 - 1), st.integers(1, 50), st.integers(0, 20))
def test_sampler_draws_have_n_indices_in_range_and_repeat_per_seed(seed: int, n: int, replicates: int) -> None:
    """Every draw holds n indices in [0, n), and a seed always gives the same draws."""
    draws = list(task_draws(seed, n, replicates))
    assert len(draws) == replicates
    assert all(len(d) == n and all(0 <= i < n for i in d) for d in draws)
    assert draws == list(task_draws(seed, n, replicates))
