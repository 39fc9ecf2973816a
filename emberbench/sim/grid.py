"""The compiled form of a scenario's map: flat numpy arrays with a wall border.

Cells are addressed by a *padded* flat index ``(row + 1) * (width + 2) + (col + 1)``:
the map is surrounded by one ring of wall cells, so a move off the map is a
move into a wall and needs no bounds check. ``cell`` indices
(``row * width + col``) address the unpadded map; the fire's random draws are
keyed by cell index.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from .scenario import WALL, Scenario

# Move codes: 0 stay, 1 north, 2 east, 3 south, 4 west.
MOVE_NAMES = ("stay", "N", "E", "S", "W")
MOVE_CHARS = ".NESW"


@dataclass(frozen=True, slots=True, eq=False)
class Grid:
    """Immutable compiled map of one scenario (built once, cached on the scenario).

    Attributes:
        height, width: map size; ``pw`` is the padded width ``width + 2``.
        wall: bool per padded cell (the border is wall).
        exit_of: exit index per padded cell, or -1.
        exit_cells: padded index of each exit, in scenario order.
        pad_of_cell: padded index of each unpadded cell.
        cell_of_pad: unpadded index of each padded cell, or -1 on the border.
        starts: padded start cell of each person, in scenario order.
        fire0: unpadded cells burning at step 0.
        static_dist: walls-only shortest-path length to the nearest exit per
            padded cell (-1 where no exit is reachable).
        delta: padded-index offset of each move code.
        static_chars: the map with exits as ``uint8`` characters (height*width).
    """

    height: int
    width: int
    pw: int
    wall: np.ndarray
    exit_of: np.ndarray
    exit_cells: np.ndarray
    pad_of_cell: np.ndarray
    cell_of_pad: np.ndarray
    starts: np.ndarray
    fire0: np.ndarray
    static_dist: np.ndarray
    delta: np.ndarray
    static_chars: np.ndarray

    def pad(self, row: int, col: int) -> int:
        """Padded index of (row, col)."""
        return (row + 1) * self.pw + (col + 1)


def bfs_distance(wall: np.ndarray, pw: int, sources: list[int] | np.ndarray, blocked: np.ndarray | None = None) -> np.ndarray:
    """Multi-source BFS distance over padded cells (4-neighbour moves).

    Args:
        wall: bool per padded cell; walls are never entered.
        pw: padded width.
        sources: padded indices at distance 0 (skipped if walled or blocked).
        blocked: optional extra bool mask of cells that cannot be entered.

    Returns:
        int32 distance per padded cell, -1 where unreachable.
    """
    stop = wall if blocked is None else (wall | blocked)
    closed = stop.tolist()
    dist = [-1] * len(closed)
    queue: deque[int] = deque()
    for s in np.asarray(sources, dtype=np.int64).tolist():
        if not closed[s] and dist[s] < 0:
            dist[s] = 0
            queue.append(s)
    steps = (-pw, 1, pw, -1)
    while queue:
        cur = queue.popleft()
        nd = dist[cur] + 1
        for step in steps:
            nxt = cur + step
            if dist[nxt] < 0 and not closed[nxt]:
                dist[nxt] = nd
                queue.append(nxt)
    return np.asarray(dist, dtype=np.int32)


def _build(s: Scenario) -> Grid:
    h, w = s.height, s.width
    pw = w + 2
    wall2 = np.ones((h + 2, pw), dtype=bool)
    wall2[1:-1, 1:-1] = np.array([[ch == WALL for ch in row] for row in s.map], dtype=bool)
    wall = wall2.ravel()
    rows, cols = np.divmod(np.arange(h * w), w)
    pad_of_cell = (rows + 1) * pw + (cols + 1)
    cell_of_pad = np.full(wall.size, -1, dtype=np.int64)
    cell_of_pad[pad_of_cell] = np.arange(h * w)
    exit_cells = np.array([(e.row + 1) * pw + e.col + 1 for e in s.exits], dtype=np.int64)
    exit_of = np.full(wall.size, -1, dtype=np.int64)
    exit_of[exit_cells] = np.arange(len(s.exits))
    starts = np.array([(p.row + 1) * pw + p.col + 1 for p in s.people], dtype=np.int64)
    fire0 = np.array([r * w + c for r, c in s.fire], dtype=np.int64)
    chars = np.frombuffer("".join(s.map).encode("ascii"), dtype=np.uint8).copy()
    chars[[e.row * w + e.col for e in s.exits]] = ord("E")
    grid = Grid(
        height=h, width=w, pw=pw, wall=wall, exit_of=exit_of, exit_cells=exit_cells,
        pad_of_cell=pad_of_cell.astype(np.int64), cell_of_pad=cell_of_pad, starts=starts,
        fire0=fire0, static_dist=bfs_distance(wall, pw, exit_cells),
        delta=np.array([0, -pw, 1, pw, -1], dtype=np.int64), static_chars=chars,
    )
    for arr in (wall, exit_of, exit_cells, grid.pad_of_cell, cell_of_pad, starts, fire0,
                grid.static_dist, grid.delta, chars):
        arr.flags.writeable = False
    return grid


def compile_grid(s: Scenario) -> Grid:
    """The compiled grid of ``s`` (built once per scenario object)."""
    return s.cached("grid", _build)
