"""Exact sums and sorting: every path equals plain Fraction arithmetic."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

from emberbench.statistics.exact import (
    PATH_COMMON,
    PATH_GROUPED,
    PATH_PYTHON,
    ExactVector,
    combine_ratios,
    sort_exact,
    sum_fractions,
    sum_of_squares,
)


def _values(seed: int, n: int, max_den: int, max_num: int = 50) -> list[Fraction]:
    rng = random.Random(seed)
    return [Fraction(rng.randint(-max_num, max_num), rng.randint(1, max_den)) for _ in range(n)]


@pytest.mark.parametrize(
    ("values", "limit", "path"),
    [
        (_values(1, 40, 12), (1 << 63) - 1, PATH_COMMON),
        (_values(2, 40, 5000), (1 << 63) - 1, PATH_GROUPED),
        (_values(3, 40, 12), 10_000, PATH_GROUPED),
        (_values(4, 40, 12), 100, PATH_PYTHON),
        ([Fraction(2**70 + 1, 3), Fraction(-(2**66), 5), Fraction(1, 7)], (1 << 63) - 1, PATH_PYTHON),
    ],
)
def test_weighted_sum_matches_fraction_sum_on_every_path(values, limit, path):
    """Each path (forced by the limit or by huge numerators) gives the exact weighted sum."""
    vector = ExactVector.build(values, limit=limit)
    assert vector.path == path
    rng = np.random.default_rng(5)
    for _ in range(5):
        counts = rng.integers(0, 4, size=len(values))
        expected = sum((int(c) * v for c, v in zip(counts, values)), Fraction(0))
        assert vector.weighted_sum(counts) == expected
    assert vector.total() == sum(values, Fraction(0))


def test_common_denominator_is_the_lcm_and_numerators_are_scaled():
    """On the int64 path the numerators are exact multiples over the lcm of the denominators."""
    vector = ExactVector.build([Fraction(1, 4), Fraction(5, 6), Fraction(-2, 3)])
    assert vector.common_denominator == 12
    assert vector.scaled is not None and vector.scaled.tolist() == [3, 10, -8]


def test_weighted_sum_rejects_bad_counts():
    """Counts must match the values one-to-one and be non-negative."""
    vector = ExactVector.build([Fraction(1, 2), Fraction(1, 3)])
    with pytest.raises(ValueError, match="one count per value"):
        vector.weighted_sum(np.array([1, 2, 3]))
    with pytest.raises(ValueError, match="non-negative"):
        vector.weighted_sum(np.array([1, -1]))


def test_sums_and_squares_equal_plain_fraction_arithmetic():
    """The grouped sum and sum of squares equal Fraction sums, for any input order."""
    values = _values(9, 300, 900, 10**6)
    assert sum_fractions(values) == sum(values, Fraction(0))
    assert sum_fractions(values[::-1]) == sum(values, Fraction(0))
    assert sum_of_squares(values) == sum((v * v for v in values), Fraction(0))
    assert combine_ratios([], []) == 0
    assert combine_ratios([1, 1, 1], [2, 3, 6]) == 1


def test_sort_exact_orders_values_whose_floats_are_equal():
    """Values that round to the same float are still sorted exactly."""
    tiny = Fraction(1, 2**80)
    values = [Fraction(1) + tiny, Fraction(1), Fraction(1) - tiny, Fraction(1) + 2 * tiny, Fraction(-3)]
    assert float(values[0]) == float(values[1]) == float(values[2])
    assert sort_exact(values) == sorted(values)
    assert sort_exact([]) == []
    mixed = _values(11, 500, 7, 3)
    assert sort_exact(mixed) == sorted(mixed)
