"""The run-based region labelling agrees with a plain flood fill on random maps."""

from __future__ import annotations

from collections import deque

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from emberbench.sim.scenario_rules import regions


def flood_fill(open_: np.ndarray) -> np.ndarray:
    """Reference labelling: a breadth-first fill from every unlabelled open cell, row-major."""
    rows, cols = open_.shape
    label = np.full(open_.shape, -1)
    next_label = 0
    for r0 in range(rows):
        for c0 in range(cols):
            if not open_[r0, c0] or label[r0, c0] >= 0:
                continue
            label[r0, c0] = next_label
            queue = deque([(r0, c0)])
            while queue:
                r, c = queue.popleft()
                for nr, nc in ((r - 1, c), (r, c + 1), (r + 1, c), (r, c - 1)):
                    if 0 <= nr < rows and 0 <= nc < cols and open_[nr, nc] and label[nr, nc] < 0:
                        label[nr, nc] = next_label
                        queue.append((nr, nc))
            next_label += 1
    return label


maps = st.integers(1, 12).flatmap(lambda rows: st.integers(1, 12).flatmap(
    lambda cols: st.lists(st.booleans(), min_size=rows * cols, max_size=rows * cols).map(
        lambda cells: np.array(cells, dtype=bool).reshape(rows, cols))))


@given(maps)
def test_regions_partition_the_map_like_a_flood_fill(open_: np.ndarray) -> None:
    """Two open cells share a label exactly when a flood fill puts them in one region; walls are -1."""
    got, want = regions(open_), flood_fill(open_)
    assert ((got < 0) == ~open_).all()
    cells = np.argwhere(open_)
    for a in cells:
        for b in cells:
            assert (got[tuple(a)] == got[tuple(b)]) == (want[tuple(a)] == want[tuple(b)])
