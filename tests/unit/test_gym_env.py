"""EmberBench-v1: Gymnasium's checker, determinism, seeds, the benchmark's metrics, actions, padding."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

from gymnasium.error import ResetNeeded  # noqa: E402
from gymnasium.utils.env_checker import check_env  # noqa: E402

import emberbench.gym  # noqa: E402,F401  (registers EmberBench-v1)
from emberbench.errors import InvalidActionError, PolicyError, ScenarioError, SuiteError  # noqa: E402
from emberbench.gym import ArrayPolicy, EmberBenchEnv, Layout, ObservationEncoder  # noqa: E402
from emberbench.policies import BUILTIN_POLICIES  # noqa: E402
from emberbench.records.episode import play_episode  # noqa: E402
from emberbench.sim.fire import fire_timeline  # noqa: E402
from tests.helpers import make_scenario  # noqa: E402


def _same(a, b) -> None:  # noqa: ANN001
    """Exact equality of observations, infos and scalars (dtype and shape included)."""
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for key in a:
            _same(a[key], b[key])
    else:
        assert type(a) is type(b)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
        else:
            assert a == b


def _greedy_action(env: EmberBenchEnv, policy) -> np.ndarray:  # noqa: ANN001
    """The greedy baseline's moves for the env's current step, as a MultiDiscrete action."""
    obs = env.simulation.observation()
    moves = policy(obs)
    index = {p.id: i for i, p in enumerate(env.scenario.people)}
    action = np.zeros(env.layout.people, dtype=np.int64)
    for pid, move in moves.items():
        action[index[pid]] = ("stay", "N", "E", "S", "W").index(move)
    return action


@pytest.mark.parametrize("kwargs", [{}, {"scenario": "v1-pub-05-four-exits-crowd"},
                                    {"scenario": "v1-pub-10-route-invalidation", "pad_to": (20, 32, 16)}])
def test_gymnasium_checker_passes(kwargs) -> None:  # noqa: ANN001
    """gymnasium.utils.env_checker.check_env finds nothing wrong, and warns about nothing."""
    env = gymnasium.make("EmberBench-v1", **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)


def test_same_seed_same_trajectory() -> None:
    """Two runs with one seed and one action sequence agree exactly at every step, across episodes."""
    def run() -> list:
        env = gymnasium.make("EmberBench-v1", scenario="v1-pub-09-threatened-nearest-exit")
        env.action_space.seed(11)
        out = [env.reset(seed=2024)]
        for _ in range(250):
            step = env.step(env.action_space.sample())
            out.append(step)
            if step[2] or step[3]:
                out.append(env.reset())
        return out

    first, second = run(), run()
    assert len(first) == len(second)
    for a, b in zip(first, second):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)


def test_unseeded_resets_follow_the_seeded_generator() -> None:
    """reset() draws the next episode seed from np_random: the sequence repeats after the same seed."""
    def seeds() -> list[int | None]:
        env.reset(seed=5)
        out = [env.episode_seed]
        for _ in range(3):
            env.reset()
            out.append(env.episode_seed)
        return out

    env = EmberBenchEnv()
    first = seeds()
    assert first == seeds() and first[0] == 5 and len(set(first)) == 4


@pytest.mark.parametrize("seed", [0, 3, 2**64 - 1])
def test_reset_seed_is_the_episode_seed(seed: int) -> None:
    """reset(seed=s) plays the EMBERBench episode with seed s: the same fire, cell for cell."""
    env = EmberBenchEnv("v1-pub-10-route-invalidation")
    obs, _ = env.reset(seed=seed)
    scenario = env.scenario
    assert np.array_equal(env.simulation.fire.ignition, fire_timeline(scenario, seed).ignition)
    assert env.simulation.observation() == play_episode_first_observation(scenario, seed)
    assert obs["fire"].sum() == len(scenario.fire)


def play_episode_first_observation(scenario, seed: int):  # noqa: ANN001, ANN201
    seen = []

    def policy(obs):  # noqa: ANN001, ANN202
        seen.append(obs)
        return {p.id: "stay" for p in obs.people}

    play_episode(scenario, seed, policy)
    return seen[0]


@pytest.mark.parametrize(("scenario", "seed"), [("v1-pub-05-four-exits-crowd", 0), ("v1-pub-10-route-invalidation", 3),
                                                ("v1-pub-08-sealed-room", 1), ("v1-pub-11-large-campus", 2)])
def test_greedy_through_the_env_gives_the_benchmark_metrics(scenario: str, seed: int) -> None:
    """Driving the env with greedy's moves yields exactly the metrics and record of the EMBERBench episode."""
    env = EmberBenchEnv(scenario)
    env.reset(seed=seed)
    policy = BUILTIN_POLICIES["greedy"]()
    terminated = truncated = False
    while not (terminated or truncated):
        _, _, terminated, truncated, _ = env.step(_greedy_action(env, policy))
    record, metrics = play_episode(env.scenario, seed, BUILTIN_POLICIES["greedy"]())
    assert env.metrics() == metrics
    assert env.record().canonical_bytes() == record.canonical_bytes()
    assert terminated == (metrics.to_dict()["termination"] == "all_resolved")
    assert truncated == (metrics.to_dict()["termination"] == "max_steps")


def test_reward_counts_evacuations_casualties_and_steps() -> None:
    """reward = evacuation_reward * evacuated - casualty_penalty * casualties - step_cost, per step."""
    sc = make_scenario(["P*", "PE"], max_steps=5)  # p0 walks into the fire, p1 walks out
    env = EmberBenchEnv(sc, evacuation_reward=2.0, casualty_penalty=5.0, step_cost=0.25)
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(np.array([2, 2]))
    assert reward == 2.0 - 5.0 - 0.25
    assert (terminated, truncated) == (True, False)
    assert info == {"evacuated": 1, "casualties": 1, "inside": 0}
    assert obs["inside"].tolist() == [0, 0] and obs["people"].tolist() == [[-1, -1], [-1, -1]]


def test_termination_truncation_and_reset_needed() -> None:
    """max_steps with people inside truncates; nobody inside terminates; a step after the end needs reset."""
    sc = make_scenario(["P.E"], max_steps=2)
    env = EmberBenchEnv(sc)
    with pytest.raises(ResetNeeded):
        env.step(np.array([0]))
    env.reset(seed=0)
    assert env.step(np.array([0]))[2:4] == (False, False)
    assert env.step(np.array([0]))[2:4] == (False, True)
    assert env.outcome().termination == "max_steps"
    with pytest.raises(ResetNeeded):
        env.step(np.array([0]))
    env.reset(seed=0)
    env.step(np.array([2]))
    assert env.step(np.array([2]))[2:4] == (True, False)  # out exactly at max_steps: all_resolved
    assert env.outcome().termination == "all_resolved"


@pytest.mark.parametrize(("action", "message"), [
    (np.array([0, 0, 0]), "expected 2 integer move codes"),
    (np.array([[0, 0]]), "expected 2 integer move codes"),
    (np.array([0.0, 1.0]), "expected 2 integer move codes"),
    (np.array([0, 5]), r"move codes must be in \[0, 4\]"),
    (np.array([-1, 0]), r"move codes must be in \[0, 4\]"),
])
def test_invalid_actions_are_refused(action, message: str) -> None:  # noqa: ANN001
    """An action outside the MultiDiscrete space is an InvalidActionError, and nothing moves."""
    env = EmberBenchEnv(make_scenario(["P.P.E"]))
    env.reset(seed=0)
    with pytest.raises(InvalidActionError, match=message):
        env.step(action)
    assert env.simulation.t == 0


def test_codes_of_people_not_inside_are_ignored() -> None:
    """Slots of departed people and padding take any code without effect."""
    env = EmberBenchEnv(make_scenario(["PE.", "..P"], max_steps=9), pad_to=(4, 4, 4))
    env.reset(seed=0)
    env.step(np.array([2, 0, 4, 4]))  # p0 evacuates; the padding slots say W
    obs, *_ = env.step(np.array([4, 1, 3, 2]))
    assert obs["people"].tolist() == [[-1, -1], [0, 2], [-1, -1], [-1, -1]]


def test_padding_and_its_limits() -> None:
    """pad_to pads the map with walls and the people with empty slots; smaller than the scenario is refused."""
    env = EmberBenchEnv(make_scenario(["PE"]), pad_to=(2, 3, 2))
    obs, _ = env.reset(seed=0)
    assert obs["grid"].tolist() == [[0, 2, 1], [1, 1, 1]]
    assert obs["inside"].tolist() == [1, 0] and obs["step"].tolist() == [0, 20]
    assert env.action_space.nvec.tolist() == [5, 5]
    with pytest.raises(ScenarioError, match="smaller than the scenarios"):
        EmberBenchEnv(make_scenario(["PE"]), pad_to=(1, 1, 1))
    with pytest.raises(SuiteError):
        EmberBenchEnv("no-such-scenario")
    with pytest.raises(ValueError, match="render_mode"):
        EmberBenchEnv(render_mode="human")


@pytest.mark.parametrize("pad_to", [None, (30, 40, 50)])
def test_encoder_of_benchmark_observations_agrees_with_the_env(pad_to) -> None:  # noqa: ANN001
    """ObservationEncoder turns the benchmark's observations into exactly the env's arrays, every step."""
    env = EmberBenchEnv("v1-pub-06-fast-deterministic-fire", pad_to=pad_to)
    obs, _ = env.reset(seed=4)
    encoder = ObservationEncoder(env.layout if pad_to else None)
    rng = np.random.default_rng(1)
    done = False
    while not done:
        _same(encoder(env.simulation.observation()), obs)
        obs, _, terminated, truncated, _ = env.step(rng.integers(0, 5, size=env.layout.people))
        done = terminated or truncated


def test_array_policy_plays_the_same_episode_under_the_runner() -> None:
    """A function of observation arrays gives the same record through the env and as an EMBERBench policy."""
    def act(obs: dict[str, np.ndarray]) -> np.ndarray:
        toward = np.where(obs["people"][:, 1] < 13, 2, 1)  # east until the last column, then north
        return np.where(obs["inside"] == 1, toward, 0).astype(np.int64)

    env = EmberBenchEnv("v1-pub-01-single-exit-sparse")
    obs, _ = env.reset(seed=9)
    done = False
    while not done:
        obs, _, terminated, truncated, _ = env.step(act(obs))
        done = terminated or truncated
    record, _ = play_episode(env.scenario, 9, ArrayPolicy(act))
    assert record.canonical_bytes() == env.record().canonical_bytes()
    with pytest.raises(InvalidActionError, match="expected 6 move codes"):
        play_episode(env.scenario, 9, ArrayPolicy(lambda obs: np.zeros(5, dtype=np.int64)))


def test_an_encoder_serves_one_episode_from_its_start() -> None:
    """An encoder that first sees a later step cannot know the person slots."""
    env = EmberBenchEnv()
    env.reset(seed=0)
    env.step(np.zeros(env.layout.people, dtype=np.int64))
    with pytest.raises(PolicyError, match="from step 0"):
        ObservationEncoder()(env.simulation.observation())


def test_ansi_render_shows_people_fire_and_status() -> None:
    """render() in ansi mode draws the map, the fire and the people under a status line."""
    env = EmberBenchEnv(make_scenario(["P.*", "..E"]), render_mode="ansi")
    assert env.render() is None
    env.reset(seed=0)
    assert env.render() == "step 0/20  inside 1  evacuated 0  casualties 0\n@.*\n..E\n"
    assert EmberBenchEnv().render() is None


def test_layout_fits_every_scenario() -> None:
    """The smallest layout holds the largest height, width and population."""
    a, b = make_scenario(["P..E"]), make_scenario(["P", "P", "E"])
    assert Layout.fitting([a, b]) == Layout(3, 4, 2)
