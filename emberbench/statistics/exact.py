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
import operator
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


FLOAT_EXACT = 1 << 53
"""Integers up to this magnitude convert to ``float64`` exactly."""


def int_array(values: Sequence[int] | np.ndarray) -> np.ndarray:
    """``values`` as an ``int64`` array when every one fits, else as an object array of Python ints."""
    if isinstance(values, np.ndarray) and values.dtype == np.int64 and (not len(values) or int(values.min()) >= -INT64_MAX):
        return values
    items = [int(v) for v in values]
    if all(-INT64_MAX <= v <= INT64_MAX for v in items):
        return np.array(items, dtype=np.int64)
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def ratio_floats(numerators: np.ndarray, denominators: np.ndarray) -> np.ndarray:
    """The correctly rounded ``float64`` of every ``numerators[i] / denominators[i]``.

    Both sides convert to ``float64`` exactly below 2**53, and one IEEE
    division of exact operands is correctly rounded; larger integers use
    Python's correctly rounded integer division (as ``float(Fraction)`` does).
    """
    if (numerators.dtype == np.int64 and denominators.dtype == np.int64 and len(numerators)
            and int(np.abs(numerators).max()) <= FLOAT_EXACT and int(denominators.max()) <= FLOAT_EXACT):
        return numerators.astype(np.float64) / denominators.astype(np.float64)
    return np.fromiter((a / b for a, b in zip(numerators.tolist(), denominators.tolist(), strict=True)),
                       dtype=np.float64, count=len(numerators))


@dataclass(frozen=True, slots=True, eq=False)
class ExactVector:
    """A sequence of fractions prepared for fast exact sums and order statistics.

    Build it with :meth:`build` (from ``Fraction`` objects) or
    :meth:`from_parts` (from numerators and denominators, so that no
    ``Fraction`` is made per value). The arrays are private to this object
    and never modified after construction.

    Attributes:
        numerators: the numerators in the caller's order (``int64``, or an
            object array of Python ints when one does not fit).
        denominators: the positive denominators (same form), in lowest terms
            with the numerators.
        floats: the correctly rounded ``float64`` of each value.
        path: which exact path :meth:`weighted_sum` uses for weights that sum
            to at most ``len(self)`` (one of ``PATH_*``).
        common_denominator: ``D`` on the common-denominator path, else None.
        scaled: ``int64`` numerators over ``D`` on that path, else None.
        max_abs: an upper bound on ``|x_i|`` as a float (for error bounds).
    """

    numerators: np.ndarray
    denominators: np.ndarray
    floats: np.ndarray
    path: str
    common_denominator: int | None
    scaled: np.ndarray | None
    max_abs: float
    _order: np.ndarray
    _group_starts: np.ndarray
    _group_dens: tuple[int, ...]
    _sorted_nums: np.ndarray | None
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
        return cls.from_parts([v.numerator for v in vals], [v.denominator for v in vals], floats, limit=limit)

    @classmethod
    def from_parts(
        cls,
        numerators: Sequence[int] | np.ndarray,
        denominators: Sequence[int] | np.ndarray,
        floats: np.ndarray | None = None,
        *,
        limit: int = INT64_MAX,
    ) -> ExactVector:
        """Prepare the values ``numerators[i] / denominators[i]`` (each in lowest terms, denominator > 0).

        Gives the same vector as :meth:`build` of the equal fractions.
        """
        nums, dens = int_array(numerators), int_array(denominators)
        n = len(nums)
        if n == 0:
            raise ValueError("an exact vector needs at least one value")
        if len(dens) != n:
            raise ValueError("numerators and denominators differ in length")
        f = ratio_floats(nums, dens) if floats is None else np.asarray(floats, dtype=np.float64)
        # |x| <= |float(x)| (1 + 2**-53) + 2**-1075 for a correctly rounded float.
        max_abs = float(np.max(np.abs(f))) * (1.0 + 2.0**-50) + 2.0**-1074
        wide = nums.dtype != np.int64 or dens.dtype != np.int64

        distinct = sorted(set(np.unique(dens).tolist()))
        common: int | None = None
        scaled: np.ndarray | None = None
        max_scaled = 0
        lcm = 1
        for d in distinct:
            lcm = math.lcm(lcm, d)
            if lcm > limit:
                break
        if lcm <= limit:
            if not wide:
                mult = lcm // dens
                fits = bool(np.all(np.abs(nums) <= limit // mult))
                candidate = nums * mult if fits else None
                top = int(np.abs(candidate).max()) if candidate is not None else limit + 1
            else:
                scaled_py = [a * (lcm // b) for a, b in zip(nums.tolist(), dens.tolist(), strict=True)]
                top = max(max(scaled_py), -min(scaled_py))
                candidate = np.array(scaled_py, dtype=np.int64) if top <= limit else None
            if candidate is not None and n * top <= limit:
                common, scaled, max_scaled = lcm, candidate, top

        order = np.argsort(dens, kind="stable")
        sorted_dens = dens[order]
        starts = np.flatnonzero(np.concatenate(([True], sorted_dens[1:] != sorted_dens[:-1])))
        sorted_nums_all = nums[order]
        max_num = max(int(np.max(sorted_nums_all)), -int(np.min(sorted_nums_all)))
        sorted_nums = sorted_nums_all if not wide and n * max_num <= limit else None
        if common is not None:
            path = PATH_COMMON
        elif sorted_nums is not None:
            path = PATH_GROUPED
        else:
            path = PATH_PYTHON
        return cls(
            numerators=nums,
            denominators=dens,
            floats=f,
            path=path,
            common_denominator=common,
            scaled=scaled,
            max_abs=max_abs,
            _order=order.astype(np.intp),
            _group_starts=starts.astype(np.intp),
            _group_dens=tuple(int(d) for d in sorted_dens[starts].tolist()),
            _sorted_nums=sorted_nums,
            _max_num=max_num,
            _max_scaled=max_scaled,
            _limit=limit,
        )

    def __len__(self) -> int:
        return len(self.numerators)

    @property
    def values(self) -> tuple[Fraction, ...]:
        """The values as ``Fraction`` objects (made on request; the vector itself holds none)."""
        return tuple(Fraction(a, b) for a, b in zip(self.numerators.tolist(), self.denominators.tolist(), strict=True))

    def value(self, i: int) -> Fraction:
        """The ``i``-th value exactly."""
        return Fraction(int(self.numerators[i]), int(self.denominators[i]))

    def total(self) -> Fraction:
        """Return the exact sum of all values."""
        return self.weighted_sum(np.ones(len(self), dtype=np.int64))

    def sum_of_squares(self) -> Fraction:
        """Return ``sum(v * v)`` exactly (Python integers; no ``Fraction`` per value)."""
        if self.scaled is not None and self.common_denominator is not None:
            squares = self.scaled.tolist()
            return Fraction(sum(map(operator.mul, squares, squares)), self.common_denominator ** 2)
        nums = self.numerators.tolist()
        dens = self.denominators.tolist()
        return sum_parts(list(map(operator.mul, nums, nums)), list(map(operator.mul, dens, dens)))

    def order_statistics(self, ranks: Sequence[int]) -> dict[int, Fraction]:
        """The values at 0-based ``ranks`` of the ascending exact order.

        On the common-denominator path the ``int64`` numerators are sorted.
        Otherwise the floats are sorted (correct rounding is monotone) and
        only the run of equal floats around each rank is ordered exactly.
        """
        n = len(self)
        if any(not 0 <= r < n for r in ranks):
            raise ValueError("rank out of range")
        if self.scaled is not None and self.common_denominator is not None:
            ordered = np.sort(self.scaled, kind="stable")
            return {r: Fraction(int(ordered[r]), self.common_denominator) for r in ranks}
        order = np.argsort(self.floats, kind="stable")
        fs = self.floats[order]
        out: dict[int, Fraction] = {}
        for r in ranks:
            low = int(np.searchsorted(fs, fs[r], side="left"))
            high = int(np.searchsorted(fs, fs[r], side="right"))
            run = [self.value(int(i)) for i in order[low:high].tolist()]
            out[r] = sorted(run)[r - low] if len(run) > 1 else run[0]
        return out

    def weighted_sum(self, counts: np.ndarray) -> Fraction:
        """Return ``sum(counts[i] * values[i])`` exactly.

        Args:
            counts: non-negative integer weights, one per value (for a
                bootstrap resample, how often each value was drawn).
        """
        c = np.asarray(counts, dtype=np.int64)
        if c.shape != (len(self),):
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
        sorted_nums = self.numerators[self._order].tolist()
        bounds = self._group_starts.tolist() + [len(weights)]
        group_sums_py = [
            sum(w * a for w, a in zip(weights[s:e], sorted_nums[s:e], strict=True))
            for s, e in zip(bounds[:-1], bounds[1:], strict=True)
        ]
        return combine_ratios(group_sums_py, dens)
