"""SplitMix64 random streams, counter based, integer arithmetic only.

Every random number in the simulator comes from here. A *stream* is a 64-bit
key derived from the episode seed and a stream name; draw ``k`` of a stream is

    mix64(key + (k + 1) * GAMMA  mod 2**64)

which is exactly the ``k``-th output of a SplitMix64 generator whose state
starts at ``key``. Because a draw depends only on (key, k), the fire can draw
for (step, cell) directly, and the draw schedule cannot depend on people or
actions. Nothing here uses :mod:`random`, the clock or OS entropy.
"""

from __future__ import annotations

import hashlib

import numpy as np

MASK64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB


def mix64(z: int) -> int:
    """The SplitMix64 output function (a bijection on 64-bit integers)."""
    z &= MASK64
    z = ((z ^ (z >> 30)) * _M1) & MASK64
    z = ((z ^ (z >> 27)) * _M2) & MASK64
    return z ^ (z >> 31)


def stream_key(seed: int, name: str) -> int:
    """The key of the stream ``name`` for the 64-bit episode ``seed``.

    The name is bound through the first 8 bytes (big-endian) of
    ``SHA-256(b"emberbench/stream/" + name)``; the key is
    ``mix64(seed XOR tag)``. Different names give unrelated streams.
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MASK64:
        raise ValueError(f"seed must be an integer in [0, 2**64 - 1], got {seed!r}")
    tag = int.from_bytes(hashlib.sha256(b"emberbench/stream/" + name.encode("ascii")).digest()[:8], "big")
    return mix64(seed ^ tag)


def draw(key: int, counter: int) -> int:
    """Draw number ``counter`` (0-based) of the stream with ``key``."""
    return mix64(key + ((counter + 1) * GAMMA))


def draws(key: int, counters: np.ndarray) -> np.ndarray:
    """Vectorised :func:`draw` for an array of non-negative counters (uint64 out)."""
    c = counters.astype(np.uint64, copy=False)
    z = np.uint64(key) + (c + np.uint64(1)) * np.uint64(GAMMA)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(_M1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(_M2)
    return z ^ (z >> np.uint64(31))


class SplitMix64:
    """A sequential SplitMix64 generator (used by the ``random`` baseline policy).

    Args:
        state: the initial 64-bit state.
    """

    __slots__ = ("_state",)

    def __init__(self, state: int) -> None:
        self._state = state & MASK64

    def next(self) -> int:
        """Return the next 64-bit output."""
        self._state = (self._state + GAMMA) & MASK64
        return mix64(self._state)

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` by rejection (no modulo bias)."""
        if n <= 0:
            raise ValueError("n must be positive")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            word = self.next()
            if word < limit:
                return word % n
