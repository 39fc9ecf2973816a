"""Exact descriptive statistics of one list of values: mean, type-7 quantiles, variance.

Every statistic is an exact ``Fraction`` (or ``None`` when it is undefined
for the number of values; never ``0``). Only :meth:`Descriptive.to_dict`
produces floats: each exact value becomes its correctly rounded float, and the
standard deviation is ``math.sqrt(float(variance))``, the one value that is
not rational.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .exact import ExactVector

QUANTILE_LEVELS: tuple[tuple[str, Fraction], ...] = (
    ("p25", Fraction(1, 4)),
    ("p50", Fraction(1, 2)),
    ("p75", Fraction(3, 4)),
    ("p90", Fraction(9, 10)),
    ("p95", Fraction(19, 20)),
)
"""The fixed quantile levels of every summary, in output order."""


def type7_position(n: int, p: Fraction) -> tuple[int, Fraction]:
    """Return ``(j, g)`` of the type-7 rule: ``h = (n - 1) p``, ``j = floor(h)``, ``g = h - j``.

    Args:
        n: the number of sorted values (at least 1).
        p: the level, in ``[0, 1]``.
    """
    if n < 1:
        raise ValueError("a quantile needs at least one value")
    if not 0 <= p <= 1:
        raise ValueError(f"quantile level {p} is outside [0, 1]")
    h = (n - 1) * Fraction(p)
    j = math.floor(h)
    return j, h - j


def type7_quantile(sorted_values: Sequence[Fraction], p: Fraction) -> Fraction:
    """Return the Hyndman-Fan type-7 quantile of ascending ``sorted_values`` at ``p``.

    ``Q(p) = y[j] + g * (y[j+1] - y[j])`` with 0-based ``y`` (``y[j]`` when
    ``g = 0``). This is numpy's ``method="linear"`` computed exactly.
    """
    j, g = type7_position(len(sorted_values), p)
    low = Fraction(sorted_values[j])
    if g == 0:
        return low
    return low + g * (Fraction(sorted_values[j + 1]) - low)


def to_float(value: Fraction | None) -> float | None:
    """Return the correctly rounded float of an exact value (None stays None)."""
    return None if value is None else float(value)


@dataclass(frozen=True, slots=True)
class Descriptive:
    """The descriptive statistics of ``n`` defined values.

    Attributes:
        n: the number of defined values.
        mean: exact mean (``n >= 1``), else None.
        median: type-7 quantile at 1/2 (``n >= 1``), else None.
        variance: sample variance with ``n - 1`` in the denominator
            (``n >= 2``), else None.
        min: smallest value (``n >= 1``), else None.
        max: largest value (``n >= 1``), else None.
        quantiles: the values at :data:`QUANTILE_LEVELS`, in that order
            (each None when ``n = 0``).
    """

    n: int
    mean: Fraction | None
    median: Fraction | None
    variance: Fraction | None
    min: Fraction | None
    max: Fraction | None
    quantiles: tuple[Fraction | None, ...]

    def __post_init__(self) -> None:
        if len(self.quantiles) != len(QUANTILE_LEVELS):
            raise ValueError("one quantile per level is required")

    @property
    def std(self) -> float | None:
        """``math.sqrt(float(variance))``, or None when the variance is undefined."""
        return None if self.variance is None else math.sqrt(float(self.variance))

    def to_dict(self) -> dict[str, Any]:
        """Return the output form: exact values as correctly rounded floats."""
        return {
            "n": self.n,
            "mean": to_float(self.mean),
            "median": to_float(self.median),
            "variance": to_float(self.variance),
            "std": self.std,
            "min": to_float(self.min),
            "max": to_float(self.max),
            "quantiles": {
                name: to_float(q) for (name, _), q in zip(QUANTILE_LEVELS, self.quantiles, strict=True)
            },
        }


EMPTY = Descriptive(
    n=0, mean=None, median=None, variance=None, min=None, max=None,
    quantiles=(None,) * len(QUANTILE_LEVELS),
)


def describe(values: Sequence[Fraction] | ExactVector) -> Descriptive:
    """Return the exact descriptive statistics of ``values``.

    Only the order statistics the quantiles need are found (no ``Fraction``
    is made per value when ``values`` is an :class:`ExactVector`).

    Args:
        values: the defined values, in any order (an :class:`ExactVector`
            reuses its prepared floats and sums).
    """
    vector = values if isinstance(values, ExactVector) else None
    if vector is None:
        vals = tuple(values)
        if not vals:
            return EMPTY
        vector = ExactVector.build(vals)
    n = len(vector)
    if n == 0:
        return EMPTY
    positions = {p: type7_position(n, p) for p in (Fraction(0), Fraction(1), *(p for _, p in QUANTILE_LEVELS))}
    ranks = sorted({r for j, g in positions.values() for r in ((j, j + 1) if g else (j,))})
    at = vector.order_statistics(ranks)

    def quantile(p: Fraction) -> Fraction:
        j, g = positions[p]
        return at[j] if g == 0 else at[j] + g * (at[j + 1] - at[j])

    total = vector.total()
    mean = total / n
    variance = None
    if n >= 2:
        # sum (x - mean)^2 = sum x^2 - total^2 / n, exactly.
        variance = (vector.sum_of_squares() - total * total / n) / (n - 1)
    return Descriptive(
        n=n,
        mean=mean,
        median=quantile(Fraction(1, 2)),
        variance=variance,
        min=at[0],
        max=at[n - 1],
        quantiles=tuple(quantile(p) for _, p in QUANTILE_LEVELS),
    )
