"""Percentile intervals by the left inverse of a weighted empirical CDF.

For probability ``p`` and total draw weight ``B`` the endpoint is the value at
1-based rank ``max(1, ceil(p * B))`` among the draw values sorted ascending,
each repeated as often as its weight. No interpolation: the endpoint is always
one of the draw values. Ranks are computed exactly from rational ``p``.

A statistic with any missing draw value is ``blocked`` (no endpoints, every
missing row listed); one whose values are all equal is ``degenerate``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from .contract import P_LOWER, P_UPPER
from .exact import ceil_fraction
from .resampling import Distribution


@dataclass(frozen=True, slots=True)
class Interval:
    """The interval of one statistic.

    Attributes:
        status: ``"ok"``, ``"degenerate"`` or ``"blocked"``.
        lower: lower endpoint, None when blocked.
        upper: upper endpoint, None when blocked.
        lower_rank: 1-based rank of the lower endpoint.
        upper_rank: 1-based rank of the upper endpoint.
        missing_rows: 0-based rows of the draws whose value is missing.
        missing_weight: total weight of those draws.
    """

    status: str
    lower: Fraction | None
    upper: Fraction | None
    lower_rank: int
    upper_rank: int
    missing_rows: tuple[int, ...]
    missing_weight: int


def rank(p: Fraction, total_weight: int) -> int:
    """Return the 1-based rank ``max(1, ceil(p * total_weight))``."""
    return max(1, ceil_fraction(p * total_weight))


def weighted_quantile(pairs: Sequence[tuple[Fraction, int]], at_rank: int) -> Fraction:
    """Return the value at 1-based ``at_rank`` of ascending ``(value, weight)`` pairs.

    This is the smallest value whose cumulative weight reaches ``at_rank``.

    Raises:
        ValueError: if ``at_rank`` exceeds the total weight.
    """
    cumulative = 0
    for value, weight in pairs:
        cumulative += weight
        if cumulative >= at_rank:
            return value
    raise ValueError(f"rank {at_rank} exceeds the total weight {cumulative}")


def interval(distribution: Distribution, column: int) -> Interval:
    """Return the interval of statistic ``column`` over ``distribution``."""
    total = distribution.total_weight
    low_rank, high_rank = rank(P_LOWER, total), rank(P_UPPER, total)
    missing = tuple(
        row for row, draw in enumerate(distribution.draws) if draw.values[column] is None
    )
    if missing:
        weight = sum(distribution.draws[row].weight for row in missing)
        return Interval("blocked", None, None, low_rank, high_rank, missing, weight)
    merged: dict[Fraction, int] = {}
    for draw in distribution.draws:
        value = draw.values[column]
        assert value is not None
        merged[value] = merged.get(value, 0) + draw.weight
    # Sorting by value makes the result independent of dict order.
    pairs = sorted(merged.items())
    lower = weighted_quantile(pairs, low_rank)
    upper = weighted_quantile(pairs, high_rank)
    status = "degenerate" if len(pairs) == 1 else "ok"
    return Interval(status, lower, upper, low_rank, high_rank, (), 0)
