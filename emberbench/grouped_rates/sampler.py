"""``sha256-counter-rejection-v1``: reproducible task indices from a seed.

The definition (also stated in ``contract.json``):

* block ``c`` (``c = 0, 1, 2, ...``) is
  ``SHA-256(SAMPLER_DOMAIN || seed.to_bytes(8, "big") || c.to_bytes(8, "big"))``;
* each 32-byte block yields eight 32-bit words, big-endian, consumed in order;
* an index in ``[0, n)`` takes the next word ``w`` and returns ``w % n`` when
  ``w < (2**32 // n) * n``; otherwise it discards ``w`` and tries the next
  word, so every index has exactly the same probability;
* draw ``r`` is the next ``n`` indices of the single stream.

Only SHA-256 and integer arithmetic are involved, so the same seed gives the
same draws on every platform and Python build.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator

from ..errors import GroupedRatesError
from .contract import MAX_SEED, SAMPLER_DOMAIN

_WORD_SPACE = 2**32


def words(seed: int) -> Iterator[int]:
    """Yield the endless stream of 32-bit words for ``seed``."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise GroupedRatesError(f"sampler seed must be an integer in [0, {MAX_SEED}]")
    prefix = SAMPLER_DOMAIN + seed.to_bytes(8, "big")
    counter = 0
    while True:
        block = hashlib.sha256(prefix + counter.to_bytes(8, "big")).digest()
        for j in range(0, 32, 4):
            yield int.from_bytes(block[j : j + 4], "big")
        counter += 1


def indices(seed: int, n: int) -> Iterator[int]:
    """Yield the endless stream of uniform indices in ``[0, n)`` for ``seed``.

    Raises:
        GroupedRatesError: if ``n`` is outside ``[1, 2**32]``.
    """
    if not 1 <= n <= _WORD_SPACE:
        raise GroupedRatesError(f"sampler needs 1 <= n <= 2**32, got {n}")
    limit = (_WORD_SPACE // n) * n
    for w in words(seed):
        if w < limit:
            yield w % n


def task_draws(seed: int, n_tasks: int, replicates: int) -> Iterator[tuple[int, ...]]:
    """Yield ``replicates`` draws, each a tuple of ``n_tasks`` indices in ``[0, n_tasks)``.

    Raises:
        GroupedRatesError: if ``n_tasks`` is outside ``[1, 2**32]`` or
            ``replicates`` is negative.
    """
    if replicates < 0:
        raise GroupedRatesError(f"sampler replicates must be >= 0, got {replicates}")
    stream = indices(seed, n_tasks)
    for _ in range(replicates):
        yield tuple(itertools.islice(stream, n_tasks))
