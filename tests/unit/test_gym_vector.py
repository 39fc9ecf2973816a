"""The vector environment over the batch stepper: exactly Gymnasium's SyncVectorEnv over EmberBench-v1."""

from __future__ import annotations

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

from gymnasium.error import ResetNeeded  # noqa: E402
from gymnasium.vector import AutoresetMode, SyncVectorEnv  # noqa: E402

import emberbench.gym  # noqa: E402,F401  (registers EmberBench-v1)
from emberbench.errors import InvalidActionError  # noqa: E402
from emberbench.gym import EmberBenchEnv, EmberBenchVectorEnv  # noqa: E402
from tests.unit.test_gym_env import _same  # noqa: E402

MIXED = ["v1-pub-01-single-exit-sparse", "v1-pub-08-sealed-room", "v1-pub-02-fire-at-near-exit",
         "v1-pub-06-fast-deterministic-fire"]


def _compare(mine, reference, steps: int, seed: int) -> int:  # noqa: ANN001
    """Step both with the same random actions; every returned value must agree exactly. Returns episode ends."""
    _same_all(mine.reset(seed=seed), reference.reset(seed=seed))
    rng = np.random.default_rng(seed)
    ends = 0
    for _ in range(steps):
        actions = rng.integers(0, 5, size=mine.action_space.shape)
        got, want = mine.step(actions), reference.step(actions)
        _same_all(got, want)
        ends += int(got[2].sum() + got[3].sum())
    _same_all(mine.reset(), reference.reset())
    return ends


def _same_all(a: tuple, b: tuple) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        _same(x, y)


def test_matches_sync_vector_env_of_single_envs() -> None:
    """make_vec's lockstep env and the sync vectorisation of EmberBench-v1 agree step by step, autoresets included."""
    mine = gymnasium.make_vec("EmberBench-v1", num_envs=5, scenario="v1-pub-09-threatened-nearest-exit")
    reference = gymnasium.make_vec("EmberBench-v1", num_envs=5, vectorization_mode="sync",
                                   scenario="v1-pub-09-threatened-nearest-exit")
    assert isinstance(mine.unwrapped, EmberBenchVectorEnv)
    assert mine.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    assert _compare(mine, reference, 200, seed=3) >= 5


def test_mixed_scenarios_are_padded_to_one_layout() -> None:
    """Sub-environments of different scenarios and sizes behave as single envs padded to the common layout."""
    mine = EmberBenchVectorEnv(len(MIXED), MIXED, step_cost=0.5)
    shape = (mine.layout.height, mine.layout.width, mine.layout.people)
    assert shape == (14, 30, 28)
    reference = SyncVectorEnv([lambda s=s: EmberBenchEnv(s, pad_to=shape, step_cost=0.5) for s in MIXED])
    assert _compare(mine, reference, 150, seed=40) >= 4


def test_seeds_per_sub_environment() -> None:
    """reset(seed=s) plays seeds s, s+1, ...; a list gives each its own; None continues each generator."""
    env = EmberBenchVectorEnv(3)
    env.reset(seed=10)
    assert env.episode_seeds == [10, 11, 12]
    env.reset(seed=[7, None, 9])
    assert env.episode_seeds[0] == 7 and env.episode_seeds[2] == 9
    with pytest.raises(ValueError, match="expected 3 seeds"):
        env.reset(seed=[1, 2])


def test_misuse_is_refused() -> None:
    """Stepping before reset, a wrong action shape and bad arguments are errors."""
    env = EmberBenchVectorEnv(2)
    with pytest.raises(ResetNeeded):
        env.step(np.zeros((2, 6), dtype=np.int64))
    env.reset(seed=0)
    with pytest.raises(InvalidActionError, match="expected actions of shape"):
        env.step(np.zeros((3, 6), dtype=np.int64))
    with pytest.raises(ValueError, match="num_envs"):
        EmberBenchVectorEnv(0)
    with pytest.raises(ValueError, match="expected 1 or 2 scenarios"):
        EmberBenchVectorEnv(2, MIXED)


def test_ansi_render_of_every_sub_environment() -> None:
    """render() returns one text frame per sub-environment, as the single env draws it."""
    env = EmberBenchVectorEnv(2, render_mode="ansi")
    env.reset(seed=0)
    single = EmberBenchEnv(render_mode="ansi")
    single.reset(seed=1)
    frames = env.render()
    assert len(frames) == 2 and frames[1] == single.render()
