"""Property tests: the fast exact statistics equal plain Fraction arithmetic and the spec reading."""

from __future__ import annotations

import importlib.util
import statistics
from fractions import Fraction
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from emberbench.statistics import describe
from emberbench.statistics.bootstrap import bootstrap_interval
from emberbench.statistics.exact import ExactVector, sort_exact
from emberbench.statistics.stream import bootstrap_seed

from tests.hypothesis_profiles import examples

_REF_PATH = Path(__file__).resolve().parents[1] / "unit" / "statistics" / "stats_reference.py"
_spec = importlib.util.spec_from_file_location("stats_reference_for_properties", _REF_PATH)
assert _spec is not None and _spec.loader is not None
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)

PROFILE = settings(derandomize=True, deadline=None, max_examples=examples(60))

fractions = st.builds(
    Fraction,
    st.integers(min_value=-10**6, max_value=10**6),
    st.one_of(st.integers(min_value=1, max_value=12), st.integers(min_value=1, max_value=10**9)),
)
# Limits that force the int64 common-denominator, grouped and Python-int routes.
limits = st.sampled_from([(1 << 63) - 1, 10**12, 10**7, 10**3])


@PROFILE
@given(values=st.lists(fractions, min_size=5, max_size=9), limit=limits, tag=st.integers(0, 10**6))
def test_bootstrap_equals_reference_on_every_route(values, limit, tag):
    """For any small input and any route, the interval equals the direct reading of section 8."""
    seed = bootstrap_seed(
        purpose="paired_mean_delta", evaluation_manifest_hash="e" * 64,
        result_digests=["a" * 64, "b" * 64], group_kind="family", group_name=f"f{tag}",
        metric="blocked_rate", resamples=100,
    )
    interval = bootstrap_interval(ExactVector.build(values, limit=limit), seed=seed,
                                  resamples=100, statistic="mean_delta")
    assert interval is not None
    assert (interval.lower, interval.upper) == reference.ref_interval(values, seed, 100)


@PROFILE
@given(values=st.lists(fractions, min_size=1, max_size=40), limit=limits, data=st.data())
def test_weighted_sums_equal_fraction_sums(values, limit, data):
    """weighted_sum equals the plain Fraction sum for any non-negative counts, on every route."""
    counts = data.draw(st.lists(st.integers(0, 5), min_size=len(values), max_size=len(values)))
    vector = ExactVector.build(values, limit=limit)
    expected = sum((c * v for c, v in zip(counts, values)), Fraction(0))
    assert vector.weighted_sum(np.array(counts, dtype=np.int64)) == expected


@PROFILE
@given(values=st.lists(fractions, min_size=1, max_size=60))
def test_descriptive_matches_numpy_statistics_and_reference(values):
    """Quantiles agree with numpy's linear method; the variance equals statistics.variance."""
    d = describe(values)
    ref = reference.ref_describe(values)
    assert (d.mean, d.median, d.variance, d.min, d.max, d.quantiles) == (
        ref["mean"], ref["median"], ref["variance"], ref["min"], ref["max"], ref["quantiles"],
    )
    floats = np.array([float(v) for v in values])
    expected = np.quantile(floats, [0.25, 0.5, 0.75, 0.9, 0.95], method="linear")
    scale = max(1.0, float(np.max(np.abs(floats))))
    assert np.allclose([float(q) for q in d.quantiles], expected, rtol=1e-12, atol=1e-12 * scale)
    if len(values) >= 2:
        assert d.variance == statistics.variance(values)


@PROFILE
@given(values=st.lists(st.one_of(fractions, st.builds(lambda k: Fraction(1) + Fraction(k, 2**70),
                                                         st.integers(-3, 3))), max_size=50))
def test_sort_exact_equals_sorted(values):
    """The float-first exact sort equals Python's exact sort, including float ties."""
    assert sort_exact(values) == sorted(values)
