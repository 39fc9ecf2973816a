"""The lockstep driver and the batch form of a policy: slots, failures, the simulator seam."""

from __future__ import annotations

import pytest

from emberbench.errors import PolicyError
from emberbench.policies.baselines import GreedyPolicy
from emberbench.policies.forms import SlotPolicies, batch_factory_of, is_async_policy
from emberbench.policies.spec import FreshPolicies
from emberbench.records.episode import play_episode
from emberbench.records.lockstep import play_lockstep, step_each

IDS = ("v1-pub-01-single-exit-sparse", "v1-pub-02-fire-at-near-exit", "v1-pub-04-dead-end-corridor")


def _episodes(suite, seeds=(0, 1, 2)):  # noqa: ANN001, ANN202
    return [(suite.scenario(sid), seed) for sid in IDS for seed in seeds]


class Recording(SlotPolicies):
    """Greedy per slot; remembers every (slot, step) it was asked and every slot ended."""

    def __init__(self) -> None:
        super().__init__(GreedyPolicy)
        self.asked: list[tuple[int, int]] = []
        self.ended: list[int] = []
        self.widths: list[int] = []

    def act_batch(self, observations, slots):  # noqa: ANN001, ANN201
        self.widths.append(len(observations))
        self.asked.extend((slot, obs.step) for obs, slot in zip(observations, slots))
        return super().act_batch(observations, slots)

    def end_slot(self, slot: int) -> None:
        self.ended.append(slot)
        super().end_slot(slot)


@pytest.mark.parametrize("width", [1, 3, 9, 64])
def test_each_slot_is_one_episode_from_its_first_step_to_its_end(suite, width) -> None:  # noqa: ANN001
    """Slots are numbered in start order, each sees steps 0, 1, 2... of one episode, ends once, never returns;
    at most ``width`` episodes share a call; records equal the per-episode form's."""
    episodes = _episodes(suite)
    policy = Recording()
    played = list(play_lockstep(episodes, policy, width))
    expected = [play_episode(scenario, seed, GreedyPolicy()) for scenario, seed in episodes]
    assert [r.canonical_bytes() for r, _ in played] == [r.canonical_bytes() for r, _ in expected]
    assert sorted(policy.ended) == list(range(len(episodes)))
    for slot, (record, _) in enumerate(expected):
        assert [step for s, step in policy.asked if s == slot] == list(range(len(record.actions)))
    assert max(policy.widths) == min(width, len(episodes))


def test_a_vectorized_step_plugs_in(suite) -> None:  # noqa: ANN001
    """``step_all`` receives every running episode of a step at once; the records do not change."""
    calls: list[int] = []

    def step_all(episodes, codes) -> None:  # noqa: ANN001
        calls.append(len(episodes))
        step_each(episodes, codes)

    episodes = _episodes(suite)
    played = list(play_lockstep(episodes, SlotPolicies(GreedyPolicy), 64, step_all=step_all))
    expected = [play_episode(scenario, seed, GreedyPolicy())[0] for scenario, seed in episodes]
    assert [r for r, _ in played] == expected
    assert calls[0] == len(episodes) and len(calls) == max(len(r.actions) for r in expected)


class Raising(SlotPolicies):
    def __init__(self, at_call: int) -> None:
        super().__init__(GreedyPolicy)
        self.calls, self.at_call, self.ended = 0, at_call, []

    def act_batch(self, observations, slots):  # noqa: ANN001, ANN201
        self.calls += 1
        if self.calls == self.at_call:
            raise RuntimeError("the network broke")
        return super().act_batch(observations, slots)

    def end_slot(self, slot: int) -> None:
        self.ended.append(slot)
        super().end_slot(slot)


def test_an_exception_of_act_batch_keeps_the_finished_episodes_before_the_running_ones(suite) -> None:  # noqa: ANN001
    """The finished prefix is yielded, then the error is raised; every running slot is ended."""
    episodes = _episodes(suite)  # 01 (13 steps) x3, 02 (8 steps) x3, 04 (about 20 steps) x3
    policy = Raising(at_call=15)
    got = []
    with pytest.raises(RuntimeError, match="the network broke"):
        for item in play_lockstep(episodes, policy, 4):
            got.append(item)
    assert 0 < len(got) < len(episodes)
    assert [r.seed for r, _ in got] == [seed for _, seed in episodes[:len(got)]]
    assert sorted(policy.ended) == list(range(len(policy.ended)))  # every slot started was ended


@pytest.mark.parametrize(("answer", "message"), [
    (lambda obs: [], "returned 0 actions for 2 observations"),
    (lambda obs: {"p001": "N"}, "must return a sequence of actions"),
])
def test_act_batch_must_answer_each_observation(suite, answer, message) -> None:  # noqa: ANN001
    """A wrong count or type of answers is a PolicyError."""

    class Bad:
        def act_batch(self, observations, slots):  # noqa: ANN001, ANN202
            return answer(observations)

    with pytest.raises(PolicyError, match=message):
        list(play_lockstep(_episodes(suite, seeds=(0,))[:2], Bad(), 2))


def test_fresh_policies_refuses_a_batch_factory_that_repeats_an_object() -> None:
    """The batch form is held to the fresh-object rule, like the per-episode form."""
    shared = SlotPolicies(GreedyPolicy)

    def make():  # noqa: ANN202
        return GreedyPolicy()

    make.batch_factory = lambda: shared  # type: ignore[attr-defined]
    fresh = FreshPolicies(make, "test:make")
    assert fresh.batch_factory() is shared
    with pytest.raises(PolicyError, match="batch factory returned an object it had already returned"):
        fresh.batch_factory()


def test_forms_are_recognised() -> None:
    """Baselines declare a batch form; a non-callable declaration, and a batch policy without act_batch, are
    refused; async policies are told apart."""
    assert batch_factory_of(GreedyPolicy) is not None
    assert batch_factory_of(lambda: GreedyPolicy()) is None

    class Wrong:
        batch_factory = 3

    with pytest.raises(PolicyError, match="must be a callable"):
        batch_factory_of(Wrong)

    def make():  # noqa: ANN202
        return GreedyPolicy()

    make.batch_factory = object  # type: ignore[attr-defined]
    with pytest.raises(PolicyError, match="has no act_batch"):
        FreshPolicies(make, "x").batch_factory()

    class Async:
        async def __call__(self, obs):  # noqa: ANN001, ANN204
            return {}

    async def fn(obs):  # noqa: ANN001, ANN202
        return {}

    assert is_async_policy(Async()) and is_async_policy(fn)
    assert not is_async_policy(GreedyPolicy())
