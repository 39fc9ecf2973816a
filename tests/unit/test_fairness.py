"""Common random numbers: the fire is a pure function of (scenario, seed)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from emberbench.sim.actions import encode_action
from emberbench.records.episode import play_episode
from emberbench.policies import GreedyPolicy, StayPolicy
from emberbench.sim.simulator import Simulation

STOCHASTIC = "v1-pub-10-route-invalidation"


def burning_sets(scenario, seed, policy) -> list[frozenset]:  # noqa: ANN001
    sim = Simulation(scenario, seed)
    out = []
    while not sim.done:
        obs = sim.observation()
        out.append(obs.burning())
        sim.step(np.asarray(encode_action(policy(obs), sim.inside_ids(), sim.t), dtype=np.int64))
    out.append(sim.observation().burning())
    return out


def test_two_policies_see_identical_stochastic_fire(suite) -> None:  # noqa: ANN001
    """greedy and stay see identical burning sets at every step both reach; seeds differ."""
    scenario = suite.scenario(STOCHASTIC)
    assert not scenario.deterministic_fire
    greedy = burning_sets(scenario, 0, GreedyPolicy())
    stay = burning_sets(scenario, 0, StayPolicy())
    both = min(len(greedy), len(stay))
    assert both > 5
    assert greedy[:both] == stay[:both]
    other = burning_sets(scenario, 1, StayPolicy())
    assert other[: len(stay)] != stay[: len(other)]
    assert greedy[0] == other[0]  # the same initial fire, then different growth


def test_same_episode_twice_is_identical(suite) -> None:  # noqa: ANN001
    """The same (scenario, seed, policy) twice gives identical observations and records."""
    scenario = suite.scenario(STOCHASTIC)

    def observed(seed: int) -> tuple[list[str], bytes]:
        seen: list[str] = []
        policy = GreedyPolicy()

        def watch(obs):  # noqa: ANN001
            seen.append(obs.to_json())
            return policy(obs)

        record, _ = play_episode(scenario, seed, watch)
        return seen, record.canonical_bytes()

    assert observed(3) == observed(3)


SCRIPT = """
from emberbench.sim.suite import load_suite
from emberbench.records.episode import play_episode
from emberbench.policies import BUILTIN_POLICIES
suite = load_suite()
for s in suite.scenarios[:10]:
    for name in ("greedy", "fire-aware", "random"):
        record, metrics = play_episode(s, 5, BUILTIN_POLICIES[name]())
        print(s.id, name, record.digest())
"""


def test_results_do_not_depend_on_hash_seed() -> None:
    """Record digests are identical under different PYTHONHASHSEED values."""
    outs = []
    for hash_seed in ("0", "12345"):
        env = {"PYTHONHASHSEED": hash_seed, "PATH": "/usr/bin:/bin"}
        done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True)
        outs.append(done.stdout)
    assert outs[0] == outs[1] and outs[0].count("\n") == 30
