"""``EmberBench-v1`` as a vector environment over the lockstep batch stepper.

:class:`EmberBenchVectorEnv` runs ``num_envs`` episodes with one
:meth:`SimulationBatch.step <emberbench.sim.batch.SimulationBatch.step>` per
step, instead of one simulator step per sub-environment. It behaves exactly
like Gymnasium's ``SyncVectorEnv`` over :class:`~emberbench.gym.env.EmberBenchEnv`
(the tests compare the two step by step): the same observations, rewards,
terminations, truncations and infos, sub-environment ``i`` seeded with
``seed + i`` by ``reset(seed=seed)``, and next-step autoreset (the step after
a sub-environment's episode ends begins its next episode, with reward 0 and
both flags false, ignoring its action).

Sub-environments may play different scenarios (``scenario`` a sequence of
``num_envs`` ids or scenarios): the arrays are padded to a layout holding all
of them (:mod:`emberbench.gym.layout`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.error import ResetNeeded
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ..errors import InvalidActionError
from ..sim.batch import SimulationBatch
from ..sim.scenario import Scenario
from .env import DEFAULT_SCENARIO, Reward, draw_episode_seed, render_ansi, resolve_scenarios, step_info
from .layout import KEYS, Layout, codes_for_inside, encode_simulation


class EmberBenchVectorEnv(VectorEnv):
    """``num_envs`` EMBERBench episodes stepped in lockstep (see the module docstring).

    Args:
        num_envs: number of sub-environments.
        scenario: one scenario (id or :class:`Scenario`) for all, or one per sub-environment.
        suite, pad_to, evacuation_reward, casualty_penalty, step_cost, render_mode:
            as for :class:`~emberbench.gym.env.EmberBenchEnv`.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4, "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int = 1, scenario: str | Scenario | Sequence[str | Scenario] = DEFAULT_SCENARIO,
                 *, suite: Any = None, pad_to: tuple[int, int, int] | None = None, evacuation_reward: float = 1.0,
                 casualty_penalty: float = 1.0, step_cost: float = 0.01, render_mode: str | None = None) -> None:
        if not isinstance(num_envs, int) or isinstance(num_envs, bool) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.num_envs = num_envs
        self.scenarios = resolve_scenarios(scenario, suite, count=num_envs)
        self.layout = Layout.fitting(self.scenarios, pad_to)
        self.single_observation_space = self.layout.observation_space()
        self.single_action_space = self.layout.action_space()
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.reward = Reward(float(evacuation_reward), float(casualty_penalty), float(step_cost))
        self.render_mode = render_mode
        self._grids = [self.layout.static_grid(s) for s in self.scenarios]
        self._rngs: list[np.random.Generator | None] = [None] * num_envs
        self.episode_seeds: list[int | None] = [None] * num_envs
        self._batch: SimulationBatch | None = None
        self._autoreset = np.zeros(num_envs, dtype=bool)

    def reset(self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Begin an episode in every sub-environment.

        Args:
            seed: None (each sub-environment draws its next episode seed), an
                int ``s`` (sub-environment ``i`` plays seed ``s + i``), or one
                seed or None per sub-environment.
            options: unused.
        """
        super().reset(seed=seed if isinstance(seed, int) else None)
        seeds = ([None] * self.num_envs if seed is None else
                 [seed + i for i in range(self.num_envs)] if isinstance(seed, int) else list(seed))
        if len(seeds) != self.num_envs:
            raise ValueError(f"expected {self.num_envs} seeds, got {len(seeds)}")
        self._batch = SimulationBatch(self.num_envs)
        infos: dict[str, Any] = {}
        for i, s in enumerate(seeds):
            if s is not None or self._rngs[i] is None:
                self._rngs[i], _ = seeding.np_random(s)
            infos = self._add_info(infos, self._begin(i, s), i)
        self._autoreset[:] = False
        return self._observations(), infos

    def _begin(self, i: int, seed: int | None) -> dict[str, int]:
        assert self._batch is not None
        rng = self._rngs[i]
        assert rng is not None
        self.episode_seeds[i] = seed if seed is not None else draw_episode_seed(rng)
        self._batch.start(i, self.scenarios[i], self.episode_seeds[i])
        return step_info(self._batch.simulation(i))

    def step(self, actions: Any) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One step of every sub-environment (or the start of its next episode, after its last step).

        Raises:
            ResetNeeded: reset() was never called.
            InvalidActionError: ``actions`` is not one action per sub-environment.
        """
        batch = self._batch
        if batch is None:
            raise ResetNeeded("call reset() before step()")
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs, self.layout.people):
            raise InvalidActionError(f"expected actions of shape {(self.num_envs, self.layout.people)}, "
                                     f"got {actions.shape}")
        live = batch.live
        batch.step([codes_for_inside(actions[i], self.layout, batch.simulation(i)) for i in live])
        stepped = np.zeros(self.num_envs, dtype=bool)
        stepped[list(live)] = True
        rewards = np.where(stepped, self.reward(batch.last_evacuations, batch.last_casualties), 0.0)
        ended = stepped & np.array([batch.done(i) for i in range(self.num_envs)])
        inside = np.array([batch.simulation(i).inside.size for i in range(self.num_envs)])
        terminated = ended & (inside == 0)
        truncated = ended & (inside > 0)
        infos: dict[str, Any] = {}
        for i in range(self.num_envs):
            info = self._begin(i, None) if self._autoreset[i] else step_info(batch.simulation(i))
            infos = self._add_info(infos, info, i)
        self._autoreset = terminated | truncated
        return self._observations(), rewards.astype(np.float64), terminated, truncated, infos

    def _observations(self) -> dict[str, np.ndarray]:
        assert self._batch is not None
        each = [encode_simulation(self._batch.simulation(i), self.layout, self._grids[i])
                for i in range(self.num_envs)]
        return {key: np.stack([o[key] for o in each]) for key in KEYS}

    def render(self) -> tuple[str, ...] | None:
        """Each sub-environment's state as text (``render_mode="ansi"``), else None."""
        if self.render_mode != "ansi" or self._batch is None:
            return None
        return tuple(render_ansi(self._batch.simulation(i)) for i in range(self.num_envs))
