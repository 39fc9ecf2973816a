"""Many episodes stepped in lockstep: the simulator's step vectorised over a batch.

A :class:`SimulationBatch` holds up to ``size`` episodes, one per *slot*, of
any scenarios (different maps, populations and step limits mix freely) and
advances every episode still playing by one step with one call,
:meth:`SimulationBatch.step`, doing the numpy work of the step once for the
whole batch instead of once per episode.

Guarantee
---------
Every episode in a batch evolves exactly as it would alone in
:class:`~emberbench.sim.simulator.Simulation` given the same moves: the same
positions, states, events (in the same order), action and blocked lines,
counters, exposure histogram and :class:`~emberbench.sim.simulator.Outcome`,
hence byte-identical run records and metrics. Episodes never influence one
another: their cells, people and counters live in disjoint regions, and the
conflict rule only ever compares people of one episode. The fire of an
episode is its ordinary :class:`~emberbench.sim.fire.FireTimeline`, computed
from its own seeded stream exactly as for a single episode (the batch reads
it, it draws nothing). ``tests/property/test_batch_props.py`` checks all of
this against single stepping on random scenarios, seeds and moves.

Contract for a lockstep driver
------------------------------
::

    batch = SimulationBatch(size=B)
    for slot, (scenario, seed) in enumerate(first_b_episodes):
        batch.start(slot, scenario, seed)
    while batch.live:
        live = batch.live                    # slots still playing, ascending
        obs = [batch.observation(s) for s in live]
        actions = policy.act_batch(obs)      # whatever the driver does
        codes = [encode_action(a, batch.inside_ids(s), batch.steps(s)) for s, a in zip(live, actions)]
        batch.step(codes)                    # one step for every live slot
        for s in live:
            if batch.done(s):
                outcome = batch.outcome(s)   # -> record_from_outcome / metrics_from_outcome
                batch.start(s, *next_episode) or leave the slot empty

* :meth:`~SimulationBatch.step` takes one array of move codes (0 stay,
  1 N, 2 E, 3 S, 4 W) per live slot, in the order of :attr:`~SimulationBatch.live`,
  each with one code per person inside in scenario order: exactly what
  :meth:`Simulation.step <emberbench.sim.simulator.Simulation.step>` takes,
  so :func:`~emberbench.sim.actions.encode_action` produces them. A slot
  whose episode ended leaves :attr:`~SimulationBatch.live` in the same call.
* :meth:`~SimulationBatch.observation`, :meth:`~SimulationBatch.inside_ids`
  and :meth:`~SimulationBatch.steps` of a slot equal those of the single
  simulator at the same point; :meth:`~SimulationBatch.observations` gives
  the first two for many slots at once, reading the people of every live
  slot in a few numpy calls instead of syncing each slot's simulation.
  :meth:`~SimulationBatch.outcome` is available once the slot is done and
  stays available until the slot is restarted.
* :meth:`~SimulationBatch.start` puts a new episode into an empty or
  finished slot at any time, between steps; its cost is that of creating
  one :class:`Simulation` plus copying its arrays, so a driver may refill
  slots as episodes end. The batch never reorders slots.
* :meth:`~SimulationBatch.abandon` stops a running episode early (a driver
  that gives episodes up); it has no outcome, and its slot can be restarted.
* Nothing in the batch depends on which other episodes share it, on the
  slot an episode occupies, or on when it was started.

:class:`~emberbench.sim.batch_seam.LockstepEpisodes` is this contract in
the shape of the simulator seam of
:func:`emberbench.records.lockstep.play_lockstep` (``new_episode`` and
``step_all``), which uses it by default.

Layout: episodes are not padded to a common shape. The per-cell arrays of
all episodes (walls, exits, fire, occupancy), the per-person arrays and the
fire-distance tables each sit in one flat :class:`~emberbench.sim.arena.Arena`,
an episode in a region of its own, addressed by ``base[slot] + local
index``. A step costs a fixed number of numpy calls plus a little Python
per live slot (appending its record lines), and its numpy work scales with
the people inside, never with the map sizes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .arena import Arena
from .fire import NEVER
from .observation import Observation
from .scenario import Scenario
from .simulator import _MOVE_BYTES, PERSON, Outcome, Simulation

_DASH = ord("-")
_CASE_BYTES = np.frombuffer(b"..wc", dtype=np.uint8)  # the blocked-line character of each case
_NO_CLAIM = np.iinfo(np.int64).max


class SimulationBatch:
    """Up to ``size`` episodes advanced in lockstep (see the module docstring for the contract).

    Args:
        size: number of slots.
    """

    def __init__(self, size: int) -> None:
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise ValueError(f"batch size must be a positive integer, got {size!r}")
        self.size = size
        self._lanes: list[Simulation | None] = [None] * size
        self._live: tuple[int, ...] = ()
        self._live_arr = np.zeros(0, dtype=np.int64)
        self._playing = [False] * size
        self._abandoned = [False] * size
        # How much of each lane object reflects the batch's current state: 0 nothing,
        # 1 what an observation needs, 2 everything (see _synced and simulation).
        self._fresh = [0] * size
        self._t = np.zeros(size, dtype=np.int64)
        self._max_steps = np.zeros(size, dtype=np.int64)
        self._population = [0] * size
        self._count = np.zeros(size, dtype=np.int64)  # people inside
        self._first_fire = np.full(size, int(NEVER), dtype=np.int64)
        self._levels = np.ones(size, dtype=np.int64)
        self._delta = np.zeros((size, 5), dtype=np.int64)
        self._pw = np.ones(size, dtype=np.int64)  # row length of each slot's padded grid
        self._attempts = np.zeros(size, dtype=np.int64)
        self._blocked_n = np.zeros(size, dtype=np.int64)
        self._congestion = np.zeros(size, dtype=np.int64)
        self._active = np.zeros(size, dtype=np.int64)
        self._last_evac = np.zeros(size, dtype=np.int64)
        self._last_cas = np.zeros(size, dtype=np.int64)
        self._cells = Arena({"wall": np.bool_, "exit": np.int64, "ignition": np.int16, "occ": np.int64,
                             "claim": np.int64}, size)
        self._people = Arena({"pos": np.int64, "state": np.int8, "moved": np.int64, "rank": np.int64, "dist": np.int64,
                              "move": np.uint8, "block": np.uint8, "id": object}, size)
        self._reach = Arena({"reach": np.int16}, size)
        self._widest = Arena({"widest": np.int64}, size)
        self._expo = Arena({"exposure": np.int64}, size)
        # The people inside the live slots, ordered by slot, then scenario index.
        self._ins_slot = np.zeros(0, dtype=np.int64)
        self._ins_local = np.zeros(0, dtype=np.int64)

    @classmethod
    def of(cls, episodes: Sequence[tuple[Scenario, int]]) -> SimulationBatch:
        """A batch with one slot per (scenario, seed), started in order."""
        batch = cls(max(len(episodes), 1))
        for slot, (scenario, seed) in enumerate(episodes):
            batch.start(slot, scenario, seed)
        return batch

    # -- slots ------------------------------------------------------------------
    @property
    def live(self) -> tuple[int, ...]:
        """The slots whose episode is still playing, ascending."""
        return self._live

    def done(self, slot: int) -> bool:
        """True when ``slot`` holds an episode that has ended (not one that was abandoned)."""
        return self._lanes[slot] is not None and not self._playing[slot] and not self._abandoned[slot]

    def steps(self, slot: int) -> int:
        """Steps played by the episode in ``slot`` (``Simulation.t``)."""
        return int(self._t[slot])

    def start(self, slot: int, scenario: Scenario, seed: int) -> None:
        """Begin the episode (scenario, seed) in ``slot``, which must be empty or finished.

        Raises:
            ValueError: the slot is out of range or its episode is still playing.
        """
        if not 0 <= slot < self.size:
            raise ValueError(f"slot {slot} is outside the batch (size {self.size})")
        if self._playing[slot]:
            raise ValueError(f"slot {slot} is still playing an episode")
        lane = Simulation(scenario, seed)
        g, fire, n = lane.grid, lane.fire, lane.population
        self._lanes[slot] = lane
        cells = g.wall.size
        self._cells.put(slot, cells, {"wall": g.wall, "exit": g.exit_of, "ignition": fire.ignition, "occ": lane.occ,
                               "claim": _NO_CLAIM})
        self._people.put(slot, n, {"pos": lane.pos, "state": 0, "moved": 0, "rank": 0, "dist": -1, "move": _DASH,
                                "block": _DASH, "id": lane._ids_arr})
        self._reach.put(slot, fire.reach.size, {"reach": fire.reach.ravel()})
        self._widest.put(slot, fire.widest.size, {"widest": fire.widest})
        self._expo.put(slot, lane._exposure.size, {"exposure": lane._exposure})
        self._levels[slot] = fire.reach.shape[1]
        self._first_fire[slot] = int(fire.ignition.min())
        self._delta[slot] = g.delta
        self._pw[slot] = g.pw
        self._t[slot] = 0
        self._max_steps[slot] = scenario.max_steps
        self._population[slot] = n
        self._count[slot] = n
        for counter in (self._attempts, self._blocked_n, self._congestion, self._active,
                        self._last_evac, self._last_cas):
            counter[slot] = 0
        at = int(np.searchsorted(self._ins_slot, slot))
        ls, ll = self._ins_slot, self._ins_local
        self._ins_slot = np.concatenate((ls[:at], np.full(n, slot, dtype=np.int64), ls[at:]))
        self._ins_local = np.concatenate((ll[:at], np.arange(n, dtype=np.int64), ll[at:]))
        self._live = tuple(sorted((*self._live, slot)))
        self._live_arr = np.asarray(self._live, dtype=np.int64)
        self._playing[slot] = True
        self._abandoned[slot] = False
        self._fresh[slot] = 2

    def abandon(self, slot: int) -> None:
        """Stop playing the episode in ``slot`` before its end; it has no outcome, and the slot can be restarted.

        Raises:
            ValueError: the slot is not playing an episode.
        """
        if not (0 <= slot < self.size and self._playing[slot]):
            raise ValueError(f"slot {slot} is not playing an episode")
        keep = self._ins_slot != slot
        self._ins_slot = self._ins_slot[keep]
        self._ins_local = self._ins_local[keep]
        self._playing[slot] = False
        self._abandoned[slot] = True
        self._live = tuple(s for s in self._live if s != slot)
        self._live_arr = np.asarray(self._live, dtype=np.int64)

    # -- what a policy sees -----------------------------------------------------
    def observation(self, slot: int) -> Observation:
        """The observation of ``slot`` for its coming step (as ``Simulation.observation``)."""
        return self._synced(slot).observation()

    def observations(self, slots: Sequence[int]) -> tuple[list[Observation], list[list[str]]]:
        """The observations of ``slots`` for their coming step, and the ids of the people inside each.

        The same as :meth:`observation` and :meth:`inside_ids` slot by slot,
        but the people of all live slots are read from the batch's arrays
        in one go (a slot that is not live is read on its own).
        """
        ls = self._ins_slot
        wanted = np.asarray(slots, dtype=np.int64)
        starts = np.searchsorted(ls, wanted, side="left").tolist()
        ends = np.searchsorted(ls, wanted, side="right").tolist()
        gp = self._people.base[ls] + self._ins_local
        rows, cols = np.divmod(self._people.arrays["pos"][gp], self._pw[ls])
        ids = self._people.arrays["id"][gp].tolist()
        people = list(map(PERSON, zip(ids, (rows - 1).tolist(), (cols - 1).tolist())))
        live = self._playing
        observations, inside = [], []
        for slot, a, b in zip(slots, starts, ends):
            lane = self._lanes[slot]
            if lane is None or not live[slot]:
                observations.append(self.observation(slot))
                inside.append(self.inside_ids(slot))
                continue
            observations.append(lane.observation_with(int(self._t[slot]), tuple(people[a:b])))
            inside.append(ids[a:b])
        return observations, inside

    def inside_ids(self, slot: int) -> list[str]:
        """Ids of the people inside in ``slot``, in scenario order."""
        return self._synced(slot).inside_ids()

    def simulation(self, slot: int) -> Simulation:
        """The slot's episode as a :class:`Simulation` brought up to date (for reading only).

        Stepping it directly would desynchronise it from the batch; use
        :meth:`step`.
        """
        lane = self._synced(slot)
        if self._fresh[slot] < 2:
            self._sync_rest(slot, lane)
            self._fresh[slot] = 2
        return lane

    def outcome(self, slot: int) -> Outcome:
        """The outcome of the finished episode in ``slot`` (as ``Simulation.outcome``)."""
        if not self.done(slot):
            raise RuntimeError(f"the episode in slot {slot} is not finished")
        return self.simulation(slot).outcome()

    @property
    def last_evacuations(self) -> np.ndarray:
        """Per slot, the people who evacuated in the last step that slot played (read-only view)."""
        view = self._last_evac.view()
        view.flags.writeable = False
        return view

    @property
    def last_casualties(self) -> np.ndarray:
        """Per slot, the people who became casualties in the last step that slot played (read-only view)."""
        view = self._last_cas.view()
        view.flags.writeable = False
        return view

    def _synced(self, slot: int) -> Simulation:
        lane = self._lanes[slot]
        if lane is None:
            raise ValueError(f"slot {slot} holds no episode")
        if not self._fresh[slot]:
            lane.t = int(self._t[slot])
            lane.pos[:] = self._people.region("pos", slot)
            lane.state[:] = self._people.region("state", slot)
            lane.inside = np.flatnonzero(lane.state == 0)
            self._fresh[slot] = 1
        return lane

    def _sync_rest(self, slot: int, lane: Simulation) -> None:
        """Copy the state the observation does not need (occupancy, counters) into the lane."""
        lane.occ[:] = self._cells.region("occ", slot)
        lane._cells_moved[:] = self._people.region("moved", slot)
        lane._exposure[:] = self._expo.region("exposure", slot)
        lane._active = int(self._active[slot])
        lane._attempts = int(self._attempts[slot])
        lane._blocked_n = int(self._blocked_n[slot])
        lane._congestion = int(self._congestion[slot])

    # -- one step ---------------------------------------------------------------
    def step(self, codes: Sequence[np.ndarray | Sequence[int]]) -> None:
        """Advance every live slot by one step.

        Args:
            codes: one sequence of move codes per slot of :attr:`live`, in
                that order, each with one code per person inside the slot's
                episode, in scenario order.

        Raises:
            ValueError: the number of code arrays, the length of one of
                them, or a code is wrong (nothing has changed then).
        """
        live = self._live
        if len(codes) != len(live):
            raise ValueError(f"expected move codes for {len(live)} live slots, got {len(codes)}")
        if not live:
            return
        lengths = np.fromiter(map(len, codes), dtype=np.int64, count=len(codes))
        expected = self._count[self._live_arr]
        if not np.array_equal(lengths, expected):
            bad = int(np.flatnonzero(lengths != expected)[0])
            raise ValueError(f"slot {live[bad]}: expected {int(self._count[live[bad]])} move codes, "
                             f"got {int(lengths[bad])}")
        c = np.concatenate(codes) if len(codes) > 1 else np.asarray(codes[0])
        if c.dtype.kind not in "iu" and c.size:
            raise ValueError(f"move codes must be integers, got {c.dtype}")
        c = c.astype(np.int64, copy=False)
        if (c.view(np.uint64) > 4).any():
            raise ValueError("move codes must be 0 (stay), 1 (N), 2 (E), 3 (S) or 4 (W)")

        size = self.size
        P, C = self._people.arrays, self._cells.arrays
        ls, ll = self._ins_slot, self._ins_local
        n = ls.size
        gp = self._people.base[ls] + ll  # arena index of each person inside
        cb = self._cells.base[ls]
        t_prev = self._t[ls]
        pos_in = P["pos"][gp]

        # 1. Exposure, against the fire at the end of the previous step.
        fired = np.flatnonzero(self._first_fire[ls] <= t_prev)
        if fired.size:
            self._expose(fired, ls, gp, t_prev, pos_in)
        live_arr = self._live_arr
        self._active[live_arr] += self._count[live_arr]

        # 2. Moves: exactly Simulation.step's conflict rule, over all episodes at once.
        movers = c != 0
        tgt = pos_in + self._delta[ls, c]
        gt = cb + tgt
        wall_blocked = movers & C["wall"][gt]
        cand = np.flatnonzero(movers & ~wall_blocked)
        status = np.zeros(n, dtype=np.int8)
        if cand.size:
            # Episodes' cells are disjoint, so a contest only ever involves one episode,
            # and within it a lower position in the batch order is a lower scenario index.
            tc = gt[cand]
            claim = C["claim"]
            np.minimum.at(claim, tc, cand)
            winners = cand[claim[tc] == cand]
            claim[tc] = _NO_CLAIM
            occupant = C["occ"][gt[winners]]
            free = occupant < 0
            status[winners[free]] = 1
            pending = winners[~free]
            if pending.size:
                rank = P["rank"]
                rank[gp] = np.arange(n)
                nxt = np.zeros(n, dtype=np.int64)
                nxt[pending] = rank[self._people.base[ls[pending]] + occupant[~free]]
                status[pending] = -1
                # Chains never cross episodes; rounds beyond the longest chain change nothing.
                for _ in range(n.bit_length() + 1):
                    s = status[nxt[pending]]
                    resolved = s != -1
                    status[pending[resolved]] = s[resolved]
                    pending = pending[~resolved]
                    if not pending.size:
                        break
                    nxt[pending] = nxt[nxt[pending]]
                status[pending] = 0  # swaps and cycles never resolve: blocked
        ok = status == 1
        # Each person's case: 0 stays, 1 moves, 2 blocked by a wall, 3 blocked by people.
        case = 3 * movers.astype(np.int64) - 2 * ok - wall_blocked
        per_slot = np.bincount(ls * 4 + case, minlength=4 * size).reshape(size, 4)
        self._attempts += per_slot[:, 1:].sum(axis=1)
        self._blocked_n += per_slot[:, 2] + per_slot[:, 3]
        self._congestion += per_slot[:, 3]

        mv, bl = P["move"], P["block"]
        mv[gp] = _MOVE_BYTES[c]
        bl[gp] = _CASE_BYTES[case]
        mv_text = mv.tobytes().decode("ascii")
        bl_text = bl.tobytes().decode("ascii")

        here = pos_in
        moved = np.flatnonzero(ok)
        if moved.size:
            who, wcb = gp[moved], cb[moved]
            occ = C["occ"]
            occ[wcb + pos_in[moved]] = -1
            here = pos_in.copy()
            here[moved] = tgt[moved]
            P["pos"][who] = here[moved]
            occ[wcb + here[moved]] = ll[moved]
            P["moved"][who] += 1

        # 3.-5. Fire, casualties, evacuations.
        t_new = t_prev + 1
        ghere = cb + here
        burning = C["ignition"][ghere] <= t_new
        exit_idx = C["exit"][ghere]
        leaving = exit_idx >= 0
        leaving &= ~burning
        gone = burning | leaving
        self._last_cas[live_arr] = 0
        self._last_evac[live_arr] = 0
        any_gone = bool(gone.any())
        if any_gone:
            t_of = self._t.tolist()  # steps played before this one, per slot
            lanes = self._lanes
            dead = np.flatnonzero(burning)
            if dead.size:
                P["state"][gp[dead]] = 2
                self._last_cas += np.bincount(ls[dead], minlength=size)
                who = ll[dead].tolist()
                for slot, a, b in _groups(ls[dead]):
                    lanes[slot]._cas.extend(zip([t_of[slot] + 1] * (b - a), who[a:b]))  # type: ignore[union-attr]
            out = np.flatnonzero(leaving)
            if out.size:
                P["state"][gp[out]] = 1
                self._last_evac += np.bincount(ls[out], minlength=size)
                who, via = ll[out].tolist(), exit_idx[out].tolist()
                for slot, a, b in _groups(ls[out]):
                    lanes[slot]._evac.extend(  # type: ignore[union-attr]
                        zip([t_of[slot] + 1] * (b - a), who[a:b], via[a:b]))
            C["occ"][ghere[gone]] = -1
            gone_p = gp[gone]
            mv[gone_p] = _DASH
            bl[gone_p] = _DASH
        self._t[live_arr] += 1

        # Record lines, and which episodes ended.
        base = self._people.base.tolist()
        pop = self._population
        lanes = self._lanes
        for slot in live:
            a = base[slot]
            lane = lanes[slot]
            lane._actions.append(mv_text[a : a + pop[slot]])  # type: ignore[union-attr]
            lane._blocked.append(bl_text[a : a + pop[slot]])  # type: ignore[union-attr]
            self._fresh[slot] = 0
        keep = ~gone
        if any_gone:
            self._count -= np.bincount(ls[gone], minlength=size)
        ended = live_arr[(self._count[live_arr] == 0) | (self._t[live_arr] >= self._max_steps[live_arr])]
        if ended.size:
            finished = np.zeros(size, dtype=bool)
            finished[ended] = True
            keep &= ~finished[ls]
            self._live = tuple(s for s in live if not finished[s])
            self._live_arr = np.asarray(self._live, dtype=np.int64)
            for slot in ended.tolist():
                self._playing[slot] = False
        if any_gone or ended.size:
            self._ins_slot = ls[keep]
            self._ins_local = ll[keep]

    def _expose(self, fired: np.ndarray, ls: np.ndarray, gp: np.ndarray, t_prev: np.ndarray,
                pos_in: np.ndarray) -> None:
        """Add the fire distances of the people at ``fired`` (positions in the batch order) to their histograms.

        ``FireTimeline.distances`` per episode, for all of them at once. The
        single simulator counts the levels among the first ``widest[step]``
        of the cell's reach row that are later than the step. A reach row
        never increases along its levels (each level is a minimum over a
        larger ball), and level ``widest[step]`` is never later than the step
        (some cell burns), so that count is the first level at most the step,
        found here by binary search in a range known to hold it.

        The range: a person's first measurement searches ``[0, widest[step]]``.
        After that, with ``d`` their distance one step earlier, the new one
        lies in ``[d - 2, d + 1]``: they moved at most one cell (distance
        changes by at most 1), and every cell that ignited since is next to
        a cell that burned before (distance drops by at most 1 more). Fire
        burns at every step of an episode or at none (a cell never stops
        burning), so a person inside is measured at every step and ``d`` is
        always from the step before.
        """
        s = ls[fired]
        step = t_prev[fired]
        row = self._reach.base[s] + pos_in[fired] * self._levels[s]
        widest = self._widest.arrays["widest"][self._widest.base[s] + step]
        where = gp[fired]
        known = self._people.arrays["dist"][where]
        reach = self._reach.arrays["reach"]
        lo = np.maximum(known - 2, 0)
        hi = np.minimum(known + 1, widest)
        first = np.flatnonzero(known < 0)
        if first.size:  # searched apart, so that the others keep their short search
            again = np.flatnonzero(known >= 0)
            lo[again] = _first_not_later(reach, row[again], step[again], lo[again], hi[again])
            lo[first] = _first_not_later(reach, row[first], step[first], np.zeros(first.size, dtype=np.int64),
                                         widest[first])
        else:
            lo = _first_not_later(reach, row, step, lo, hi)
        self._people.arrays["dist"][where] = lo
        exposure = self._expo.arrays["exposure"]
        exposure += np.bincount(self._expo.base[s] + lo, minlength=exposure.size)


def _first_not_later(reach: np.ndarray, row: np.ndarray, step: np.ndarray, lo: np.ndarray,
                     hi: np.ndarray) -> np.ndarray:
    """Per person, the first level in ``[lo, hi]`` of their reach row that is at most their step.

    The answer must lie in the range (the level at ``hi`` is not later than
    the step, or the answer is known to be at most ``hi``).
    """
    if not lo.size:
        return lo
    for _ in range(int((hi - lo).max()).bit_length()):
        mid = (lo + hi) >> 1
        later = reach[row + mid] > step
        lo = np.where(later, mid + 1, lo)
        hi = np.where(later, hi, mid)
    return lo


def _groups(slots: np.ndarray) -> list[tuple[int, int, int]]:
    """(slot, start, end) of each run of equal values in ``slots`` (sorted by slot)."""
    cuts = [0, *(np.flatnonzero(slots[1:] != slots[:-1]) + 1).tolist(), slots.size]
    firsts = slots[cuts[:-1]].tolist()
    return list(zip(firsts, cuts[:-1], cuts[1:]))
