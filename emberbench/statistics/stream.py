"""The bootstrap's deterministic index stream.

A stream is fixed by a 32-byte seed and the number ``n`` of values to draw
from. Its 64-bit words come from SHAKE-256 in counter mode: block ``k`` is
``SHAKE-256(DOMAIN || seed || k)`` with ``k`` as 8 big-endian bytes, squeezed
to 4096 bytes and read as 512 big-endian unsigned words. A word ``w`` is
accepted when ``w < 2**64 - (2**64 mod n)`` and then gives the index
``w mod n``; other words are skipped, so every index is exactly uniform.

Nothing here touches ``random``, the clock or OS entropy, and the stream shares
nothing with the simulator's generators. The words are turned into indices
with numpy a block range at a time; the hashing itself is the floor of the
bootstrap's cost.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from ..io.canonical import canonical_bytes
from ..io.versions import STATISTICS_VERSION

DOMAIN = b"emberbench/statistics/bootstrap/v1\x00"
"""The domain-separation prefix of every SHAKE-256 block input."""

BLOCK_BYTES = 4096
WORDS_PER_BLOCK = BLOCK_BYTES // 8
PURPOSES = ("aggregate_mean", "paired_mean_delta")


def bootstrap_seed(
    *,
    purpose: str,
    evaluation_manifest_hash: str,
    result_digests: Sequence[str],
    group_kind: str,
    group_name: str,
    metric: str,
    resamples: int,
) -> bytes:
    """Return the 32-byte stream seed of one interval.

    The seed is the SHA-256 of the canonical JSON object with exactly the keys
    ``statistics_version``, ``purpose``, ``evaluation_manifest_hash``,
    ``result_digests``, ``group`` (``[kind, name]``), ``metric`` and
    ``resamples``. Any change to one of them gives an unrelated stream.

    Args:
        purpose: ``aggregate_mean`` or ``paired_mean_delta``.
        evaluation_manifest_hash: the manifest both results were run under.
        result_digests: ``[digest]`` (aggregate) or ``[digest_a, digest_b]``.
        group_kind: ``overall``, ``scenario`` or ``family``.
        group_name: ``overall``, the scenario id or the family id.
        metric: the metric name.
        resamples: the number of bootstrap resamples.
    """
    if purpose not in PURPOSES:
        raise ValueError(f"unknown bootstrap purpose {purpose!r}")
    payload = {
        "statistics_version": STATISTICS_VERSION,
        "purpose": purpose,
        "evaluation_manifest_hash": evaluation_manifest_hash,
        "result_digests": list(result_digests),
        "group": [group_kind, group_name],
        "metric": metric,
        "resamples": resamples,
    }
    return hashlib.sha256(canonical_bytes(payload)).digest()


def block_words(seed: bytes, first: int, count: int) -> np.ndarray:
    """Return blocks ``first .. first+count-1`` as a ``(count, 512)`` uint64 array."""
    if len(seed) != 32:
        raise ValueError("a bootstrap seed is 32 bytes")
    keyed = hashlib.shake_256(DOMAIN + seed)
    chunks = []
    for k in range(first, first + count):
        h = keyed.copy()
        h.update(k.to_bytes(8, "big"))
        chunks.append(h.digest(BLOCK_BYTES))
    raw = np.frombuffer(b"".join(chunks), dtype=">u8")
    return raw.astype(np.uint64).reshape(count, WORDS_PER_BLOCK)


def acceptance_bound(n: int) -> int:
    """Return ``2**64 - (2**64 mod n)``: words below it are accepted."""
    if n < 1:
        raise ValueError("n must be positive")
    return (1 << 64) - (1 << 64) % n


def words_to_indices(words: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Apply rejection sampling to a ``(blocks, 512)`` array of words.

    Returns:
        ``(indices, accepted_per_block)``: the accepted indices in stream
        order as ``int64``, and how many words of each block were accepted.
    """
    bound = acceptance_bound(n)
    blocks = words.shape[0]
    if bound < (1 << 64):
        keep = words < np.uint64(bound)
        if not keep.all():
            kept = words[keep]
            per_block = keep.sum(axis=1).astype(np.int64)
            return (kept % np.uint64(n)).view(np.int64), per_block
    flat = words.reshape(-1) % np.uint64(n)
    return flat.view(np.int64), np.full(blocks, WORDS_PER_BLOCK, dtype=np.int64)


class IndexStream:
    """Uniform indices in ``[0, n)``, consumed strictly in stream order.

    A position in the stream is ``(block, offset)``: the next index is the
    ``offset``-th accepted index of block ``block``. :meth:`take` can report
    the position of every ``mark_step``-th index it returns, so that one
    resample can later be drawn again on its own with ``IndexStream(seed, n,
    block=..., offset=...)``.
    """

    def __init__(self, seed: bytes, n: int, *, block: int = 0, offset: int = 0) -> None:
        if n < 1:
            raise ValueError("n must be positive")
        if block < 0 or offset < 0:
            raise ValueError("a stream position is non-negative")
        self._seed = seed
        self._n = n
        self._start = (block, offset)
        # Pending accepted indices and, per source block, (block, first offset, length).
        self._pool: np.ndarray | None = None
        self._segments: list[tuple[int, int, int]] = []
        self._next_block = block

    def _blocks(self, first: int, count: int) -> tuple[np.ndarray, np.ndarray]:
        return words_to_indices(block_words(self._seed, first, count), self._n)

    def _fill(self, count: int) -> np.ndarray:
        """Make at least ``count`` indices pending and return the pending pool."""
        parts: list[np.ndarray] = []
        if self._pool is None:
            block, offset = self._start
            first, _ = self._blocks(block, 1)
            parts.append(first[offset:])
            self._segments = [(block, offset, len(parts[0]))]
            self._next_block = block + 1
        else:
            parts.append(self._pool)
        have = len(parts[0])
        while have < count:
            need = -(-(count - have) // WORDS_PER_BLOCK)
            fresh, per_block = self._blocks(self._next_block, need)
            parts.append(fresh)
            self._segments.extend(
                (self._next_block + i, 0, int(m)) for i, m in enumerate(per_block.tolist())
            )
            have += len(fresh)
            self._next_block += need
        self._pool = parts[0] if len(parts) == 1 else np.concatenate(parts)
        return self._pool

    def take(
        self, count: int, mark_step: int = 0
    ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """Return the next ``count`` indices.

        Args:
            count: how many indices to draw.
            mark_step: when positive, also report the stream position of the
                indices at ``0, mark_step, 2 * mark_step, ...``.

        Returns:
            ``(indices, mark_blocks, mark_offsets)``; the marks are None when
            ``mark_step`` is 0.
        """
        pool = self._fill(count)
        out = pool[:count]
        blocks = np.array([b for b, _, _ in self._segments], dtype=np.int64)
        offsets = np.array([o for _, o, _ in self._segments], dtype=np.int64)
        lengths = np.array([m for _, _, m in self._segments], dtype=np.int64)
        starts = np.cumsum(lengths) - lengths
        mark_blocks = mark_offsets = None
        if mark_step > 0:
            where = np.arange(0, count, mark_step, dtype=np.int64)
            seg = np.searchsorted(starts, where, side="right") - 1
            mark_blocks = blocks[seg]
            mark_offsets = offsets[seg] + where - starts[seg]
        # Keep the segments that still hold pending indices.
        kept: list[tuple[int, int, int]] = []
        for (block, offset, length), start in zip(self._segments, starts.tolist(), strict=True):
            used = min(max(count - start, 0), length)
            if used < length:
                kept.append((block, offset + used, length - used))
        self._segments = kept
        # Copy the short remainder so the large pool is freed with ``out``.
        self._pool = pool[count:].copy()
        return out, mark_blocks, mark_offsets
