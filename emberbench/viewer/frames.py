"""An episode as frames: what every step looked like, recorded by replaying it in the simulator.

:func:`episode_frames` replays an authenticated record through
:func:`emberbench.records.episode.replay` with an observer, and keeps, per step, one
character per person saying what that person's move did (the *move code*),
plus each person's fate and the step every cell caught fire. Positions at any
step follow from the start cells and the move codes, so a whole episode of
the largest public scenario fits in about a hundred kilobytes. The observer
checks every move it encodes against the simulator's own positions, so what
a viewer draws is exactly what the simulator computed.

Move codes (one per person and step):

==========  ==================================================
``-``       not inside at the start of the step
``.``       stayed
``N E S W`` moved one cell north, east, south or west
``n e s w`` tried that direction, blocked by a wall or the map edge
``1 2 3 4`` tried north, east, south or west, blocked by people
==========  ==================================================
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..records.episode import replay
from ..errors import PresentationError
from ..sim.fire import NEVER
from ..sim.grid import compile_grid
from ..records.metrics import EpisodeMetrics
from ..records.record import RunRecord
from ..sim.scenario import Scenario
from ..sim.simulator import Simulation, cached_fire

MOVED, WALL_BLOCKED, PEOPLE_BLOCKED = "NESW", "nesw", "1234"
DIRECTION_OF = {c: i for group in (MOVED, WALL_BLOCKED, PEOPLE_BLOCKED) for i, c in enumerate(group)}
"""Move code -> direction index (0 north, 1 east, 2 south, 3 west)."""
DELTA = ((-1, 0), (0, 1), (1, 0), (0, -1))
"""(row, col) offset of each direction index."""

EVACUATED, CASUALTY, STRANDED = "evacuated", "casualty", "stranded"


@dataclass(frozen=True, slots=True)
class Fate:
    """How one person's episode ended.

    Attributes:
        kind: ``evacuated``, ``casualty`` or ``stranded``.
        step: the step it happened (the last step for ``stranded``).
        exit_index: the exit used (scenario order), or -1.
    """

    kind: str
    step: int
    exit_index: int = -1


@dataclass(frozen=True, slots=True)
class EpisodeFrames:
    """Everything a viewer draws for one authenticated episode.

    Attributes:
        scenario: the scenario.
        index: the manifest index, or None for a lone record.
        seed: the episode seed.
        steps: number of steps played (frames are steps ``0..steps``).
        termination: ``all_resolved`` or ``max_steps``.
        moves: one string per step ``1..steps``, one move code per person.
        ignition: per map cell (row-major), the step it catches fire, or -1
            if it is not burning by the last step.
        burning: burning cells at the end of steps ``0..steps``.
        fates: one :class:`Fate` per person, scenario order.
        metrics: the episode metrics recomputed by the replay.
    """

    scenario: Scenario
    index: int | None
    seed: int
    steps: int
    termination: str
    moves: tuple[str, ...]
    ignition: tuple[int, ...]
    burning: tuple[int, ...]
    fates: tuple[Fate, ...]
    metrics: EpisodeMetrics

    def positions(self, step: int) -> list[tuple[int, int]]:
        """Every person's (row, col) at the end of ``step`` (0 is the start)."""
        if not 0 <= step <= self.steps:
            raise ValueError(f"step {step} is outside 0..{self.steps}")
        pos = [(p.row, p.col) for p in self.scenario.people]
        for line in self.moves[:step]:
            for i, code in enumerate(line):
                if code in MOVED:
                    dr, dc = DELTA[DIRECTION_OF[code]]
                    pos[i] = (pos[i][0] + dr, pos[i][1] + dc)
        return pos

    def state(self, person: int, step: int) -> str:
        """``inside``, or the person's fate once it has happened by the end of ``step``."""
        fate = self.fates[person]
        if fate.kind == STRANDED:
            return STRANDED if step >= self.steps else "inside"
        return fate.kind if fate.step <= step else "inside"

    def counts(self, step: int) -> dict[str, int]:
        """People inside, evacuated, casualties and stranded at the end of ``step``, and blocked moves."""
        out = {"inside": 0, EVACUATED: 0, CASUALTY: 0, STRANDED: 0}
        for i in range(len(self.fates)):
            out[self.state(i, step)] += 1
        line = self.moves[step - 1] if step >= 1 else ""
        out["blocked_wall"] = sum(line.count(c) for c in WALL_BLOCKED)
        out["blocked_people"] = sum(line.count(c) for c in PEOPLE_BLOCKED)
        out["burning"] = self.burning[step]
        return out


def episode_frames(scenario: Scenario, record: RunRecord, metrics: EpisodeMetrics, *,
                   index: int | None = None) -> EpisodeFrames:
    """Replay an authenticated record in the simulator and record its frames.

    Args:
        scenario: the scenario the record was authenticated on.
        record: the authenticated record.
        metrics: its metrics (from the authentication).
        index: the manifest index, if the record comes from a result.

    Raises:
        PresentationError: the replay disagrees with the record (it cannot,
            for an authenticated record; the check guards the encoding).
    """
    grid = compile_grid(scenario)
    n = scenario.population
    moves: list[str] = []
    state = {"pos": grid.starts.copy(), "inside": np.arange(n)}
    table = _CODE_TABLE

    def observe(sim: Simulation) -> None:
        t = sim.t
        action = np.frombuffer(record.actions[t - 1].encode("ascii"), dtype=np.uint8)
        blocked = np.frombuffer(sim.blocked_line(t).encode("ascii"), dtype=np.uint8)
        codes = table[action, blocked]
        if (codes == 0).any():
            raise PresentationError(f"step {t}: an action/blocked pair the viewer cannot encode")
        line = codes.tobytes().decode("ascii")
        moved = np.flatnonzero(np.isin(codes, _MOVED_BYTES))
        prev = state["pos"]
        expect = prev[moved] + grid.delta[1 + _direction_index(codes[moved])]
        if not np.array_equal(expect, sim.pos[moved]):
            raise PresentationError(f"step {t}: the move codes disagree with the simulator's positions")
        state["pos"] = sim.pos.copy()
        moves.append(line)

    reproduced, _ = replay(scenario, record, observer=observe)
    if reproduced.canonical_bytes() != record.canonical_bytes():
        raise PresentationError(f"{scenario.id} seed {record.seed}: the record does not reproduce under replay")
    steps = record.steps
    # The simulator's own (memoised) timeline: the one the replay just used.
    ignition = cached_fire(scenario, record.seed).ignition[grid.pad_of_cell].astype(np.int64)
    ignition[(ignition > steps) | (ignition == NEVER)] = -1
    burning0 = int(np.count_nonzero(ignition == 0))
    return EpisodeFrames(
        scenario=scenario, index=index, seed=record.seed, steps=steps, termination=record.termination,
        moves=tuple(moves), ignition=tuple(ignition.tolist()), burning=(burning0, *record.burning),
        fates=_fates(scenario, record), metrics=metrics,
    )


def _fates(scenario: Scenario, record: RunRecord) -> tuple[Fate, ...]:
    person = {p.id: i for i, p in enumerate(scenario.people)}
    exit_index = {e.id: i for i, e in enumerate(scenario.exits)}
    fates: list[Fate | None] = [None] * scenario.population
    for step, pid, eid in record.evacuations:
        fates[person[pid]] = Fate(EVACUATED, step, exit_index[eid])
    for step, pid in record.casualties:
        fates[person[pid]] = Fate(CASUALTY, step)
    for pid in record.stranded:
        fates[person[pid]] = Fate(STRANDED, record.steps)
    if any(f is None for f in fates):
        raise PresentationError(f"{scenario.id} seed {record.seed}: a person has no fate in the record")
    return tuple(f for f in fates if f is not None)


_MOVED_BYTES = np.frombuffer(MOVED.encode("ascii"), dtype=np.uint8)
_DIRECTION_LOOKUP = np.zeros(256, dtype=np.int64)
_DIRECTION_LOOKUP[_MOVED_BYTES] = np.arange(4)


def _direction_index(codes: np.ndarray) -> np.ndarray:
    return _DIRECTION_LOOKUP[codes]


def _code_table() -> np.ndarray:
    """(action byte, blocked byte) -> move code byte; 0 where the pair cannot occur."""
    table = np.zeros((256, 256), dtype=np.uint8)
    table[ord("-"), ord("-")] = ord("-")
    table[ord("."), ord(".")] = ord(".")
    for i, d in enumerate(MOVED):
        table[ord(d), ord(".")] = ord(MOVED[i])
        table[ord(d), ord("w")] = ord(WALL_BLOCKED[i])
        table[ord(d), ord("c")] = ord(PEOPLE_BLOCKED[i])
    return table


_CODE_TABLE = _code_table()


def casualty_cells(scenario: Scenario, record: RunRecord) -> list[tuple[int, int]]:
    """The (row, col) where each casualty of an authenticated record died, in event order.

    Replays the record in the simulator (without building frames) and reads
    each new casualty's cell at the step it happened.
    """
    if not record.casualties:
        return []
    grid = compile_grid(scenario)
    seen = np.zeros(scenario.population, dtype=bool)
    cells: list[tuple[int, int]] = []

    def observe(sim: Simulation) -> None:
        new = np.flatnonzero((sim.state == 2) & ~seen)
        if new.size:
            seen[new] = True
            rows, cols = np.divmod(sim.pos[new], grid.pw)
            cells.extend(zip((rows - 1).tolist(), (cols - 1).tolist()))

    replay(scenario, record, observer=observe)
    if len(cells) != len(record.casualties):
        raise PresentationError(f"{scenario.id} seed {record.seed}: the replay's casualties differ from the record's")
    return cells
