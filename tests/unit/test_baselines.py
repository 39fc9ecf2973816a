"""Baseline policies on the public suite: they discriminate, and in the expected order."""

from __future__ import annotations

import pytest

from emberbench.records.episode import play_episode
from emberbench.sim.observation import Observation
from emberbench.policies import BUILTIN_POLICIES


@pytest.fixture(scope="module")
def totals(suite) -> dict[str, dict[str, int]]:  # noqa: ANN001
    out: dict[str, dict[str, int]] = {}
    for name, factory in BUILTIN_POLICIES.items():
        acc = {"evacuated": 0, "casualties": 0, "stranded": 0}
        for scenario in suite.scenarios:
            for seed in (0, 1, 2):
                _, metrics = play_episode(scenario, seed, factory())
                for key in acc:
                    acc[key] += metrics.count(key)
        out[name] = acc
    return out


def test_fire_aware_has_no_more_casualties_than_greedy(totals) -> None:  # noqa: ANN001
    """Over the public suite with seeds 0, 1, 2, fire-aware loses no more people than greedy."""
    assert totals["fire-aware"]["casualties"] <= totals["greedy"]["casualties"]
    assert totals["fire-aware"]["evacuated"] >= totals["greedy"]["evacuated"]


def test_stay_is_worst(totals) -> None:  # noqa: ANN001
    """stay evacuates nobody and loses the most people (casualties plus stranded)."""
    assert totals["stay"]["evacuated"] == 0
    lost = {name: t["casualties"] + t["stranded"] for name, t in totals.items()}
    assert lost["stay"] == max(lost.values())
    assert all(t["evacuated"] > 0 for name, t in totals.items() if name != "stay")


def test_factories_return_fresh_policies() -> None:
    """Every factory call returns a new object."""
    for factory in BUILTIN_POLICIES.values():
        assert factory() is not factory()


def test_random_policy_ignores_the_episode_seed(suite) -> None:  # noqa: ANN001
    """random draws from its own fixed generator: its first actions are the same for every seed."""
    scenario = suite.scenario("v1-pub-12-smouldering-two-exits")
    firsts = []
    for seed in (0, 1):
        seen: list[dict] = []
        policy = BUILTIN_POLICIES["random"]()

        def watch(obs: Observation, policy=policy, seen=seen) -> dict:  # noqa: ANN001
            action = policy(obs)
            seen.append(action)
            return action

        play_episode(scenario, seed, watch)
        firsts.append(seen[0])
    assert firsts[0] == firsts[1]
