"""Struct-of-arrays storage with one contiguous region per slot (used by :mod:`.batch`).

A batch of episodes keeps, for example, the wall mask of every episode's map
in one flat array, so that one numpy call can index the cells of all of them.
Each slot owns a region ``[base[slot], base[slot] + length[slot])`` of every
array of the arena; the same local index addresses the same element in each.
A slot reuses its region for a new episode that fits in it; one that does
not fit gets a new region at the end, and the old one stays dead until the
arena is full. The arena is then reallocated with room for twice what the
slots reserve and the regions are packed in slot order. Each element is
therefore copied a bounded number of times on average, and the memory held
is at most about four times the largest episode each slot has held.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


class Arena:
    """Flat arrays shared by the slots of a batch, one region per slot.

    Args:
        fields: name -> dtype of each array.
        slots: number of slots.

    Attributes:
        base: int64 per slot, the first index of its region (read-only by
            callers; updated in place when the arena is repacked).
        length: int64 per slot, the elements in use in its region (0 for none).
        arrays: name -> the flat array (replaced when the arena grows, so
            look it up again after :meth:`put`).
    """

    def __init__(self, fields: Mapping[str, type | np.dtype], slots: int) -> None:
        self.arrays: dict[str, np.ndarray] = {name: np.zeros(0, dtype=dt) for name, dt in fields.items()}
        self.base = np.zeros(slots, dtype=np.int64)
        self.length = np.zeros(slots, dtype=np.int64)
        self._room = [0] * slots  # elements reserved for each slot's region
        self._used = 0
        self._capacity = 0

    def put(self, slot: int, n: int, values: Mapping[str, np.ndarray | int]) -> int:
        """Give ``slot`` a region of ``n`` elements holding ``values``; return its base.

        The slot keeps its region when ``n`` fits in it (a batch that cycles
        through a fixed set of scenarios soon stops allocating); otherwise it
        gives it up for a new one at the end. ``values`` gives every field,
        as an array of ``n`` elements or a scalar to fill with. Elements
        outside every region are zero, so a whole array is always safe to read.
        """
        if len(values) != len(self.arrays):
            raise ValueError(f"arena fields are {sorted(self.arrays)}, got {sorted(values)}")
        if n > self._room[slot]:
            self._room[slot] = 0
            self.length[slot] = 0
            if self._used + n > self._capacity:
                self._repack(n)
            self.base[slot] = self._used
            self._room[slot] = n
            self._used += n
        start = int(self.base[slot])
        arrays = self.arrays
        for name, value in values.items():
            arrays[name][start : start + n] = value
        self.length[slot] = n
        return start

    def _repack(self, extra: int) -> None:
        """Reallocate with room for twice what is reserved (plus ``extra``), packing the regions in slot order."""
        reserved = sum(self._room)
        capacity = max(2 * (reserved + extra), 64)
        fresh = {name: np.zeros(capacity, dtype=arr.dtype) for name, arr in self.arrays.items()}
        at = 0
        for slot, room in enumerate(self._room):
            if room:
                a, n = int(self.base[slot]), int(self.length[slot])
                for name, arr in self.arrays.items():
                    fresh[name][at : at + n] = arr[a : a + n]
                self.base[slot] = at
                at += room
        self.arrays = fresh
        self._used = at
        self._capacity = capacity

    def region(self, name: str, slot: int) -> np.ndarray:
        """The slot's region of one array (a view)."""
        a = int(self.base[slot])
        return self.arrays[name][a : a + int(self.length[slot])]
