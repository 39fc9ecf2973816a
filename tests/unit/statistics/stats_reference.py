"""A slow, plain reading of the statistics spec, used only to check the fast code.

Nothing here is shared with ``emberbench.statistics`` except the spec itself:
sums are ``Fraction`` sums, the stream is read word by word with ``hashlib``
and ``int.from_bytes``, and every resample mean is sorted as a ``Fraction``.
"""

from __future__ import annotations

import hashlib
import json
import math
from fractions import Fraction

PREFIX = b"emberbench/statistics/bootstrap/v1\x00"


def ref_seed(purpose, manifest_hash, digests, kind, name, metric, resamples):
    """The stream seed: SHA-256 of the canonical JSON of the seven keys."""
    obj = {
        "statistics_version": "1.0",
        "purpose": purpose,
        "evaluation_manifest_hash": manifest_hash,
        "result_digests": list(digests),
        "group": [kind, name],
        "metric": metric,
        "resamples": resamples,
    }
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).digest()


def ref_words(seed):
    """Yield the stream's 64-bit words, one at a time, forever."""
    k = 0
    while True:
        block = hashlib.shake_256(PREFIX + seed + k.to_bytes(8, "big")).digest(4096)
        for i in range(512):
            yield int.from_bytes(block[8 * i: 8 * i + 8], "big")
        k += 1


def ref_indices(seed, n):
    """Yield accepted indices in [0, n) by rejection sampling."""
    bound = 2**64 - (2**64 % n)
    for word in ref_words(seed):
        if word < bound:
            yield word % n


def ref_quantile(sorted_values, p):
    """Type-7 quantile, straight from the formula."""
    n = len(sorted_values)
    h = (n - 1) * Fraction(p)
    j = math.floor(h)
    g = h - j
    if g == 0:
        return Fraction(sorted_values[j])
    return sorted_values[j] + g * (sorted_values[j + 1] - sorted_values[j])


def ref_interval(values, seed, resamples):
    """(lower, upper) exact bounds of the percentile bootstrap, or None if n < 5."""
    n = len(values)
    if n < 5:
        return None
    stream = ref_indices(seed, n)
    means = []
    for _ in range(resamples):
        total = Fraction(0)
        for _ in range(n):
            total += values[next(stream)]
        means.append(total / n)
    means.sort()
    return ref_quantile(means, Fraction(1, 40)), ref_quantile(means, Fraction(39, 40))


def ref_describe(values):
    """Exact mean, median, sample variance, min, max, quantiles (None where undefined)."""
    n = len(values)
    if n == 0:
        return None
    ordered = sorted(values)
    mean = sum(values, Fraction(0)) / n
    variance = None
    if n >= 2:
        variance = sum(((x - mean) ** 2 for x in values), Fraction(0)) / (n - 1)
    levels = [Fraction(1, 4), Fraction(1, 2), Fraction(3, 4), Fraction(9, 10), Fraction(19, 20)]
    return {
        "n": n,
        "mean": mean,
        "median": ref_quantile(ordered, Fraction(1, 2)),
        "variance": variance,
        "min": ordered[0],
        "max": ordered[-1],
        "quantiles": tuple(ref_quantile(ordered, p) for p in levels),
    }
