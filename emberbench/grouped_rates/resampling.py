"""Paired task-cluster resampling: the draws of the three modes, within the caps.

A draw selects n task indices with replacement; each selected task brings
both arms and every one of its episodes. Three modes produce draws:

* ``exact`` -- all ``n**n`` ordered index tuples, lexicographic, weight 1;
* ``exact-multiset`` -- all ``C(2n-1, n)`` multisets (non-decreasing index
  lists, lexicographic), each weighted by its multinomial count
  ``n! / prod(m_i!)``; the weights sum to ``n**n`` and, because every
  statistic depends on a draw only through its multiset, the weighted
  distribution is exactly the one ``exact`` enumerates;
* ``monte-carlo`` -- ``replicates`` draws of ``sha256-counter-rejection-v1``.

:func:`plan` checks the draw caps before any work is done, so an input that
would exceed them is refused with a message naming the cap.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass

from ..errors import GroupedRatesError
from .contract import MAX_DRAW_CELLS, MAX_DRAWS
from .estimands import Evaluator, TaskTable, Values
from .inputs import Resampling
from .sampler import task_draws


@dataclass(frozen=True, slots=True)
class Draw:
    """One retained draw: its task indices, its weight and its six statistics."""

    tasks: tuple[int, ...]
    weight: int
    values: Values


@dataclass(frozen=True, slots=True)
class Distribution:
    """Every draw of one resampling run, in generation order.

    Attributes:
        mode: the resampling mode.
        draws: the retained draws.
        total_weight: B, the sum of draw weights (``n**n`` for the exact modes).
    """

    mode: str
    draws: tuple[Draw, ...]
    total_weight: int


def draw_count(mode: str, n_tasks: int, replicates: int | None = None) -> int:
    """Return how many draw rows ``mode`` retains for ``n_tasks`` tasks."""
    if mode == "exact":
        return n_tasks**n_tasks
    if mode == "exact-multiset":
        return math.comb(2 * n_tasks - 1, n_tasks)
    if mode == "monte-carlo":
        if replicates is None:
            raise GroupedRatesError("monte-carlo needs a replicate count")
        return replicates
    raise GroupedRatesError(f"unknown resampling mode {mode!r}")


def plan(resampling: Resampling, n_tasks: int) -> int:
    """Check the draw caps for ``resampling`` on ``n_tasks`` tasks; return the row count.

    Raises:
        GroupedRatesError: naming ``max_draws`` or ``max_draw_cells`` when
            the draws would exceed it.
    """
    rows = draw_count(resampling.mode, n_tasks, resampling.replicates)
    if rows > MAX_DRAWS:
        hint = {
            "exact": "use exact-multiset or monte-carlo",
            "exact-multiset": "use monte-carlo",
            "monte-carlo": "ask for fewer replicates",
        }[resampling.mode]
        raise GroupedRatesError(
            f"{resampling.mode} resampling of {n_tasks} tasks needs {rows} draws, over the "
            f"cap max_draws = {MAX_DRAWS}; {hint}"
        )
    if rows * n_tasks > MAX_DRAW_CELLS:
        raise GroupedRatesError(
            f"{resampling.mode} resampling needs {rows} draws x {n_tasks} tasks = "
            f"{rows * n_tasks} draw cells, over the cap max_draw_cells = {MAX_DRAW_CELLS}"
        )
    return rows


def multinomial(counts: tuple[int, ...]) -> int:
    """Number of ordered tuples with these per-task counts: ``sum! / prod(c!)``."""
    out = math.factorial(sum(counts))
    for c in counts:
        out //= math.factorial(c)
    return out


def _ordered(n: int) -> Iterator[tuple[tuple[int, ...], int]]:
    for tasks in itertools.product(range(n), repeat=n):
        yield tasks, 1


def _multisets(n: int) -> Iterator[tuple[tuple[int, ...], int]]:
    for tasks in itertools.combinations_with_replacement(range(n), n):
        counts = tuple(len(list(group)) for _, group in itertools.groupby(tasks))
        yield tasks, multinomial(counts)


def _monte_carlo(n: int, seed: int, replicates: int) -> Iterator[tuple[tuple[int, ...], int]]:
    for tasks in task_draws(seed, n, replicates):
        yield tasks, 1


def resample(table: TaskTable, resampling: Resampling) -> Distribution:
    """Generate and evaluate every draw of ``resampling`` over ``table``.

    Raises:
        GroupedRatesError: if the draws would exceed a draw cap (see :func:`plan`).
    """
    n = len(table.tasks)
    plan(resampling, n)
    if resampling.mode == "exact":
        source = _ordered(n)
    elif resampling.mode == "exact-multiset":
        source = _multisets(n)
    else:
        assert resampling.seed is not None and resampling.replicates is not None
        source = _monte_carlo(n, resampling.seed, resampling.replicates)
    evaluator = Evaluator(table)
    # Statistics depend only on the multiset, so ordered draws share evaluations.
    cache: dict[tuple[int, ...], Values] = {}
    draws = []
    total = 0
    for tasks, weight in source:
        key = tuple(sorted(tasks))
        values = cache.get(key)
        if values is None:
            multiplicity = [0] * n
            for t in tasks:
                multiplicity[t] += 1
            values = evaluator.evaluate(multiplicity)
            cache[key] = values
        draws.append(Draw(tasks, weight, values))
        total += weight
    return Distribution(resampling.mode, tuple(draws), total)
