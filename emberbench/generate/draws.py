"""The generator's randomness: named SplitMix64 streams, integer draws only.

Every number the generator draws comes from a :class:`Draws` stream keyed by
:func:`emberbench.sim.rng.stream_key` from the suite seed and a path of names
(scenario index, attempt, what is being drawn). Nothing here touches
:mod:`random`, hash seeds, the clock or the operating system, so the same
(recipe, count, seed) gives the same suite on every machine. Separate
streams for the layout, the exits, the people and the fire keep a change in
one part of a recipe from reshuffling the draws of the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from ..sim.rng import SplitMix64, stream_key

T = TypeVar("T")


def scenario_key(seed: int, index: int, attempt: int) -> int:
    """The 64-bit key of draw ``attempt`` of scenario ``index`` of a suite generated with ``seed``."""
    return stream_key(seed, f"emberbench/generate/scenario/{index}/{attempt}")


class Draws:
    """A sequential SplitMix64 stream with the draws the generator uses.

    Args:
        key: a scenario key (:func:`scenario_key`).
        name: the part being drawn (``"layout"``, ``"exits"``...).
    """

    __slots__ = ("_gen",)

    def __init__(self, key: int, name: str) -> None:
        self._gen = SplitMix64(stream_key(key, name))

    def below(self, n: int) -> int:
        """Uniform in ``[0, n)``."""
        return self._gen.below(n)

    def between(self, lo: int, hi: int) -> int:
        """Uniform in ``[lo, hi]`` (inclusive)."""
        return lo + self._gen.below(hi - lo + 1)

    def chance(self, num: int, den: int) -> bool:
        """True with probability ``num / den``."""
        return self._gen.below(den) < num

    def pick(self, items: Sequence[T]) -> T:
        """One item, uniformly."""
        return items[self._gen.below(len(items))]

    def weighted(self, options: Sequence[tuple[T, int]]) -> T:
        """One option's value, with probability proportional to its (positive) weight."""
        roll = self._gen.below(sum(w for _, w in options))
        for value, weight in options:
            if roll < weight:
                return value
            roll -= weight
        raise AssertionError("weights changed during the draw")

    def shuffle(self, items: list[T]) -> list[T]:
        """Shuffle ``items`` in place (Fisher-Yates) and return it."""
        for i in range(len(items) - 1, 0, -1):
            j = self._gen.below(i + 1)
            items[i], items[j] = items[j], items[i]
        return items

    def sample(self, items: Sequence[T], k: int) -> list[T]:
        """``k`` distinct items in draw order (a partial Fisher-Yates).

        The swaps are kept in a dict instead of a copy of ``items``, so the
        cost is ``O(k)`` even when ``items`` is a whole 256x256 floor.
        """
        n = len(items)
        k = min(k, n)
        moved: dict[int, int] = {}
        out = []
        for i in range(k):
            j = i + self._gen.below(n - i)
            out.append(items[moved.get(j, j)])
            moved[j] = moved.get(i, i)
        return out
