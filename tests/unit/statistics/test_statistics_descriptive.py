"""Descriptive statistics: exact type-7 quantiles, sample variance, nulls."""

from __future__ import annotations

import math
import random
import statistics
from fractions import Fraction

import numpy as np
import pytest

from emberbench.statistics import describe, type7_quantile
from emberbench.statistics.descriptive import type7_position
from stats_reference import ref_describe


def test_section_4_worked_example():
    """For 1, 2, 3, 4: p25 1.75, p50 2.5, p75 3.25, p90 3.7, p95 3.85, variance 5/3."""
    d = describe([Fraction(v) for v in (4, 2, 1, 3)])
    assert d.quantiles == (Fraction(7, 4), Fraction(5, 2), Fraction(13, 4), Fraction(37, 10), Fraction(77, 20))
    assert d.variance == Fraction(5, 3)
    assert d.median == Fraction(5, 2) and d.mean == Fraction(5, 2)
    assert (d.min, d.max, d.n) == (1, 4, 4)
    assert d.to_dict()["quantiles"] == {"p25": 1.75, "p50": 2.5, "p75": 3.25, "p90": 3.7, "p95": 3.85}
    assert d.to_dict()["std"] == math.sqrt(float(Fraction(5, 3)))


@pytest.mark.parametrize("seed", range(8))
def test_quantiles_and_variance_agree_with_numpy_and_statistics(seed):
    """Random data: quantiles match numpy's linear method, variance matches statistics.variance exactly."""
    rng = random.Random(seed)
    n = rng.randint(1, 60)
    values = [Fraction(rng.randint(-1000, 1000), rng.randint(1, 64)) for _ in range(n)]
    d = describe(values)
    floats = np.array([float(v) for v in values])
    for (p, q) in zip((0.25, 0.5, 0.75, 0.9, 0.95), d.quantiles):
        assert float(q) == pytest.approx(float(np.quantile(floats, p, method="linear")), rel=1e-12, abs=1e-12)
    if n >= 2:
        assert d.variance == statistics.variance(values)
    else:
        assert d.variance is None and d.std is None
    reference = ref_describe(values)
    assert (d.mean, d.median, d.variance, d.min, d.max, d.quantiles) == (
        reference["mean"], reference["median"], reference["variance"],
        reference["min"], reference["max"], reference["quantiles"],
    )


def test_empty_and_single_value_are_null_not_zero():
    """n = 0 gives nulls everywhere; n = 1 gives every quantile equal to the value and no variance."""
    empty = describe([])
    assert empty.n == 0
    assert empty.to_dict() == {
        "n": 0, "mean": None, "median": None, "variance": None, "std": None, "min": None,
        "max": None, "quantiles": {"p25": None, "p50": None, "p75": None, "p90": None, "p95": None},
    }
    one = describe([Fraction(2, 3)])
    assert one.quantiles == (Fraction(2, 3),) * 5 and one.variance is None and one.mean == Fraction(2, 3)


def test_type7_position_and_level_checks():
    """h = (n - 1) p split into floor and fraction; levels outside [0, 1] are refused."""
    assert type7_position(2000, Fraction(1, 40)) == (49, Fraction(39, 40))
    assert type7_position(5, Fraction(1)) == (4, 0)
    assert type7_quantile([Fraction(1), Fraction(3)], Fraction(1, 4)) == Fraction(3, 2)
    with pytest.raises(ValueError):
        type7_position(3, Fraction(-1, 2))
    with pytest.raises(ValueError):
        type7_position(0, Fraction(1, 2))
