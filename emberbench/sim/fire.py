"""The fire: a pure function of (scenario, seed), computed ahead of the people.

Spread rule (see docs/simulation-contract.md). At step ``t`` (1, 2, ...) every
non-wall cell that is not burning and has a 4-neighbour burning at the end of
step ``t - 1`` ignites when its draw is below the threshold:

* draw = draw number ``(t - 1) * H * W + cell`` of the stream ``"fire"``,
  where ``cell = row * W + col``;
* threshold = ``floor(numerator * 2**64 / denominator)``; a spread of 1
  ignites every candidate and 0 none, without drawing.

A cell never stops burning. Because draws are addressed by (step, cell) and the
candidates depend only on the fire itself, the whole timeline is fixed by the
scenario and the seed: two policies on one (scenario, seed) face the same fire
cell for cell and step for step. The timeline is stored as the step at which
each cell ignites (``NEVER`` if it does not within ``max_steps``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .grid import Grid, compile_grid
from .rng import draws, stream_key
from .scenario import Scenario

NEVER = np.int16(32767)  # larger than any max_steps (<= 10 000)
FIRE_STREAM = "fire"


@dataclass(frozen=True, slots=True, eq=False)
class FireTimeline:
    """The ignition step of every cell, and what is derived from it.

    Attributes:
        ignition: int16 ignition step per padded cell (``NEVER`` for walls
            and cells that do not ignite within ``max_steps``).
        burning_count: number of burning cells at the end of each step
            ``0..max_steps``.
        reach: int16 array (padded cells x levels): ``reach[x, d]`` is the
            earliest ignition step among cells within L1 distance ``d`` of
            ``x`` (walls do not shield). The distance from ``x`` to the fire
            at step ``s`` is the number of levels with ``reach[x, d] > s``,
            or infinite if even the last level is ``> s``.
        widest: for each step, how many leading levels can still exceed it
            (the greatest distance of any cell to the fire at that step).
    """

    ignition: np.ndarray
    burning_count: np.ndarray
    reach: np.ndarray
    widest: np.ndarray

    def distances(self, cells: np.ndarray, step: int) -> np.ndarray:
        """L1 distance from each padded cell to the nearest cell burning at ``step``.

        At least one cell must be burning at ``step`` (``burning_count[step] > 0``);
        the last level of ``reach`` then is ``<= step`` everywhere.
        """
        # No cell is farther than widest[step] levels, so only those columns matter.
        block = self.reach[cells, : self.widest[step]]
        return np.count_nonzero(block > step, axis=1)


def fire_timeline(scenario: Scenario, seed: int) -> FireTimeline:
    """Compute the fire of ``scenario`` under ``seed`` for all of its steps."""
    g = compile_grid(scenario)
    ignition = _ignition(g, scenario, seed)
    counts = np.bincount(ignition[ignition != NEVER].astype(np.int64), minlength=scenario.max_steps + 1)
    burning_count = np.cumsum(counts[: scenario.max_steps + 1])
    reach = _reach(ignition, g)
    # widest[s]: the number of levels at which some cell is still farther than
    # step s from the fire, i.e. the largest distance any cell has at step s.
    column_max = reach.max(axis=0)
    steps = np.arange(scenario.max_steps + 1)
    widest = np.count_nonzero(column_max[None, :] > steps[:, None], axis=1)
    for arr in (ignition, burning_count, reach, widest):
        arr.flags.writeable = False
    return FireTimeline(ignition=ignition, burning_count=burning_count, reach=reach, widest=widest)


def _ignition(g: Grid, scenario: Scenario, seed: int) -> np.ndarray:
    n_pad = g.wall.size
    pw = g.pw
    ignition = np.full(n_pad, NEVER, dtype=np.int16)
    burning = np.zeros(n_pad, dtype=bool)
    start = g.pad_of_cell[g.fire0]
    burning[start] = True
    ignition[start] = 0
    flammable = ~g.wall
    num, den = scenario.spread_numerator, scenario.spread_denominator
    if num == 0 or start.size == 0:
        return ignition
    always = num == den
    threshold = np.uint64((num << 64) // den) if not always else None
    key = stream_key(seed, FIRE_STREAM)
    n_cells = np.uint64(g.height * g.width)
    cell_ids = g.cell_of_pad.astype(np.uint64)
    offsets = np.array([-pw, 1, pw, -1], dtype=np.int64)
    # The candidates (flammable, not burning, next to fire) are kept up to
    # date from the cells that ignite, instead of being recomputed from the
    # whole grid each step; the set is the same either way.
    cand_mask = np.zeros(n_pad, dtype=bool)
    _mark_neighbours(cand_mask, start, offsets, flammable, burning)
    for t in range(1, scenario.max_steps + 1):
        cand = np.flatnonzero(cand_mask)
        if cand.size == 0:
            break
        if not always:
            counters = np.uint64(t - 1) * n_cells + cell_ids[cand]
            cand = cand[draws(key, counters) < threshold]
            if cand.size == 0:
                continue
        burning[cand] = True
        ignition[cand] = t
        cand_mask[cand] = False
        _mark_neighbours(cand_mask, cand, offsets, flammable, burning)
    return ignition


def _mark_neighbours(mask: np.ndarray, cells: np.ndarray, offsets: np.ndarray, flammable: np.ndarray,
                     burning: np.ndarray) -> None:
    """Mark the flammable, non-burning 4-neighbours of ``cells`` as candidates."""
    nb = (cells[:, None] + offsets).ravel()
    nb = nb[flammable[nb] & ~burning[nb]]
    mask[nb] = True


def _reach(ignition: np.ndarray, g: Grid) -> np.ndarray:
    """Stack of min-filters of the ignition map over growing L1 balls."""
    shape = (g.height + 2, g.pw)
    level = ignition.reshape(shape)
    levels = [ignition]
    for _ in range(g.height + g.width + 2):
        nxt = level.copy()
        np.minimum(nxt[1:], level[:-1], out=nxt[1:])
        np.minimum(nxt[:-1], level[1:], out=nxt[:-1])
        np.minimum(nxt[:, 1:], level[:, :-1], out=nxt[:, 1:])
        np.minimum(nxt[:, :-1], level[:, 1:], out=nxt[:, :-1])
        if np.array_equal(nxt, level):
            break
        level = nxt
        levels.append(level.ravel())
    return np.ascontiguousarray(np.stack(levels, axis=1))
