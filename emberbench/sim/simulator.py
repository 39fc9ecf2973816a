"""The simulator: vectorised state and the fixed order of one step.

One step ``t`` (1-based) of an episode, in this order (docs/simulation-contract.md):

1. *Exposure.* Each person inside is measured against the fire as it was at
   the end of step ``t - 1`` (what the policy saw).
2. *Moves.* Every person inside has a move (stay, N, E, S, W). A move into a
   wall or off the map is blocked (``w``). Among movers aiming at the same
   cell, the person with the lowest scenario index wins; the others are
   blocked by people (``c``). A winner moves if its target is empty at the
   start of the step, or if the person there moves away successfully this
   step; swaps and longer cycles are blocked (``c``). The rule uses only
   person indices and cells, never dict or set order.
3. *Fire.* The fire advances to its state at step ``t`` (:mod:`.fire`).
4. *Casualties.* A person on a burning cell becomes a casualty.
5. *Evacuations.* A person on an exit cell (necessarily not burning, by 4)
   evacuates through that exit.

The episode ends when nobody is inside (``all_resolved``) or after
``max_steps`` steps (``max_steps``); if both happen at once it is ``all_resolved``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .fire import FireTimeline, fire_timeline
from .grid import MOVE_CHARS, Grid, bfs_distance, compile_grid
from .observation import ExitView, Observation, PersonView
from .scenario import Scenario

INSIDE, EVACUATED, CASUALTY = 0, 1, 2
_MOVE_BYTES = np.frombuffer(MOVE_CHARS.encode("ascii"), dtype=np.uint8)
_DASH, _DOT, _W, _C = ord("-"), ord("."), ord("w"), ord("c")
_NO_CLAIM = np.iinfo(np.int64).max
PERSON = functools.partial(tuple.__new__, PersonView)
"""``PERSON((id, row, col))`` is ``PersonView._make`` without a Python call per person."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """The integer facts of a finished episode, from which records and metrics are made.

    Attributes:
        steps: number of steps played.
        termination: ``all_resolved`` or ``max_steps``.
        actions, blocked: one string per step, one character per person.
        evacuations: (step, person index, exit index) in event order.
        casualties: (step, person index) in event order.
        stranded: indices of people still inside at the end.
        terminal_trapped: how many of the stranded cannot reach a non-burning
            exit through non-wall, non-burning cells at the end.
        movement_attempts, blocked_moves, congestion_blocks: move counters.
        cells_moved: cells moved by each person.
        exposure: count of person-step measurements at each distance d >= 1
            (index d of the list; index 0 is always 0).
        active_person_states: person-step measurements taken (people inside
            at the start of a step), including those with no fire anywhere.
        burning: number of burning cells at the end of each step 1..steps.
    """

    steps: int
    termination: str
    actions: tuple[str, ...]
    blocked: tuple[str, ...]
    evacuations: tuple[tuple[int, int, int], ...]
    casualties: tuple[tuple[int, int], ...]
    stranded: tuple[int, ...]
    terminal_trapped: int
    movement_attempts: int
    blocked_moves: int
    congestion_blocks: int
    cells_moved: tuple[int, ...]
    exposure: tuple[int, ...]
    active_person_states: int
    burning: tuple[int, ...]


_FIRE_CACHE: dict[tuple[str, int], FireTimeline] = {}
_FIRE_CACHE_SIZE = 8


def cached_fire(scenario: Scenario, seed: int) -> FireTimeline:
    """The fire timeline of (scenario, seed), memoised for the last few pairs.

    The timeline is a pure function of its key, so sharing it between a run
    and its replay changes nothing but time.
    """
    key = (scenario.content_hash, seed)
    fire = _FIRE_CACHE.get(key)
    if fire is None:
        fire = fire_timeline(scenario, seed)
        if len(_FIRE_CACHE) >= _FIRE_CACHE_SIZE:
            _FIRE_CACHE.pop(next(iter(_FIRE_CACHE)))
        _FIRE_CACHE[key] = fire
    return fire


def clear_fire_cache() -> None:
    """Forget memoised fire timelines (benchmarks measure cold starts with it)."""
    _FIRE_CACHE.clear()


class Simulation:
    """One episode's mutable state. Use :func:`emberbench.records.episode.run_episode` to play.

    Args:
        scenario: the scenario.
        seed: the 64-bit episode seed (the fire's only source of randomness).
    """

    def __init__(self, scenario: Scenario, seed: int) -> None:
        self.scenario = scenario
        self.grid: Grid = compile_grid(scenario)
        self.fire: FireTimeline = cached_fire(scenario, seed)
        g = self.grid
        n = scenario.population
        self.population = n
        self.pos = g.starts.copy()
        self.state = np.zeros(n, dtype=np.int8)
        self.inside = np.arange(n, dtype=np.int64)
        self.occ = np.full(g.wall.size, -1, dtype=np.int64)
        self.occ[self.pos] = np.arange(n)
        self._local = np.zeros(n, dtype=np.int64)
        self.t = 0
        self.ids = tuple(p.id for p in scenario.people)
        self._ids_arr = np.array(self.ids, dtype=object)
        self._exits = tuple(ExitView(e.id, e.row, e.col) for e in scenario.exits)
        self._grid_rows: tuple[str, ...] | None = None
        self._grid_count = -1
        self._actions: list[str] = []
        self._blocked: list[str] = []
        self._evac: list[tuple[int, int, int]] = []
        self._cas: list[tuple[int, int]] = []
        self._cells_moved = np.zeros(n, dtype=np.int64)
        self._exposure = np.zeros(g.height + g.width + 3, dtype=np.int64)
        self._active = 0
        self._attempts = 0
        self._blocked_n = 0
        self._congestion = 0
        self._chunk_move = np.empty(n, dtype=np.uint8)
        self._claim = np.full(g.wall.size, _NO_CLAIM, dtype=np.int64)
        self._chunk_block = np.empty(n, dtype=np.uint8)

    # -- what a policy sees -------------------------------------------------
    @property
    def done(self) -> bool:
        """True when nobody is inside or the step limit is reached."""
        return self.inside.size == 0 or self.t >= self.scenario.max_steps

    def inside_ids(self) -> list[str]:
        """Ids of the people inside, in scenario order."""
        return self._ids_arr[self.inside].tolist()

    def observation(self) -> Observation:
        """The observation for the coming step."""
        rows, cols = np.divmod(self.pos[self.inside], self.grid.pw)
        people = tuple(map(PERSON, zip(self._ids_arr[self.inside].tolist(), (rows - 1).tolist(), (cols - 1).tolist())))
        return self.observation_with(self.t, people)

    def observation_with(self, t: int, people: tuple[PersonView, ...]) -> Observation:
        """The observation at step ``t`` with ``people`` inside (the batch stepper brings the people it keeps)."""
        g = self.grid
        count = int(self.fire.burning_count[t])
        if count != self._grid_count:  # the fire only grows: the same count is the same burning cells
            chars = g.static_chars.copy()
            burning = self.fire.ignition[g.pad_of_cell] <= t
            chars[burning] = ord("*")
            raw = chars.tobytes().decode("ascii")
            w = g.width
            self._grid_rows = tuple(raw[i : i + w] for i in range(0, len(raw), w))
            self._grid_count = count
        return Observation(
            step=t, max_steps=self.scenario.max_steps, height=g.height, width=g.width,
            grid=self._grid_rows, exits=self._exits, people=people,  # type: ignore[arg-type]
        )

    # -- one step -------------------------------------------------------------
    def step(self, codes: np.ndarray, action_line: str | None = None) -> None:
        """Advance one step with one move code per person inside (scenario order).

        Args:
            codes: move codes of the people inside, in scenario order.
            action_line: the record line these codes were decoded from, if any
                (a replay has it already and it is exactly the line this step
                would write, so it is kept instead of being rebuilt).
        """
        g, fire = self.grid, self.fire
        ins = self.inside
        n = ins.size
        t = self.t + 1
        pos_in = self.pos[ins]

        if fire.burning_count[t - 1]:  # with nothing burning there is no finite distance to count
            dist = fire.distances(pos_in, t - 1)
            self._exposure[: dist.max() + 1] += np.bincount(dist)
        self._active += n

        movers = codes != 0
        tgt = pos_in + g.delta[codes]
        wall_blocked = movers & g.wall[tgt]
        cand = np.flatnonzero(movers & ~wall_blocked)
        status = np.zeros(n, dtype=np.int8)
        if cand.size:
            # Lowest index wins a contested cell: the minimum claimant per target.
            tc = tgt[cand]
            claim = self._claim
            np.minimum.at(claim, tc, cand)
            winners = cand[claim[tc] == cand]
            claim[tc] = _NO_CLAIM
            occupant = self.occ[tgt[winners]]
            free = occupant < 0
            status[winners[free]] = 1
            pending = winners[~free]
            if pending.size:
                self._local[ins] = np.arange(n)
                nxt = np.zeros(n, dtype=np.int64)
                nxt[pending] = self._local[occupant[~free]]
                status[pending] = -1
                for _ in range(n.bit_length() + 1):
                    s = status[nxt[pending]]
                    done = s != -1
                    status[pending[done]] = s[done]
                    pending = pending[~done]
                    if not pending.size:
                        break
                    nxt[pending] = nxt[nxt[pending]]
                status[pending] = 0  # swaps and cycles never resolve: blocked
        ok = status == 1
        moved_local = np.flatnonzero(ok)
        attempts = int(np.count_nonzero(movers))
        walls = int(np.count_nonzero(wall_blocked))
        people_blocked = attempts - walls - int(moved_local.size)
        self._attempts += attempts
        self._blocked_n += walls + people_blocked
        self._congestion += people_blocked

        if action_line is None:
            mv = self._chunk_move
            mv.fill(_DASH)
            mv[ins] = _MOVE_BYTES[codes]
            action_line = mv.tobytes().decode("ascii")
        self._actions.append(action_line)
        bl = self._chunk_block
        bl.fill(_DASH)
        bl[ins] = _DOT
        if walls:
            bl[ins[wall_blocked]] = _W
        if people_blocked:
            bl[ins[movers & ~wall_blocked & ~ok]] = _C
        self._blocked.append(bl.tobytes().decode("ascii"))

        if moved_local.size:
            who = ins[moved_local]
            self.occ[self.pos[who]] = -1
            self.pos[who] = tgt[moved_local]
            self.occ[self.pos[who]] = who
            self._cells_moved[who] += 1

        here = self.pos[ins]
        burning = fire.ignition[here] <= t
        exit_idx = g.exit_of[here]
        leaving = exit_idx >= 0
        leaving &= ~burning
        gone = burning | leaving
        if gone.any():
            dead = ins[burning]
            if dead.size:
                self.state[dead] = 2
                self._cas.extend((t, i) for i in dead.tolist())
            out = ins[leaving]
            if out.size:
                self.state[out] = 1
                self._evac.extend(zip([t] * out.size, out.tolist(), exit_idx[leaving].tolist()))
            self.occ[here[gone]] = -1
            self.inside = ins[~gone]
        self.t = t

    def blocked_line(self, step: int) -> str:
        """The blocked-moves line of ``step`` (1-based) as it will appear in the record."""
        return self._blocked[step - 1]

    # -- the end ----------------------------------------------------------------
    def outcome(self) -> Outcome:
        """The facts of the finished episode."""
        if not self.done:
            raise RuntimeError("episode is not finished")
        g = self.grid
        stranded = self.inside
        trapped = 0
        if stranded.size:
            burning = self.fire.ignition <= self.t
            exits = g.exit_cells[~burning[g.exit_cells]]
            reach = bfs_distance(g.wall, g.pw, exits, blocked=burning)
            trapped = int(np.count_nonzero(reach[self.pos[stranded]] < 0))
        last = int(np.flatnonzero(self._exposure).max()) if self._exposure.any() else 0
        return Outcome(
            steps=self.t,
            termination="all_resolved" if stranded.size == 0 else "max_steps",
            actions=tuple(self._actions),
            blocked=tuple(self._blocked),
            evacuations=tuple(self._evac),
            casualties=tuple(self._cas),
            stranded=tuple(stranded.tolist()),
            terminal_trapped=trapped,
            movement_attempts=self._attempts,
            blocked_moves=self._blocked_n,
            congestion_blocks=self._congestion,
            cells_moved=tuple(self._cells_moved.tolist()),
            exposure=tuple(self._exposure[: last + 1].tolist()),
            active_person_states=self._active,
            burning=tuple(self.fire.burning_count[1 : self.t + 1].tolist()),
        )
