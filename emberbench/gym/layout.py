"""The arrays an agent of ``EmberBench-v1`` sees and sends: spaces and encoders (numpy only).

One agent directs every person. Its observation is a dict of fixed-shape
arrays for a *layout* of ``height x width`` cells and ``people`` person slots,
at least the scenario's own size (smaller maps are padded with walls, smaller
populations with slots that are never inside):

============  =========================  ==============================================
key           shape, dtype               content
============  =========================  ==============================================
``grid``      (height, width) int8       0 floor, 1 wall, 2 exit (burning or not)
``fire``      (height, width) int8       1 where a cell burns now
``people``    (people, 2) int32          (row, col) of each person inside, in scenario
                                         order; (-1, -1) once they left, and for padding
``inside``    (people,) int8             1 for each person inside (the mask of ``people``)
``step``      (2,) int32                 steps played, and the scenario's ``max_steps``
============  =========================  ==============================================

The action is one move code per person slot (``MultiDiscrete([5] * people)``):
0 stay, 1 N, 2 E, 3 S, 4 W, the simulator's own codes; codes of slots that are
not inside are ignored.

Everything here is a function of what the benchmark's
:class:`~emberbench.sim.observation.Observation` shows (the map with the fire
as it is now, the exits, the people inside, the step counter): no seed, no
future fire. :class:`ObservationEncoder` builds the same arrays from those
observations, so a policy trained on the environment runs unchanged under
``emberbench run`` (:class:`ArrayPolicy`); the tests check that both
encodings agree at every step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidActionError, PolicyError, ScenarioError
from ..sim.actions import MOVES
from ..sim.observation import Observation
from ..sim.scenario import MAX_STEPS_LIMIT, Scenario
from ..sim.simulator import Simulation

FLOOR, WALL, EXIT = 0, 1, 2
KEYS = ("grid", "fire", "people", "inside", "step")


@dataclass(frozen=True, slots=True)
class Layout:
    """The fixed shape of observations and actions: ``height x width`` cells, ``people`` person slots."""

    height: int
    width: int
    people: int

    @classmethod
    def fitting(cls, scenarios: list[Scenario], pad_to: tuple[int, int, int] | None = None) -> Layout:
        """The smallest layout holding every scenario, or ``pad_to`` (height, width, people) if given.

        Raises:
            ScenarioError: ``pad_to`` is smaller than one of the scenarios.
        """
        need = cls(max(s.height for s in scenarios), max(s.width for s in scenarios),
                   max(s.population for s in scenarios))
        if pad_to is None:
            return need
        height, width, people = (int(v) for v in pad_to)
        if height < need.height or width < need.width or people < need.people:
            raise ScenarioError(f"pad_to {height}x{width} with {people} people is smaller than the scenarios "
                                f"({need.height}x{need.width} with {need.people} people)")
        return cls(height, width, people)

    def observation_space(self) -> Any:
        """The ``gymnasium.spaces.Dict`` of one observation."""
        from gymnasium import spaces

        h, w, n = self.height, self.width, self.people
        high = np.tile(np.array([h - 1, w - 1], dtype=np.int32), (n, 1))
        return spaces.Dict({
            "grid": spaces.Box(FLOOR, EXIT, shape=(h, w), dtype=np.int8),
            "fire": spaces.MultiBinary((h, w)),
            "people": spaces.Box(np.full((n, 2), -1, dtype=np.int32), high, dtype=np.int32),
            "inside": spaces.MultiBinary(n),
            "step": spaces.Box(0, MAX_STEPS_LIMIT, shape=(2,), dtype=np.int32),
        })

    def action_space(self) -> Any:
        """The ``gymnasium.spaces.MultiDiscrete`` of one action: a move code per person slot."""
        from gymnasium import spaces

        return spaces.MultiDiscrete(np.full(self.people, len(MOVES), dtype=np.int64))

    def static_grid(self, scenario: Scenario) -> np.ndarray:
        """The ``grid`` array of ``scenario`` in this layout (padding is wall)."""
        grid = np.full((self.height, self.width), WALL, dtype=np.int8)
        grid[: scenario.height, : scenario.width] = np.array(
            [[WALL if ch == "#" else FLOOR for ch in row] for row in scenario.map], dtype=np.int8)
        for e in scenario.exits:
            grid[e.row, e.col] = EXIT
        return grid


def encode_simulation(sim: Simulation, layout: Layout, grid: np.ndarray) -> dict[str, np.ndarray]:
    """The observation of ``sim`` at its current step, as fresh arrays.

    Args:
        sim: the episode.
        layout: the layout of the arrays.
        grid: ``layout.static_grid(sim.scenario)`` (computed once per scenario).
    """
    g = sim.grid
    fire = np.zeros((layout.height, layout.width), dtype=np.int8)
    fire[: g.height, : g.width] = (sim.fire.ignition[g.pad_of_cell] <= sim.t).reshape(g.height, g.width)
    people = np.full((layout.people, 2), -1, dtype=np.int32)
    rows, cols = np.divmod(sim.pos[sim.inside], g.pw)
    people[sim.inside, 0] = rows - 1
    people[sim.inside, 1] = cols - 1
    inside = np.zeros(layout.people, dtype=np.int8)
    inside[sim.inside] = 1
    step = np.array([sim.t, sim.scenario.max_steps], dtype=np.int32)
    return {"grid": grid.copy(), "fire": fire, "people": people, "inside": inside, "step": step}


def codes_for_inside(action: Any, layout: Layout, sim: Simulation) -> np.ndarray:
    """The move codes of the people inside ``sim`` taken from an action of ``layout``.

    Raises:
        InvalidActionError: the action is not ``layout.people`` integers in [0, 4].
    """
    arr = np.asarray(action)
    if arr.shape != (layout.people,) or arr.dtype.kind not in "iu":
        raise InvalidActionError(f"action for step {sim.t + 1}: expected {layout.people} integer move codes, "
                                 f"got shape {arr.shape} of {arr.dtype}")
    codes = arr[sim.inside].astype(np.int64)
    if codes.size and (codes.min() < 0 or codes.max() >= len(MOVES)):
        raise InvalidActionError(f"action for step {sim.t + 1}: move codes must be in [0, {len(MOVES) - 1}]")
    return codes


class ObservationEncoder:
    """Builds the environment's observation arrays from the benchmark's observations of one episode.

    The person slots follow scenario order, which only the first observation
    of an episode (step 0, everybody inside) shows completely: the encoder
    remembers its ids, so one encoder serves exactly one episode, from its
    first step.

    Args:
        layout: the layout, or None for the episode's own size (taken from
            its first observation).
    """

    def __init__(self, layout: Layout | None = None) -> None:
        self.layout = layout
        self._slot: dict[str, int] | None = None
        self._grid: np.ndarray | None = None

    def __call__(self, obs: Observation) -> dict[str, np.ndarray]:
        """The observation arrays for ``obs``."""
        if self._slot is None:
            if obs.step != 0:
                raise PolicyError("an ObservationEncoder must see its episode from step 0 (make one per episode)")
            self._slot = {p.id: i for i, p in enumerate(obs.people)}
            if self.layout is None:
                self.layout = Layout(obs.height, obs.width, len(obs.people))
            self._grid = np.full((self.layout.height, self.layout.width), WALL, dtype=np.int8)
            self._grid[: obs.height, : obs.width] = np.array(
                [[WALL if ch == "#" else FLOOR for ch in row] for row in obs.grid], dtype=np.int8)
            for e in obs.exits:
                self._grid[e.row, e.col] = EXIT
        layout = self.layout
        assert layout is not None and self._grid is not None
        fire = np.zeros((layout.height, layout.width), dtype=np.int8)
        fire[: obs.height, : obs.width] = np.array([[ch == "*" for ch in row] for row in obs.grid], dtype=np.int8)
        people = np.full((layout.people, 2), -1, dtype=np.int32)
        inside = np.zeros(layout.people, dtype=np.int8)
        for p in obs.people:
            i = self._slot[p.id]
            people[i] = (p.row, p.col)
            inside[i] = 1
        step = np.array([obs.step, obs.max_steps], dtype=np.int32)
        return {"grid": self._grid.copy(), "fire": fire, "people": people, "inside": inside, "step": step}

    def action(self, obs: Observation, codes: Any) -> dict[str, str]:
        """The benchmark action for ``obs`` from move codes of every person slot.

        Raises:
            InvalidActionError: ``codes`` are not one integer in [0, 4] per slot.
        """
        assert self._slot is not None and self.layout is not None
        arr = np.asarray(codes)
        if arr.shape != (self.layout.people,) or arr.dtype.kind not in "iu" or (
                arr.size and (arr.min() < 0 or arr.max() >= len(MOVES))):
            raise InvalidActionError(f"action for step {obs.step + 1}: expected {self.layout.people} move codes "
                                     f"in [0, {len(MOVES) - 1}], got {arr.shape} of {arr.dtype}")
        moves = arr.tolist()
        return {p.id: MOVES[moves[self._slot[p.id]]] for p in obs.people}


class ArrayPolicy:
    """An EMBERBench policy (a callable taking an ``Observation``) around a function of observation arrays.

    ``act`` receives the observation dict of :mod:`emberbench.gym.layout` and
    returns one move code per person slot, exactly as for the environment.
    Make one per episode (the runner's factory does): it remembers the
    episode's person slots.

    Args:
        act: observation arrays -> move codes.
        layout: the layout ``act`` was trained with, or None for each
            episode's own size.
    """

    def __init__(self, act: Callable[[dict[str, np.ndarray]], Any], layout: Layout | None = None) -> None:
        self._act = act
        self._encoder = ObservationEncoder(layout)

    def __call__(self, obs: Observation) -> dict[str, str]:
        return self._encoder.action(obs, self._act(self._encoder(obs)))
