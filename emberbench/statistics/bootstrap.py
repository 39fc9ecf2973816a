"""Exact 95 % percentile bootstrap intervals for a mean.

For ``n >= 5`` values and ``R`` resamples, resample ``r`` takes the indices
``r*n .. r*n + n - 1`` of the seed's :class:`~.stream.IndexStream`, and its
mean is the exact mean of the selected values. The bounds are the type-7
quantiles at 1/40 and 39/40 of the ``R`` sorted exact means.

Only four order statistics of the ``R`` means are ever needed, and this module
finds them exactly by one of two routes:

* **Common denominator.** When every value is an ``int64`` numerator over one
  denominator ``D`` with room for ``n`` of them (see :mod:`.exact`), each
  resample sum is an exact ``int64``; the sums are sorted as integers.
* **Float filter, exact selection.** Otherwise each resample sum is computed
  in ``float64`` together with a proven bound ``delta`` on its error. A
  resample whose float sum lies more than ``2 * delta`` below (above) the
  float order statistic is certainly below (above) the exact one, so only the
  few resamples inside that window are drawn again from their recorded stream
  position and summed exactly (grouped by denominator). Their exact order
  decides the result.

Resamples are processed in batches of about a million drawn indices, so the
working memory depends on ``n`` but not on ``R``; what grows with ``R`` is one
number (and, on the float route, one stream position) per resample.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .descriptive import type7_position
from .exact import ExactVector
from .stream import IndexStream

LEVEL = Fraction(95, 100)
LOWER_P = Fraction(1, 40)
UPPER_P = Fraction(39, 40)
MIN_N = 5
MIN_RESAMPLES = 100
MAX_RESAMPLES = 1_000_000
BATCH_INDICES = 1 << 20
"""About this many indices are drawn and summed per batch."""

_UNIT_ROUNDOFF = 2.0**-53


@dataclass(frozen=True, slots=True)
class BootstrapInterval:
    """A percentile bootstrap interval for a mean.

    Attributes:
        statistic: ``mean`` (aggregate) or ``mean_delta`` (paired).
        resamples: the number of resamples ``R``.
        seed: the 32-byte stream seed.
        lower: exact type-7 quantile at 1/40 of the resample means.
        upper: exact type-7 quantile at 39/40 of the resample means.
    """

    statistic: str
    resamples: int
    seed: bytes
    lower: Fraction
    upper: Fraction

    def to_dict(self) -> dict[str, Any]:
        """Return the output form (bounds as correctly rounded floats, seed as hex)."""
        return {
            "method": "percentile",
            "statistic": self.statistic,
            "level": float(LEVEL),
            "resamples": self.resamples,
            "seed": self.seed.hex(),
            "lower": float(self.lower),
            "upper": float(self.upper),
        }


def bootstrap_interval(
    values: ExactVector, *, seed: bytes, resamples: int, statistic: str
) -> BootstrapInterval | None:
    """Return the 95 % percentile bootstrap interval of the mean of ``values``.

    Args:
        values: the defined values (aggregate) or paired deltas.
        seed: the stream seed (see :func:`.stream.bootstrap_seed`).
        resamples: ``R``, an integer in ``[100, 1_000_000]``.
        statistic: the label stored in the interval.

    Returns:
        The interval, or None when fewer than 5 values are given.
    """
    if not MIN_RESAMPLES <= resamples <= MAX_RESAMPLES:
        raise ValueError(f"resamples must be in [{MIN_RESAMPLES}, {MAX_RESAMPLES}]")
    n = len(values)
    if n < MIN_N:
        return None
    ranks = _needed_ranks(resamples)
    if values.scaled is not None and values.common_denominator is not None:
        sums = _order_statistics_common(values, seed, resamples, ranks)
    else:
        sums = _order_statistics_filtered(values, seed, resamples, ranks)
    lower = _bound(sums, resamples, LOWER_P) / n
    upper = _bound(sums, resamples, UPPER_P) / n
    return BootstrapInterval(statistic, resamples, seed, lower, upper)


def _needed_ranks(resamples: int) -> tuple[int, ...]:
    ranks: list[int] = []
    for p in (LOWER_P, UPPER_P):
        j, g = type7_position(resamples, p)
        ranks.append(j)
        if g:
            ranks.append(j + 1)
    return tuple(sorted(set(ranks)))


def _bound(sums: dict[int, Fraction], resamples: int, p: Fraction) -> Fraction:
    """Type-7 quantile of the sorted resample sums, from the needed order statistics."""
    j, g = type7_position(resamples, p)
    low = sums[j]
    return low if g == 0 else low + g * (sums[j + 1] - low)


def _batch_size(n: int) -> int:
    return max(1, BATCH_INDICES // n)


def _order_statistics_common(
    values: ExactVector, seed: bytes, resamples: int, ranks: tuple[int, ...]
) -> dict[int, Fraction]:
    """Exact resample sums at ``ranks`` when every sum is an ``int64`` over ``D``."""
    n = len(values)
    scaled = values.scaled
    assert scaled is not None and values.common_denominator is not None
    stream = IndexStream(seed, n)
    sums = np.empty(resamples, dtype=np.int64)
    step = _batch_size(n)
    for start in range(0, resamples, step):
        size = min(step, resamples - start)
        idx, _, _ = stream.take(size * n)
        sums[start:start + size] = np.take(scaled, idx).reshape(size, n).sum(axis=1)
        del idx  # free this batch before the next one is drawn
    picked = np.partition(sums, ranks)
    den = values.common_denominator
    return {r: Fraction(int(picked[r]), den) for r in ranks}


def _error_bound(values: ExactVector) -> float:
    """An upper bound on ``|float sum - exact sum|`` for any ``n`` drawn values.

    Each value's float is within ``u |x|`` of it and any order of ``n - 1``
    float additions adds at most ``(n - 1) u / (1 - (n - 1) u)`` times the sum
    of magnitudes (``u = 2**-53``); subnormal rounding adds at most ``2**-1074``
    per operation. The result is doubled as a margin for the rounding of the
    window arithmetic itself.
    """
    n = len(values)
    u = _UNIT_ROUNDOFF
    magnitude = n * values.max_abs * (1.0 + u)
    gamma = (n - 1) * u / (1.0 - (n - 1) * u)
    return 2.0 * (n * u * values.max_abs + gamma * magnitude + 2 * n * 2.0**-1074)


def _order_statistics_filtered(
    values: ExactVector, seed: bytes, resamples: int, ranks: tuple[int, ...]
) -> dict[int, Fraction]:
    """Exact resample sums at ``ranks`` via float sums and an exact re-check."""
    n = len(values)
    stream = IndexStream(seed, n)
    approx = np.empty(resamples, dtype=np.float64)
    at_block = np.empty(resamples, dtype=np.int64)
    at_offset = np.empty(resamples, dtype=np.int64)
    step = _batch_size(n)
    for start in range(0, resamples, step):
        size = min(step, resamples - start)
        idx, blocks, offsets = stream.take(size * n, mark_step=n)
        assert blocks is not None and offsets is not None
        approx[start:start + size] = np.take(values.floats, idx).reshape(size, n).sum(axis=1)
        at_block[start:start + size] = blocks
        at_offset[start:start + size] = offsets
        del idx  # free this batch before the next one is drawn

    order = np.argsort(approx, kind="stable")
    ordered = approx[order]
    delta = _error_bound(values)
    exact: dict[int, Fraction] = {}

    def exact_sum(r: int) -> Fraction:
        if r not in exact:
            redraw = IndexStream(seed, n, block=int(at_block[r]), offset=int(at_offset[r]))
            idx, _, _ = redraw.take(n)
            exact[r] = values.weighted_sum(np.bincount(idx, minlength=n))
        return exact[r]

    finite = bool(np.isfinite(delta)) and bool(np.isfinite(ordered).all())
    out: dict[int, Fraction] = {}
    for rank in ranks:
        if not finite:
            low, high = 0, resamples
        else:
            centre = float(ordered[rank])
            low = int(np.searchsorted(ordered, centre - 2 * delta, side="left"))
            high = int(np.searchsorted(ordered, centre + 2 * delta, side="right"))
        # Resamples before ``low`` are certainly below the exact order
        # statistic and those from ``high`` on certainly above it.
        window = sorted(exact_sum(int(r)) for r in order[low:high].tolist())
        value = window[rank - low]
        if finite and abs(float(value) - float(ordered[rank])) > 2 * delta:
            raise ArithmeticError("bootstrap float filter violated its error bound")
        out[rank] = value
    return out
