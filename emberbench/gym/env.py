"""``EmberBench-v1``: one agent directs every person of one scenario (a Gymnasium environment).

An episode of the environment is an EMBERBench episode: the same simulator,
the same step order, the same termination. ``reset(seed=s)`` plays the
episode with seed ``s``, whose fire is exactly the fire of the EMBERBench
episode with that seed (the fire comes from the seed's own random stream,
nothing else); ``reset()`` without a seed draws the next episode seed from
the environment's ``np_random``, so a seeded environment replays the same
sequence of episodes.

Reward of a step (defaults; the three weights are constructor arguments)::

    reward = evacuation_reward * (people who evacuated in the step)
           - casualty_penalty  * (people who became casualties in the step)
           - step_cost

The reward is a training signal only: the benchmark's metrics come from
the episode's outcome (:meth:`EmberBenchEnv.metrics`) exactly as ``run``
computes them, whatever the weights.

``terminated`` is true when nobody is left inside (termination
``all_resolved``); ``truncated`` when the scenario's ``max_steps`` is reached
with people still inside (termination ``max_steps``). A step after either
raises :class:`gymnasium.error.ResetNeeded`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np
from gymnasium.error import ResetNeeded

from ..records.metrics import EpisodeMetrics, metrics_from_outcome
from ..records.record import RunRecord, record_from_outcome
from ..sim.scenario import Scenario
from ..sim.simulator import Outcome, Simulation
from ..sim.suite import load_suite
from .layout import Layout, codes_for_inside, encode_simulation

DEFAULT_SCENARIO = "v1-pub-01-single-exit-sparse"


@dataclass(frozen=True, slots=True)
class Reward:
    """The weights of the training reward (see the module docstring)."""

    evacuation_reward: float = 1.0
    casualty_penalty: float = 1.0
    step_cost: float = 0.01

    def __call__(self, evacuated: Any, casualties: Any) -> Any:
        """The reward of a step with these many evacuations and casualties (scalars or arrays)."""
        return self.evacuation_reward * evacuated - self.casualty_penalty * casualties - self.step_cost


def resolve_scenarios(scenario: str | Scenario | Sequence[str | Scenario], suite: Any = None,
                      count: int | None = None) -> list[Scenario]:
    """Scenarios from ids (looked up in ``suite``: a path, a shipped suite id, or None for the public suite).

    With ``count``, one scenario is repeated ``count`` times, or a sequence must have ``count`` items.

    Raises:
        SuiteError: an id is not in the suite.
        ValueError: a sequence has the wrong length.
    """
    items = [scenario] if isinstance(scenario, (str, Scenario)) else list(scenario)
    if count is not None:
        if len(items) == 1:
            items = items * count
        elif len(items) != count:
            raise ValueError(f"expected 1 or {count} scenarios, got {len(items)}")
    loaded = None
    out = []
    for item in items:
        if isinstance(item, Scenario):
            out.append(item)
        else:
            loaded = loaded or load_suite(suite)
            out.append(loaded.scenario(item))
    return out


def draw_episode_seed(rng: np.random.Generator) -> int:
    """The next 64-bit episode seed from an environment's ``np_random``."""
    return int(rng.integers(0, 2**64, dtype=np.uint64))


def render_ansi(sim: Simulation) -> str:
    """The map as text: ``#`` wall, ``.`` floor, ``E`` exit, ``*`` fire, ``@`` a person; a status line first."""
    obs = sim.observation()
    rows = [list(row) for row in obs.grid]
    for p in obs.people:
        rows[p.row][p.col] = "@"
    evacuated = int(np.count_nonzero(sim.state == 1))
    casualties = int(np.count_nonzero(sim.state == 2))
    head = (f"step {obs.step}/{obs.max_steps}  inside {len(obs.people)}  evacuated {evacuated}  "
            f"casualties {casualties}")
    return "\n".join([head, *("".join(r) for r in rows)]) + "\n"


def step_info(sim: Simulation) -> dict[str, int]:
    """The info dict of a step: the people evacuated, dead and inside so far."""
    return {"evacuated": int(np.count_nonzero(sim.state == 1)), "casualties": int(np.count_nonzero(sim.state == 2)),
            "inside": int(sim.inside.size)}


class EmberBenchEnv(gymnasium.Env):
    """One EMBERBench scenario as a Gymnasium environment (see the module docstring).

    Args:
        scenario: a scenario id (looked up in ``suite``) or a :class:`Scenario`.
        suite: where ids are looked up: a suite folder, a shipped suite id,
            or None for the public suite.
        pad_to: (height, width, people) of the observation and action arrays,
            at least the scenario's own size (default: exactly its size);
            see :mod:`emberbench.gym.layout`.
        evacuation_reward, casualty_penalty, step_cost: the reward's weights.
        render_mode: None or ``"ansi"``.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(self, scenario: str | Scenario = DEFAULT_SCENARIO, *, suite: Any = None,
                 pad_to: tuple[int, int, int] | None = None, evacuation_reward: float = 1.0,
                 casualty_penalty: float = 1.0, step_cost: float = 0.01, render_mode: str | None = None) -> None:
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        (self.scenario,) = resolve_scenarios(scenario, suite)
        self.layout = Layout.fitting([self.scenario], pad_to)
        self.observation_space = self.layout.observation_space()
        self.action_space = self.layout.action_space()
        self.reward = Reward(float(evacuation_reward), float(casualty_penalty), float(step_cost))
        self.render_mode = render_mode
        self.episode_seed: int | None = None
        self._grid = self.layout.static_grid(self.scenario)
        self._sim: Simulation | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Begin the episode with seed ``seed`` (or the next seed drawn from ``np_random``). ``options`` are unused."""
        super().reset(seed=seed)
        self.episode_seed = seed if seed is not None else draw_episode_seed(self.np_random)
        self._sim = Simulation(self.scenario, self.episode_seed)
        return encode_simulation(self._sim, self.layout, self._grid), step_info(self._sim)

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """Move every person inside by their code in ``action``; one step of the simulator.

        Raises:
            ResetNeeded: no episode is running.
            InvalidActionError: the action is not one move code in [0, 4] per person slot.
        """
        sim = self._sim
        if sim is None or sim.done:
            raise ResetNeeded("the episode has ended (or never began): call reset()")
        codes = codes_for_inside(action, self.layout, sim)
        before = np.bincount(sim.state, minlength=3)
        sim.step(codes)
        after = np.bincount(sim.state, minlength=3)
        reward = float(self.reward(int(after[1] - before[1]), int(after[2] - before[2])))
        terminated = sim.inside.size == 0
        truncated = sim.done and not terminated
        return encode_simulation(sim, self.layout, self._grid), reward, terminated, truncated, step_info(sim)

    def render(self) -> str | None:
        """The current state as text (``render_mode="ansi"``), else None."""
        if self.render_mode != "ansi" or self._sim is None:
            return None
        return render_ansi(self._sim)

    # -- the benchmark's view of the finished episode --------------------------
    @property
    def simulation(self) -> Simulation:
        """The running episode's simulator (read it, do not step it)."""
        if self._sim is None:
            raise ResetNeeded("no episode yet: call reset()")
        return self._sim

    def outcome(self) -> Outcome:
        """The finished episode's outcome (RuntimeError before its end)."""
        return self.simulation.outcome()

    def record(self) -> RunRecord:
        """The finished episode's run record, byte for byte what ``emberbench episode`` writes for these moves."""
        assert self.episode_seed is not None
        return record_from_outcome(self.scenario, self.episode_seed, self.outcome())

    def metrics(self) -> EpisodeMetrics:
        """The finished episode's benchmark metrics (independent of the reward)."""
        return metrics_from_outcome(self.scenario, self.outcome())
