"""Bootstrap intervals: the fast routes equal a direct reading of the spec, exactly."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

import emberbench.statistics.bootstrap as bootstrap_mod
from emberbench.statistics.bootstrap import bootstrap_interval
from emberbench.statistics.exact import PATH_COMMON, PATH_GROUPED, PATH_PYTHON, ExactVector
from emberbench.statistics.stream import bootstrap_seed
from stats_reference import ref_interval


def _seed(tag: str, resamples: int) -> bytes:
    return bootstrap_seed(
        purpose="aggregate_mean", evaluation_manifest_hash="e" * 64, result_digests=["a" * 64],
        group_kind="overall", group_name="overall", metric=tag, resamples=resamples,
    )


def _values(seed: int, n: int, max_den: int, max_num: int) -> list[Fraction]:
    rng = random.Random(seed)
    return [Fraction(rng.randint(-max_num, max_num), rng.randint(1, max_den)) for _ in range(n)]


CASES = [
    # (label, values, limit, expected path)
    ("small-denominators", _values(1, 9, 6, 10), (1 << 63) - 1, PATH_COMMON),
    ("wide-denominators-forced", _values(2, 12, 40, 40), 5_000, PATH_GROUPED),
    ("lcm-beyond-int64", [Fraction(1, p) for p in (2**61 - 1, 2**31 - 1, 1_000_003, 7, 999_983)]
     + [Fraction(3, 2**61 - 1)], (1 << 63) - 1, PATH_GROUPED),
    ("python-int-forced", _values(3, 8, 5, 30), 60, PATH_PYTHON),
    ("huge-numerators", [Fraction(2**70 + k, 3 + k % 2) for k in range(7)], (1 << 63) - 1, PATH_PYTHON),
    ("many-ties-filtered", [Fraction(1, 3 + 2 * (k % 2)) for k in range(10)], 20, PATH_GROUPED),
    ("negative-deltas", [Fraction(-k, 3) for k in range(6)], (1 << 63) - 1, PATH_COMMON),
]


@pytest.mark.parametrize(("label", "values", "limit", "path"), CASES, ids=[c[0] for c in CASES])
def test_fast_interval_equals_reference(label, values, limit, path):
    """Every route (int64 sums, float filter with exact re-check, Python ints) equals the reference."""
    vector = ExactVector.build(values, limit=limit)
    assert vector.path == path
    for resamples in (100, 137):
        seed = _seed(label, resamples)
        interval = bootstrap_interval(vector, seed=seed, resamples=resamples, statistic="mean")
        assert interval is not None
        assert (interval.lower, interval.upper) == ref_interval(values, seed, resamples)
        assert interval.lower <= interval.upper


def test_small_batches_give_the_same_interval(monkeypatch):
    """Splitting the resamples into tiny batches changes nothing (batching is invisible)."""
    values = _values(5, 11, 9, 20)
    seed = _seed("batch", 150)
    whole = bootstrap_interval(ExactVector.build(values), seed=seed, resamples=150, statistic="mean")
    filtered = bootstrap_interval(ExactVector.build(values, limit=50), seed=seed, resamples=150, statistic="mean")
    monkeypatch.setattr(bootstrap_mod, "BATCH_INDICES", 7)
    small = bootstrap_interval(ExactVector.build(values), seed=seed, resamples=150, statistic="mean")
    small_filtered = bootstrap_interval(ExactVector.build(values, limit=50), seed=seed, resamples=150, statistic="mean")
    assert whole == small == filtered == small_filtered


def test_interval_is_null_below_five_values():
    """With n < 5 there is no interval; with n = 5 there is one."""
    seed = _seed("n", 100)
    four = ExactVector.build([Fraction(k) for k in range(4)])
    five = ExactVector.build([Fraction(k) for k in range(5)])
    assert bootstrap_interval(four, seed=seed, resamples=100, statistic="mean") is None
    assert bootstrap_interval(five, seed=seed, resamples=100, statistic="mean") is not None


@pytest.mark.parametrize("resamples", [99, 1_000_001])
def test_resamples_out_of_range_are_refused(resamples):
    """R outside [100, 1_000_000] is refused before any work."""
    with pytest.raises(ValueError, match="resamples"):
        bootstrap_interval(ExactVector.build([Fraction(1)] * 5), seed=b"\0" * 32,
                           resamples=resamples, statistic="mean")


def test_to_dict_shows_seed_as_hex_and_bounds_as_floats():
    """The output form has the seed in hex and correctly rounded float bounds."""
    values = [Fraction(k, 3) for k in range(8)]
    seed = _seed("dict", 100)
    interval = bootstrap_interval(ExactVector.build(values), seed=seed, resamples=100, statistic="mean")
    assert interval is not None
    form = interval.to_dict()
    assert form == {
        "method": "percentile", "statistic": "mean", "level": 0.95, "resamples": 100,
        "seed": seed.hex(), "lower": float(interval.lower), "upper": float(interval.upper),
    }


@pytest.mark.parametrize("limit", [(1 << 63) - 1, 1000], ids=["int64-sums", "float-filter"])
def test_memory_does_not_grow_with_the_draws(limit):
    """Ten times more resamples add only a few bytes per resample, never the n x R index matrix."""
    import tracemalloc

    n = 2000
    vector = ExactVector.build([Fraction(k % 7, 3 + k % 5) for k in range(n)], limit=limit)
    peaks = []
    for resamples in (600, 6000):
        tracemalloc.start()
        bootstrap_interval(vector, seed=_seed("memory", resamples), resamples=resamples, statistic="mean")
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] - peaks[0] < 2 * 2**20  # the full index matrix would be about 96 MB
