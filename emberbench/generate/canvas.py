"""The map under construction: a grid of wall and floor, its rooms, and walls-only distances.

A :class:`Canvas` starts as solid wall; layouts carve floor into it and note
the rooms (rectangles of floor people can be clustered in). The outer ring
stays wall except where exits are cut into it. Distances are breadth-first
over four-neighbour moves through floor, optionally cut off at a depth, which
is all the generator needs (how far is this cell from an exit or a person).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True, slots=True)
class Rect:
    """An inclusive rectangle of cells ``[r0, r1] x [c0, c1]``."""

    r0: int
    c0: int
    r1: int
    c1: int

    @property
    def area(self) -> int:
        """Number of cells."""
        return (self.r1 - self.r0 + 1) * (self.c1 - self.c0 + 1)


@dataclass(slots=True)
class Canvas:
    """A map being generated.

    Attributes:
        rows, cols: map size (the outer ring is the building's wall).
        open: bool array, True on floor.
        rooms: rectangles of floor, each a place a crowd can gather.
        notes: counts the description mentions (``rooms``, ``corridors``...).
    """

    rows: int
    cols: int
    open: np.ndarray = field(init=False)
    rooms: list[Rect] = field(default_factory=list)
    notes: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.open = np.zeros((self.rows, self.cols), dtype=bool)

    def carve(self, r0: int, c0: int, r1: int, c1: int) -> Rect:
        """Make ``[r0, r1] x [c0, c1]`` floor (clipped to the inside of the outer ring)."""
        r0, c0 = max(r0, 1), max(c0, 1)
        r1, c1 = min(r1, self.rows - 2), min(c1, self.cols - 2)
        if r0 <= r1 and c0 <= c1:
            self.open[r0:r1 + 1, c0:c1 + 1] = True
        return Rect(r0, c0, r1, c1)

    def wall(self, r0: int, c0: int, r1: int, c1: int) -> None:
        """Make ``[r0, r1] x [c0, c1]`` wall."""
        self.open[max(r0, 0):r1 + 1, max(c0, 0):c1 + 1] = False

    def map_rows(self) -> tuple[str, ...]:
        """The map as scenario rows (``#`` wall, ``.`` floor)."""
        chars = np.where(self.open, ord("."), ord("#")).astype(np.uint8)
        return tuple(row.tobytes().decode("ascii") for row in chars)

    def floor_cells(self) -> Cells:
        """Every floor cell not on the outer ring, in row-major order."""
        inner = self.open.copy()
        inner[0, :] = inner[-1, :] = False
        inner[:, 0] = inner[:, -1] = False
        return Cells(inner)


class Cells(Sequence[tuple[int, int]]):
    """The True cells of a mask as a read-only sequence of ``(row, col)``, row-major.

    Cells are made on demand, and membership is a lookup in the mask, so a
    whole 256x256 floor costs two small arrays rather than 65,536 tuples.
    """

    def __init__(self, mask: np.ndarray) -> None:
        self.mask = mask
        self.rows, self.cols = np.nonzero(mask)

    def __len__(self) -> int:
        return int(self.rows.size)

    def __getitem__(self, i: int) -> tuple[int, int]:  # type: ignore[override]
        return int(self.rows[i]), int(self.cols[i])

    def __contains__(self, cell: object) -> bool:
        r, c = cell  # type: ignore[misc]
        return 0 <= r < self.mask.shape[0] and 0 <= c < self.mask.shape[1] and bool(self.mask[r, c])

    def without(self, cells: Iterable[tuple[int, int]]) -> Cells:
        """These cells minus ``cells``."""
        mask = self.mask.copy()
        for r, c in cells:
            mask[r, c] = False
        return Cells(mask)


def within(open_: np.ndarray, sources: Iterable[tuple[int, int]], limit: int) -> dict[tuple[int, int], int]:
    """Walls-only breadth-first distance of every floor cell at most ``limit`` steps from a source.

    Only the reached cells are visited, so a small ``limit`` costs little
    even on a 256x256 map.
    """
    rows, cols = open_.shape
    dist: dict[tuple[int, int], int] = {}
    queue: deque[tuple[int, int]] = deque()
    for cell in sources:
        if cell not in dist and open_[cell]:
            dist[cell] = 0
            queue.append(cell)
    while queue:
        cell = queue.popleft()
        nd = dist[cell] + 1
        if nd > limit:
            continue
        r, c = cell
        for nxt in ((r - 1, c), (r, c + 1), (r + 1, c), (r, c - 1)):
            if nxt not in dist and 0 <= nxt[0] < rows and 0 <= nxt[1] < cols and open_[nxt]:
                dist[nxt] = nd
                queue.append(nxt)
    return dist


def padded_closed(open_: np.ndarray) -> list[bool]:
    """Walls as a flat list over the map padded with one ring of wall (what :func:`nearest_cells` walks)."""
    padded = np.zeros((open_.shape[0] + 2, open_.shape[1] + 2), dtype=bool)
    padded[1:-1, 1:-1] = open_
    return (~padded).ravel().tolist()


def nearest_cells(open_: np.ndarray, sources: Iterable[tuple[int, int]], n: int,
                  allowed: Callable[[tuple[int, int]], bool], closed: list[bool] | None = None
                  ) -> list[tuple[int, int]]:
    """Up to ``n`` allowed cells in breadth-first order from the sources (walls only), nearest first.

    Ties keep the search order: sources in the order given, then neighbours
    north, east, south, west. The search stops as soon as ``n`` are found.
    ``closed`` is :func:`padded_closed` of ``open_``, when the caller has it.
    """
    pw = open_.shape[1] + 2
    if closed is None:
        closed = padded_closed(open_)
    seen = [False] * len(closed)
    queue: deque[int] = deque()
    for r, c in sources:
        s = (r + 1) * pw + c + 1
        if not closed[s] and not seen[s]:
            seen[s] = True
            queue.append(s)
    found: list[tuple[int, int]] = []
    steps = (-pw, 1, pw, -1)
    while queue and len(found) < n:
        cur = queue.popleft()
        cell = (cur // pw - 1, cur % pw - 1)
        if allowed(cell):
            found.append(cell)
        for step in steps:
            nxt = cur + step
            if not seen[nxt] and not closed[nxt]:
                seen[nxt] = True
                queue.append(nxt)
    return found


def neighbour_counts(open_: np.ndarray) -> np.ndarray:
    """Number of floor four-neighbours of every cell."""
    padded = np.zeros((open_.shape[0] + 2, open_.shape[1] + 2), dtype=np.int8)
    padded[1:-1, 1:-1] = open_
    return padded[:-2, 1:-1] + padded[2:, 1:-1] + padded[1:-1, :-2] + padded[1:-1, 2:]


def dead_end_corridors(open_: np.ndarray, exits: set[tuple[int, int]], min_length: int = 3) -> int:
    """Count corridors one cell wide that end at a wall, at least ``min_length`` cells before a junction.

    A dead end starts at a floor cell (not an exit) with exactly one floor
    neighbour and follows cells with exactly two until a junction, an exit
    or the other end.
    """
    degree = neighbour_counts(open_)
    rows, cols = open_.shape
    count = 0
    for r, c in np.argwhere(open_ & (degree == 1)):
        prev, cur, length = (-1, -1), (int(r), int(c)), 1
        if cur in exits:
            continue
        while True:
            cr, cc = cur
            nxt = next(((nr, nc) for nr, nc in ((cr - 1, cc), (cr, cc + 1), (cr + 1, cc), (cr, cc - 1))
                        if 0 <= nr < rows and 0 <= nc < cols and open_[nr, nc] and (nr, nc) != prev), None)
            if nxt is None or nxt in exits or degree[nxt] != 2:
                break
            prev, cur, length = cur, nxt, length + 1
            if length >= min_length:
                break
        count += length >= min_length
    return count
