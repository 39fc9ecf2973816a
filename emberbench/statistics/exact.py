"""Exact sums of fractions without per-element ``Fraction`` arithmetic.

Every statistic in this package is an exact rational number. Adding ten
thousand ``Fraction`` objects one by one is slow because each addition
computes a gcd. This module keeps the arithmetic exact but moves the work to
integers:

1. **One common denominator.** When the least common multiple ``D`` of all
   denominators is small enough that ``n * max|x_i * D|`` fits in a signed
   64-bit integer, every value becomes an ``int64`` numerator over ``D``. Any
   sum of at most ``n`` values (with repetition) is then an exact ``int64``.
2. **Grouped by denominator.** Otherwise the values are grouped by their
   denominator. Each group's numerators are summed in ``int64`` (when the
   bound above holds for that group's numerators) and the few group totals
   are combined with Python integers.
3. **Python integers.** When even a group's numerators could overflow
   ``int64``, that group is summed with Python integers.

The path taken is recorded in :attr:`ExactVector.path` so tests can force and
check each one. Every path returns the same exact ``Fraction``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

INT64_MAX = (1 << 63) - 1
"""Largest value an ``int64`` sum may reach on the fast paths."""

PATH_COMMON = "common_denominator"
PATH_GROUPED = "grouped_by_denominator"
PATH_PYTHON = "python_int"


def combine_ratios(numerators: Sequence[int], denominators: Sequence[int]) -> Fraction:
    """Return ``sum(numerators[i] / denominators[i])`` exactly.

    The denominators must be positive. The terms are merged pairwise in a
    balanced tree over their least common multiples, so the cost grows with
    the size of the final denominator rather than with ``len * size``.

    Args:
        numerators: integer numerators.
        denominators: positive integer denominators, one per numerator.

    Returns:
        The exact, normalized sum (``Fraction(0)`` when empty).
    """
    terms = [(int(a), int(b)) for a, b in zip(numerators, denominators, strict=True)]
    if not terms:
        return Fraction(0)
    while len(terms) > 1:
        merged = []
        for k in range(0, len(terms) - 1, 2):
            (a, b), (c, d) = terms[k], terms[k + 1]
            g = math.gcd(b, d)
            merged.append((a * (d // g) + c * (b // g), (b // g) * d))
        if len(terms) % 2:
            merged.append(terms[-1])
        terms = merged
    return Fraction(*terms[0])


def sum_parts(numerators: Sequence[int], denominators: Sequence[int]) -> Fraction:
    """Return ``sum(numerators[i] / denominators[i])``, grouping equal denominators.

    Numerators that share a denominator are added as Python integers first;
    only the distinct denominators are then combined with
    :func:`combine_ratios`. The result does not depend on the input order.
    """
    if len(numerators) != len(denominators):
        raise ValueError("numerators and denominators differ in length")
    if not numerators:
        return Fraction(0)
    order = sorted(range(len(denominators)), key=denominators.__getitem__)
    group_nums: list[int] = []
    group_dens: list[int] = []
    for i in order:
        den = denominators[i]
        if group_dens and group_dens[-1] == den:
            group_nums[-1] += numerators[i]
        else:
            group_dens.append(den)
            group_nums.append(numerators[i])
    return combine_ratios(group_nums, group_dens)


def sum_fractions(values: Sequence[Fraction]) -> Fraction:
    """Return the exact sum of ``values`` (see :func:`sum_parts`)."""
    return sum_parts([v.numerator for v in values], [v.denominator for v in values])


def sum_of_squares(values: Sequence[Fraction]) -> Fraction:
    """Return ``sum(v * v for v in values)`` exactly, without building each square."""
    return sum_parts([v.numerator ** 2 for v in values], [v.denominator ** 2 for v in values])


def float_array(values: Sequence[Fraction]) -> np.ndarray:
    """Return the correctly rounded ``float64`` of every value, in order."""
    return np.fromiter((float(v) for v in values), dtype=np.float64, count=len(values))


def sort_exact(values: Sequence[Fraction], floats: np.ndarray | None = None) -> list[Fraction]:
    """Return ``values`` in ascending exact order.

    Correct rounding is monotone: ``x < y`` implies ``float(x) <= float(y)``.
    So a sort by the floats is already the exact order except inside runs of
    equal floats, and only those runs are re-sorted with exact comparisons.

    Args:
        values: the fractions to sort.
        floats: their correctly rounded floats, if already computed.
    """
    n = len(values)
    if n == 0:
        return []
    f = float_array(values) if floats is None else floats
    order = np.argsort(f, kind="stable")
    fs = f[order]
    out = [values[i] for i in order.tolist()]
    equal_next = np.flatnonzero(fs[1:] == fs[:-1])
    if equal_next.size == 0:
        return out
    # Runs of equal floats: [start, stop) ranges in sorted position.
    breaks = np.flatnonzero(np.diff(equal_next) != 1)
    starts = np.concatenate(([equal_next[0]], equal_next[breaks + 1]))
    stops = np.concatenate((equal_next[breaks], [equal_next[-1]])) + 2
    for start, stop in zip(starts.tolist(), stops.tolist(), strict=True):
        out[start:stop] = sorted(out[start:stop])
    return out


@dataclass(frozen=True, slots=True, eq=False)
class ExactVector:
    """A sequence of fractions prepared for fast exact weighted sums.

    Build it with :meth:`build`. The arrays are private to this object and
    never modified after construction.

    Attributes:
        values: the fractions, in the caller's order.
        floats: their correctly rounded ``float64`` values.
        path: which exact path :meth:`weighted_sum` uses for weights that sum
            to at most ``len(values)`` (one of ``PATH_*``).
        common_denominator: ``D`` on the common-denominator path, else None.
        scaled: ``int64`` numerators over ``D`` on that path, else None.
        max_abs: an upper bound on ``|x_i|`` as a float (for error bounds).
    """

    values: tuple[Fraction, ...]
    floats: np.ndarray
    path: str
    common_denominator: int | None
    scaled: np.ndarray | None
    max_abs: float
    _order: np.ndarray
    _group_starts: np.ndarray
    _group_dens: tuple[int, ...]
    _sorted_nums: np.ndarray | None
    _sorted_nums_py: tuple[int, ...]
    _max_num: int
    _max_scaled: int
    _limit: int

    @classmethod
    def build(
        cls,
        values: Sequence[Fraction],
        floats: np.ndarray | None = None,
        *,
        limit: int = INT64_MAX,
    ) -> ExactVector:
        """Prepare ``values`` for weighted sums.

        Args:
            values: the fractions (at least one).
            floats: their correctly rounded floats, if already computed.
            limit: the largest magnitude an intermediate ``int64`` sum may
                reach. Only tests lower it, to force the slower paths on
                small inputs.
        """
        vals = tuple(values)
        n = len(vals)
        if n == 0:
            raise ValueError("an exact vector needs at least one value")
        f = float_array(vals) if floats is None else np.asarray(floats, dtype=np.float64)
        nums = [v.numerator for v in vals]
        dens = [v.denominator for v in vals]
        # |x| <= |float(x)| (1 + 2**-53) + 2**-1075 for a correctly rounded float.
        max_abs = float(np.max(np.abs(f))) * (1.0 + 2.0**-50) + 2.0**-1074

        distinct = sorted(set(dens))
        common: int | None = None
        scaled: np.ndarray | None = None
        max_scaled = 0
        lcm = 1
        for d in distinct:
            lcm = math.lcm(lcm, d)
            if lcm > limit:
                break
        if lcm <= limit:
            scaled_py = [a * (lcm // b) for a, b in zip(nums, dens, strict=True)]
            max_scaled = max(max(scaled_py), -min(scaled_py))
            if n * max_scaled <= limit:
                common = lcm
                scaled = np.array(scaled_py, dtype=np.int64)

        order = np.array(sorted(range(n), key=dens.__getitem__), dtype=np.intp)
        sorted_dens = [dens[i] for i in order.tolist()]
        starts = [0] + [k for k in range(1, n) if sorted_dens[k] != sorted_dens[k - 1]]
        sorted_nums_py = tuple(nums[i] for i in order.tolist())
        max_num = max(max(sorted_nums_py), -min(sorted_nums_py))
        sorted_nums = (
            np.array(sorted_nums_py, dtype=np.int64) if n * max_num <= limit else None
        )
        if common is not None:
            path = PATH_COMMON
        elif sorted_nums is not None:
            path = PATH_GROUPED
        else:
            path = PATH_PYTHON
        return cls(
            values=vals,
            floats=f,
            path=path,
            common_denominator=common,
            scaled=scaled,
            max_abs=max_abs,
            _order=order,
            _group_starts=np.array(starts, dtype=np.intp),
            _group_dens=tuple(sorted_dens[s] for s in starts),
            _sorted_nums=sorted_nums,
            _sorted_nums_py=sorted_nums_py,
            _max_num=max_num,
            _max_scaled=max_scaled,
            _limit=limit,
        )

    def __len__(self) -> int:
        return len(self.values)

    def total(self) -> Fraction:
        """Return the exact sum of all values."""
        return self.weighted_sum(np.ones(len(self.values), dtype=np.int64))

    def weighted_sum(self, counts: np.ndarray) -> Fraction:
        """Return ``sum(counts[i] * values[i])`` exactly.

        Args:
            counts: non-negative integer weights, one per value (for a
                bootstrap resample, how often each value was drawn).
        """
        c = np.asarray(counts, dtype=np.int64)
        if c.shape != (len(self.values),):
            raise ValueError("one count per value is required")
        if c.size and int(c.min()) < 0:
            raise ValueError("counts must be non-negative")
        weight = int(c.sum())
        if self.scaled is not None and self.common_denominator is not None:
            if weight * self._max_scaled <= self._limit:
                return Fraction(int(np.dot(c, self.scaled)), self.common_denominator)
        dens = self._group_dens
        c_sorted = c[self._order]
        if self._sorted_nums is not None and weight * self._max_num <= self._limit:
            group_sums = np.add.reduceat(c_sorted * self._sorted_nums, self._group_starts)
            return combine_ratios(group_sums.tolist(), dens)
        weights = c_sorted.tolist()
        bounds = self._group_starts.tolist() + [len(weights)]
        group_sums_py = [
            sum(w * a for w, a in zip(weights[s:e], self._sorted_nums_py[s:e], strict=True))
            for s, e in zip(bounds[:-1], bounds[1:], strict=True)
        ]
        return combine_ratios(group_sums_py, dens)
