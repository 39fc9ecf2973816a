"""The baseline policies: ``stay``, ``greedy``, ``fire-aware`` and ``random``.

Each class is a policy *factory*: calling it with no arguments returns a fresh
policy, which is a callable taking one :class:`Observation` and returning an
action (a dict of person id to move). They read only the observation. Each
also declares a batch form (``batch_factory``, :mod:`.forms`), so they run
with ``--batch-size`` too.
"""

from __future__ import annotations

import numpy as np

from ..sim.actions import MOVES
from ..sim.grid import bfs_distance
from ..sim.observation import Observation
from ..sim.rng import SplitMix64
from .forms import SlotPolicies

_UNREACHABLE = np.iinfo(np.int32).max


class _MapCache:
    """Padded wall mask and exit cells parsed from an observation's grid."""

    def __init__(self, obs: Observation) -> None:
        self.pw = obs.width + 2
        wall = np.ones((obs.height + 2, self.pw), dtype=bool)
        wall[1:-1, 1:-1] = np.array([[ch == "#" for ch in row] for row in obs.grid], dtype=bool)
        self.wall = wall.ravel()
        self.exits = np.array([(e.row + 1) * self.pw + e.col + 1 for e in obs.exits], dtype=np.int64)
        self.delta = np.array([-self.pw, 1, self.pw, -1], dtype=np.int64)

    def cells(self, obs: Observation) -> np.ndarray:
        """Padded cells of the people inside, in observation order."""
        people = obs.people
        rows = np.fromiter((p.row for p in people), dtype=np.int64, count=len(people))
        cols = np.fromiter((p.col for p in people), dtype=np.int64, count=len(people))
        return (rows + 1) * self.pw + cols + 1

    def downhill(self, dist: np.ndarray) -> np.ndarray:
        """Per padded cell, the move code (0 stay, 1..4 N E S W) that lowers ``dist`` most.

        Ties go to the first of N, E, S, W. Cells with no lower neighbour stay.
        """
        d = np.where(dist < 0, _UNREACHABLE, dist).astype(np.int64)
        n = d.size
        idx = np.arange(n)
        neigh = np.stack([d[np.clip(idx + step, 0, n - 1)] for step in self.delta])
        best = np.argmin(neigh, axis=0)
        best_d = neigh[best, idx]
        return np.where(best_d < d, best + 1, 0).astype(np.int64)


def _action(obs: Observation, codes: np.ndarray) -> dict[str, str]:
    return dict(zip((p.id for p in obs.people), map(MOVES.__getitem__, codes.tolist())))


class _BothForms:
    """Declares the batch form of a baseline: one fresh instance per slot (:class:`~.forms.SlotPolicies`).

    The baselines' work is per episode (a route map of the episode's grid),
    so their batch form gives exactly the records of their per-episode form.
    """

    @classmethod
    def batch_factory(cls) -> SlotPolicies:
        """A new batch policy of this baseline (``--batch-size``)."""
        return SlotPolicies(cls)


class StayPolicy(_BothForms):
    """Everybody stays where they are (a lower bound that evacuates nobody)."""

    def __call__(self, obs: Observation) -> dict[str, str]:
        return {p.id: "stay" for p in obs.people}


class GreedyPolicy(_BothForms):
    """Static shortest path to the nearest exit; ignores fire and other people."""

    def __init__(self) -> None:
        self._map: _MapCache | None = None
        self._moves: np.ndarray | None = None

    def __call__(self, obs: Observation) -> dict[str, str]:
        if self._map is None:
            self._map = _MapCache(obs)
            self._moves = self._map.downhill(bfs_distance(self._map.wall, self._map.pw, self._map.exits))
        assert self._moves is not None
        return _action(obs, self._moves[self._map.cells(obs)])


class FireAwarePolicy(_BothForms):
    """Shortest path that avoids burning cells and cells next to fire.

    Each person heads for the nearest non-burning exit reachable without
    entering a burning cell or a cell next to one. Where no such route exists
    it falls back to a route that only avoids burning cells; failing that, it
    stays. Routes are recomputed when the fire changes.
    """

    def __init__(self) -> None:
        self._map: _MapCache | None = None
        self._grid: tuple[str, ...] | None = None
        self._moves: np.ndarray | None = None

    def __call__(self, obs: Observation) -> dict[str, str]:
        if self._map is None:
            self._map = _MapCache(obs)
        if obs.grid != self._grid:
            self._moves = self._plan(obs)
            self._grid = obs.grid
        assert self._moves is not None
        return _action(obs, self._moves[self._map.cells(obs)])

    def _plan(self, obs: Observation) -> np.ndarray:
        m = self._map
        assert m is not None
        burning = np.zeros((obs.height + 2, m.pw), dtype=bool)
        burning[1:-1, 1:-1] = np.array([[ch == "*" for ch in row] for row in obs.grid], dtype=bool)
        burning = burning.ravel()
        near = burning.copy()
        near[m.pw:] |= burning[:-m.pw]
        near[:-m.pw] |= burning[m.pw:]
        near[1:] |= burning[:-1]
        near[:-1] |= burning[1:]
        exits = m.exits[~burning[m.exits]]
        danger = near.copy()
        danger[exits] = False  # an exit that is not burning may be entered
        safe = m.downhill(bfs_distance(m.wall, m.pw, exits, blocked=danger))
        risky = m.downhill(bfs_distance(m.wall, m.pw, exits, blocked=burning))
        # Where no safe neighbour leads out (including cells next to fire
        # with only dangerous neighbours), take the route that only avoids
        # burning cells.
        return np.where(safe != 0, safe, risky)


class RandomPolicy(_BothForms):
    """Uniform random moves from a fixed internal generator (never the episode seed)."""

    SEED = 0x5EED_F1E1_D0_0D

    def __init__(self) -> None:
        self._rng = SplitMix64(self.SEED)

    def __call__(self, obs: Observation) -> dict[str, str]:
        below = self._rng.below
        return {p.id: MOVES[below(5)] for p in obs.people}


BUILTIN_POLICIES = {
    "stay": StayPolicy,
    "greedy": GreedyPolicy,
    "fire-aware": FireAwarePolicy,
    "random": RandomPolicy,
}
