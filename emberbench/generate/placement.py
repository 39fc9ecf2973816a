"""Placing exits, people and fire origins on a generated map.

Exits are cut into the outer wall where floor lies behind it; an exit of
width ``w`` is ``w`` neighbouring exit cells, and two exits never touch.
People and fire go on inner floor cells, never on each other or on an exit.
When a draw cannot be placed (no room on the border, no free cell near an
exit...), :class:`Redraw` is raised with the reason, and the generator draws
the whole scenario again from the next sub-seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .canvas import Canvas, Cells, nearest_cells, padded_closed, within
from .draws import Draws

SIDES = ("north", "east", "south", "west")
_OPPOSITE_FIRST = (0, 2, 1, 3)  # from a first side: its opposite, then the other two


class Redraw(Exception):
    """This draw cannot become a valid scenario; the message says why."""


@dataclass(frozen=True, slots=True)
class ExitGroup:
    """One exit: a side of the building and its (1 or more) neighbouring border cells."""

    side: str
    number: int
    cells: tuple[tuple[int, int], ...]

    def ids(self) -> list[str]:
        """Scenario exit ids: ``north-1``, or ``north-1a``, ``north-1b``... for a wide exit."""
        base = f"{self.side}-{self.number}"
        return [base] if len(self.cells) == 1 else [f"{base}{chr(97 + i)}" for i in range(len(self.cells))]


def _border(cv: Canvas, side: int, position: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """(border cell, floor cell behind it) of ``position`` (1-based along the side, corners excluded)."""
    if side == 0:
        return (0, position), (1, position)
    if side == 1:
        return (position, cv.cols - 1), (position, cv.cols - 2)
    if side == 2:
        return (cv.rows - 1, position), (cv.rows - 2, position)
    return (position, 0), (position, 1)


def place_exits(d: Draws, cv: Canvas, widths: list[int], mode: str) -> list[ExitGroup]:
    """Cut one exit of each width into the outer wall; ``mode`` is ``spread``, ``random`` or ``one-side``."""
    length = {0: cv.cols - 2, 1: cv.rows - 2, 2: cv.cols - 2, 3: cv.rows - 2}
    usable = {s: [bool(cv.open[_border(cv, s, p)[1]]) for p in range(1, length[s] + 1)] for s in range(4)}
    used = {s: [False] * (length[s] + 2) for s in range(4)}  # taken border cells and their neighbours

    def starts(side: int, width: int) -> list[int]:
        """Positions where ``width`` free border cells in a row begin, ascending."""
        ok, busy, n = usable[side], used[side], length[side]
        run = [0] * (n + 2)  # run[q]: free cells in a row from q on
        for q in range(n, 0, -1):
            run[q] = run[q + 1] + 1 if ok[q - 1] and not busy[q] else 0
        return [p for p in range(1, n - width + 2) if run[p] >= width]

    first = d.below(4)
    fixed = None
    if mode == "one-side":
        roomy = [s for s in range(4) if starts(s, widths[0])]
        fixed = d.pick(roomy) if roomy else first
    groups: list[ExitGroup] = []
    for k, width in enumerate(widths):
        if mode == "random":
            options = [(s, p) for s in range(4) for p in starts(s, width)]
        else:
            order = [fixed] if fixed is not None else [(first + _OPPOSITE_FIRST[(k + j) % 4]) % 4 for j in range(4)]
            options = []
            for s in order:
                options = [(s, p) for p in starts(s, width)]
                if options:
                    break
        if not options:
            raise Redraw(f"no room for exit {k + 1} of width {width} on the border of a {cv.rows}x{cv.cols} map")
        side, start = d.pick(options)
        for q in range(start - 1, start + width + 1):
            used[side][q] = True
        cells = tuple(_border(cv, side, p)[0] for p in range(start, start + width))
        for r, c in cells:
            cv.open[r, c] = True
        groups.append(ExitGroup(SIDES[side], 1 + sum(g.side == SIDES[side] for g in groups), cells))
    return groups


def place_people(d: Draws, cv: Canvas, free: Cells, count: int, mode: str,
                 exit_cells: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Start cells for ``count`` people: ``uniform``, clustered in ``rooms``, or ``near-exits``."""
    if count > len(free):
        raise Redraw(f"{count} people do not fit on {len(free)} floor cells")
    if mode == "uniform":
        return d.sample(free, count)
    if mode == "near-exits":
        return d.sample(nearest_cells(cv.open, exit_cells, 2 * count, free.__contains__), count)
    taken: list[tuple[int, int]] = []
    chosen: set[tuple[int, int]] = set()
    open_now = free.mask.copy()  # free cells nobody has been put on yet
    rooms = d.shuffle(list(cv.rooms))
    for room in rooms:
        if len(taken) == count:
            break
        rr, cc = np.nonzero(open_now[room.r0:room.r1 + 1, room.c0:room.c1 + 1])
        cells = list(zip((rr + room.r0).tolist(), (cc + room.c0).tolist()))
        if not cells:
            continue
        want = min(count - len(taken), d.between((len(cells) + 1) // 2, len(cells)))
        for cell in d.sample(cells, want):
            taken.append(cell)
            chosen.add(cell)
            open_now[cell] = False
    closed = padded_closed(cv.open) if len(taken) < count else []
    while len(taken) < count:  # no rooms left (or none at all): gather crowds around random spots
        centre = d.pick(free)
        while centre in chosen:  # fewer than half the floor is taken, so this ends fast
            centre = d.pick(free)
        group = nearest_cells(cv.open, [centre], min(count - len(taken), d.between(5, 30)),
                              lambda c: c in free and c not in chosen, closed)
        taken.extend(group)
        chosen.update(group)
    return taken


def place_fire(d: Draws, cv: Canvas, free: Cells, people: list[tuple[int, int]],
               exits: list[ExitGroup], count: int, mode: str) -> list[tuple[int, int]]:
    """Fire origins: at ``random``, ``near-exit`` (2 to 5 steps), ``near-crowd`` (1 to 3 steps) or ``far``."""
    taken = set(people)
    options = free.without(people)
    if count > len(options):
        raise Redraw(f"{count} fire origins do not fit beside {len(people)} people")
    if mode == "random":
        return d.sample(options, count)
    if mode == "far":
        exit_cells = np.array([c for g in exits for c in g.cells])
        cells = np.stack([options.rows, options.cols], axis=1)
        manhattan = np.abs(cells[:, None, :] - exit_cells[None, :, :]).sum(axis=2).min(axis=1)
        cut = np.sort(manhattan)[(3 * len(options)) // 4]
        far = np.flatnonzero(manhattan >= cut)
        return [options[int(i)] for i in d.sample(far, count)]
    fire: list[tuple[int, int]] = []
    for _ in range(count):
        if mode == "near-exit":
            reach = within(cv.open, d.pick(exits).cells, 5)
            near = [c for c, n in sorted(reach.items()) if n >= 2 and c in free and c not in taken]
        else:
            reach = within(cv.open, [d.pick(people)], 3)
            near = [c for c, n in sorted(reach.items()) if n >= 1 and c in free and c not in taken]
        if not near:
            raise Redraw(f"no free cell for a fire origin {mode.replace('-', ' ')}")
        cell = d.pick(near)
        fire.append(cell)
        taken.add(cell)
    return fire
