"""The four layout generators: office floor, open hall, corridor network, multi-wing campus.

Each takes a :class:`~emberbench.generate.draws.Draws` stream and a map size
and returns a :class:`~emberbench.generate.canvas.Canvas` whose floor is one
connected region by construction (the scenario validation checks it again):
corridors run through every band of offices and connectors join them,
obstacles keep a cell of floor between each other and every wall, every wall
between two wings has a door. Rooms are noted for clustered crowds; the
counts in ``notes`` feed the scenario's description.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .canvas import Canvas, Rect
from .draws import Draws


def office(d: Draws, rows: int, cols: int) -> Canvas:
    """Bands of offices, each office with a door onto a corridor that spans the floor."""
    cv = Canvas(rows, cols)
    cw = 2 if rows >= 22 and d.chance(1, 3) else 1
    units: list[tuple[tuple[int, int], tuple[int, int], tuple[int, int]]] = []
    r, last = 1, rows - 2
    while last - r + 1 >= 8 + cw:
        avail = last - r + 1
        h1 = d.between(3, min(6, avail - 5 - cw))
        h2 = d.between(3, min(6, avail - h1 - 2 - cw))
        top = (r, r + h1 - 1)
        corridor = (top[1] + 2, top[1] + 1 + cw)
        units.append((top, corridor, (corridor[1] + 2, corridor[1] + 1 + h2)))
        r = corridor[1] + h2 + 3
    top, corridor, bottom = units[-1]
    units[-1] = (top, corridor, (bottom[0], last))  # the last band takes the rows that are left
    for top, corridor, bottom in units:
        cv.carve(corridor[0], 1, corridor[1], cols - 2)
        _offices(cv, d, top, door_row=top[1] + 1)
        _offices(cv, d, bottom, door_row=bottom[0] - 1)
    for (_, upper, _), (_, lower, _) in zip(units, units[1:]):
        for _ in range(d.between(1, 2)):
            x = d.between(1, cols - 2)
            cv.carve(upper[1] + 1, x, lower[0] - 1, x)
    cv.notes.update(offices=len(cv.rooms), corridors=len(units))
    return cv


def _offices(cv: Canvas, d: Draws, band: tuple[int, int], door_row: int) -> None:
    c, right = 1, cv.cols - 2
    while c <= right:
        width = d.between(3, 8)
        if right - (c + width) < 3:
            width = right - c + 1
        cv.rooms.append(cv.carve(band[0], c, band[1], c + width - 1))
        for _ in range(2 if width >= 5 and d.chance(1, 4) else 1):
            x = d.between(c, c + width - 1)
            cv.carve(door_row, x, door_row, x)
        c += width + 1


def hall(d: Draws, rows: int, cols: int) -> Canvas:
    """One open hall with scattered rectangular obstacles (pillars, tables, stands)."""
    cv = Canvas(rows, cols)
    inner = cv.carve(1, 1, rows - 2, cols - 2)
    cv.notes["obstacles"] = _obstacles(cv, d, inner, d.between(3, 12))
    for _ in range(d.between(2, 6)):
        h, w = d.between(3, min(8, rows - 2)), d.between(3, min(10, cols - 2))
        r0, c0 = d.between(1, rows - 1 - h), d.between(1, cols - 1 - w)
        cv.rooms.append(Rect(r0, c0, r0 + h - 1, c0 + w - 1))
    return cv


def _obstacles(cv: Canvas, d: Draws, area: Rect, percent: int) -> int:
    """Wall off rectangles inside ``area`` (keeping its outer ring free), never touching each other.

    Each obstacle keeps at least one floor cell to any other, diagonals
    included, and ``area``'s own border ring stays floor, so the floor of
    ``area`` stays connected. Returns how many were placed.
    """
    r_lo, r_hi, c_lo, c_hi = area.r0 + 1, area.r1 - 1, area.c0 + 1, area.c1 - 1
    if r_hi < r_lo or c_hi < c_lo:
        return 0
    taken = np.zeros((cv.rows, cv.cols), dtype=bool)
    target = area.area * percent // 100
    placed = cells = 0
    for _ in range(max(8, target)):
        if cells >= target:
            break
        h, w = d.between(1, 3), d.between(1, 5)
        if d.chance(1, 2):
            h, w = w, h
        if h > r_hi - r_lo + 1 or w > c_hi - c_lo + 1:
            continue
        r0, c0 = d.between(r_lo, r_hi - h + 1), d.between(c_lo, c_hi - w + 1)
        if taken[r0 - 1:r0 + h + 1, c0 - 1:c0 + w + 1].any():
            continue
        taken[r0:r0 + h, c0:c0 + w] = True
        cv.wall(r0, c0, r0 + h - 1, c0 + w - 1)
        placed, cells = placed + 1, cells + h * w
    return placed


def corridors(d: Draws, rows: int, cols: int) -> Canvas:
    """Long corridors (spines) with side branches: dead ends, end rooms, ways out and links between spines."""
    cv = Canvas(rows, cols)
    n = 1 if rows < 16 else d.between(1, min(3, (rows - 4) // 6))
    spines = []
    for k in range(n):
        row = 1 + (k + 1) * (rows - 2) // (n + 1) + d.between(-1, 1)
        row = min(max(row, 3), rows - 4)
        if k == 0:
            span = (1, cols - 2)
        else:
            span = (1 if d.chance(1, 2) else d.between(2, cols // 3),
                    cols - 2 if d.chance(1, 2) else d.between(2 * cols // 3, cols - 3))
        cv.carve(row, span[0], row, span[1])
        spines.append((row, span))
    columns = []
    x = d.between(2, 4)
    while x <= cols - 3:
        columns.append(x)
        x += d.between(3, 6)
    branches = 0
    for x in columns:
        branches += _outer_branch(cv, d, x, spines[0], toward=-1)
        branches += _outer_branch(cv, d, x, spines[-1], toward=+1)
        for upper, lower in zip(spines, spines[1:]):
            branches += _inner_branch(cv, d, x, upper, lower)
    for upper, lower in zip(spines, spines[1:]):
        lo, hi = max(upper[1][0], lower[1][0]), min(upper[1][1], lower[1][1])
        x = d.between(lo, hi)
        cv.carve(upper[0] + 1, x, lower[0] - 1, x)  # every spine is linked to the one above it
    cv.notes.update(spines=n, branches=branches)
    return cv


def _outer_branch(cv: Canvas, d: Draws, x: int, spine: tuple[int, tuple[int, int]], toward: int) -> int:
    """A branch from a spine toward the outer wall: nothing, a dead end, an end room or a way out."""
    row, (a, b) = spine
    if not a <= x <= b:
        return 0
    gap = row - 1 if toward < 0 else cv.rows - 2 - row  # floor rows between the spine and the wall
    kind = d.weighted((("none", 1), ("dead-end", 3), ("room", 2), ("out", 1)))
    if kind == "none" or gap < 2:
        return 0
    length = gap if kind == "out" else d.between(1, gap - 1)
    tip = row + toward * length
    cv.carve(min(row, tip), x, max(row, tip), x)
    if kind == "room":
        _end_room(cv, d, x, tip, toward)
    return 1


def _inner_branch(cv: Canvas, d: Draws, x: int, upper: tuple[int, tuple[int, int]],
                  lower: tuple[int, tuple[int, int]]) -> int:
    """A branch between two spines: nothing, a dead end from either side, or a link."""
    gap = lower[0] - upper[0] - 1
    kind = d.weighted((("none", 1), ("down", 2), ("up", 2), ("link", 1)))
    if kind == "none" or gap < 3:
        return 0
    if kind == "link":
        if upper[1][0] <= x <= upper[1][1] and lower[1][0] <= x <= lower[1][1]:
            cv.carve(upper[0] + 1, x, lower[0] - 1, x)
            return 1
        return 0
    row, span, toward = (upper[0], upper[1], +1) if kind == "down" else (lower[0], lower[1], -1)
    if not span[0] <= x <= span[1]:
        return 0
    tip = row + toward * d.between(1, gap - 2)
    cv.carve(min(row, tip), x, max(row, tip), x)
    return 1


def _end_room(cv: Canvas, d: Draws, x: int, tip: int, toward: int) -> None:
    """A small room beyond a branch's tip, only where it touches no other floor."""
    h, half = d.between(2, 4), d.between(1, 2)
    r0, r1 = (tip - h, tip - 1) if toward < 0 else (tip + 1, tip + h)
    c0, c1 = x - half, x + half
    if r0 < 1 or r1 > cv.rows - 2 or c0 < 1 or c1 > cv.cols - 2:
        return
    around = cv.open[max(r0 - 1, 0):r1 + 2, max(c0 - 1, 0):c1 + 2].copy()
    around[(tip - (r0 - 1)), x - (c0 - 1)] = False  # the tip itself touches the room by design
    if around.any():
        return
    cv.rooms.append(cv.carve(r0, c0, r1, c1))


def campus(d: Draws, rows: int, cols: int) -> Canvas:
    """Wings in a grid, separated by walls with doors; each wing open, with obstacles, or split in two."""
    cv = Canvas(rows, cols)
    cv.carve(1, 1, rows - 2, cols - 2)
    walls_r = _cuts(d, rows, d.between(2, max(2, min(4, (rows - 2) // 10))))
    walls_c = _cuts(d, cols, d.between(2, max(2, min(5, (cols - 2) // 10))))
    for r in walls_r:
        cv.wall(r, 1, r, cols - 2)
    for c in walls_c:
        cv.wall(1, c, rows - 2, c)
    bands_r = _bands(rows, walls_r)
    bands_c = _bands(cols, walls_c)
    for r in walls_r:
        for c0, c1 in bands_c:
            _doors(cv, d, lambda p, r=r: (r, p), c0, c1)
    for c in walls_c:
        for r0, r1 in bands_r:
            _doors(cv, d, lambda p, c=c: (p, c), r0, r1)
    for r0, r1 in bands_r:
        for c0, c1 in bands_c:
            wing = Rect(r0, c0, r1, c1)
            cv.rooms.append(wing)
            style = d.between(0, 2)
            if style == 1:
                _obstacles(cv, d, wing, d.between(3, 10))
            elif style == 2 and r1 - r0 >= 6:
                split = d.between(r0 + 3, r1 - 3)
                cv.wall(split, c0, split, c1)
                _doors(cv, d, lambda p, s=split: (s, p), c0, c1)
    cv.notes["wings"] = len(bands_r) * len(bands_c)
    return cv


def _cuts(d: Draws, size: int, parts: int) -> list[int]:
    """Rows (or columns) of the internal walls cutting ``[1, size - 2]`` into ``parts`` bands of 6 or more."""
    length = size - 2
    parts = max(1, min(parts, (length + 1) // 7))
    cuts, previous = [], 0
    for k in range(1, parts):
        at = k * length // parts + d.between(-2, 2)
        at = max(at, previous + 7)
        if at > length - 6:
            break
        cuts.append(at)
        previous = at
    return cuts


def _bands(size: int, cuts: list[int]) -> list[tuple[int, int]]:
    edges = [0, *cuts, size - 1]
    return [(a + 1, b - 1) for a, b in zip(edges, edges[1:])]


def _doors(cv: Canvas, d: Draws, cell: Callable[[int], tuple[int, int]], lo: int, hi: int) -> None:
    """One or two doors (1 to 3 cells wide) in the wall segment ``[lo, hi]``."""
    for _ in range(d.between(1, 2)):
        width = d.between(1, max(1, min(3, hi - lo - 1)))
        start = d.between(lo, hi - width + 1)
        for p in range(start, start + width):
            r, c = cell(p)
            cv.open[r, c] = True


LAYOUTS: dict[str, Callable[[Draws, int, int], Canvas]] = {
    "office": office, "hall": hall, "corridors": corridors, "campus": campus,
}
