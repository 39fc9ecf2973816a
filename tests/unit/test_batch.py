"""The lockstep batch stepper: its contract, its errors, and records identical to single episodes."""

from __future__ import annotations

import numpy as np
import pytest

from emberbench.policies import BUILTIN_POLICIES
from emberbench.records.episode import play_episode
from emberbench.records.record import record_from_outcome
from emberbench.sim.actions import encode_action
from emberbench.sim.arena import Arena
from emberbench.sim.batch import SimulationBatch
from tests.helpers import make_scenario

POLICIES = ("greedy", "fire-aware", "random", "stay")


def _play_batched(episodes, size: int) -> list[bytes]:  # noqa: ANN001
    """Play (scenario, seed, policy name) episodes through a batch of ``size`` slots, refilling slots."""
    batch = SimulationBatch(size)
    queue = iter(range(len(episodes)))
    owner: dict[int, int] = {}
    policies: dict[int, object] = {}
    records: dict[int, bytes] = {}

    def begin(slot: int) -> None:
        k = next(queue, None)
        if k is not None:
            scenario, seed, name = episodes[k]
            batch.start(slot, scenario, seed)
            owner[slot], policies[slot] = k, BUILTIN_POLICIES[name]()

    for slot in range(size):
        begin(slot)
    while batch.live:
        live = batch.live
        actions = [policies[s](batch.observation(s)) for s in live]  # type: ignore[operator]
        batch.step([encode_action(a, batch.inside_ids(s), batch.steps(s)) for s, a in zip(live, actions)])
        for s in live:
            if batch.done(s):
                scenario, seed, _ = episodes[owner[s]]
                records[owner[s]] = record_from_outcome(scenario, seed, batch.outcome(s)).canonical_bytes()
                begin(s)
    return [records[k] for k in range(len(episodes))]


@pytest.mark.parametrize("size", [1, 7, 64])
def test_public_suite_records_are_byte_identical(suite, size: int) -> None:  # noqa: ANN001
    """Every public scenario, two seeds, the built-in policies: batched records equal play_episode's."""
    episodes = [(s, seed, POLICIES[(i + seed) % len(POLICIES)])
                for seed in (0, 3) for i, s in enumerate(suite.scenarios)]
    alone = [play_episode(s, seed, BUILTIN_POLICIES[name]())[0].canonical_bytes() for s, seed, name in episodes]
    assert _play_batched(episodes, size) == alone


def test_episodes_end_at_different_steps_and_leave_live() -> None:
    """A slot leaves ``live`` in the step its episode ends; the others go on."""
    short = make_scenario(["PE"], max_steps=5)
    long = make_scenario(["P..E"], max_steps=5)
    batch = SimulationBatch.of([(short, 0), (long, 0)])
    assert batch.live == (0, 1)
    batch.step([[2], [2]])
    assert batch.live == (1,) and batch.done(0) and not batch.done(1)
    assert batch.last_evacuations.tolist() == [1, 0]
    batch.step([[2]])
    batch.step([[2]])
    assert batch.live == () and batch.done(1)
    assert batch.last_evacuations.tolist() == [1, 1]
    assert batch.outcome(0).steps == 1 and batch.outcome(1).steps == 3
    assert batch.outcome(1).evacuations == ((3, 0, 0),)


def test_a_finished_slot_can_be_restarted() -> None:
    """start() on a finished slot begins a fresh episode there; its old outcome is gone."""
    sc = make_scenario(["PE"], max_steps=5)
    other = make_scenario(["P.E"], max_steps=5)
    batch = SimulationBatch(1)
    batch.start(0, sc, 0)
    batch.step([[2]])
    assert batch.done(0)
    batch.start(0, other, 0)
    assert batch.live == (0,) and batch.steps(0) == 0 and not batch.done(0)
    assert batch.observation(0).width == 3


def test_last_casualties_count_the_last_step() -> None:
    """last_casualties is per slot, for the last step that slot played."""
    sc = make_scenario(["P*", "E."], max_steps=5)
    batch = SimulationBatch.of([(sc, 0)])
    batch.step([[2]])  # walks into the fire
    assert batch.last_casualties.tolist() == [1]
    with pytest.raises(ValueError):
        batch.last_casualties[0] = 0  # a read-only view


def _started(size: int = 2) -> SimulationBatch:
    return SimulationBatch.of([(make_scenario(["P..E"], max_steps=5), 0)] * size)


@pytest.mark.parametrize(("act", "error", "message"), [
    (lambda: SimulationBatch(0), ValueError, "batch size must be a positive integer"),
    (lambda: SimulationBatch(True), ValueError, "batch size must be a positive integer"),
    (lambda: _started().start(2, make_scenario(["PE"]), 0), ValueError, "slot 2 is outside the batch"),
    (lambda: _started().start(0, make_scenario(["PE"]), 0), ValueError, "slot 0 is still playing"),
    (lambda: _started().step([[0]]), ValueError, "expected move codes for 2 live slots, got 1"),
    (lambda: _started().step([[0], [0, 0]]), ValueError, "slot 1: expected 1 move codes, got 2"),
    (lambda: _started().step([[0], [5]]), ValueError, "move codes must be 0"),
    (lambda: _started().step([[0], [-1]]), ValueError, "move codes must be 0"),
    (lambda: _started().step([[0.0], [1.0]]), ValueError, "move codes must be integers"),
    (lambda: _started().outcome(0), RuntimeError, "not finished"),
    (lambda: SimulationBatch(2).observation(1), ValueError, "slot 1 holds no episode"),
])
def test_misuse_is_refused(act, error, message) -> None:  # noqa: ANN001
    """Each misuse raises the error that names it, and a refused step changes nothing."""
    with pytest.raises(error, match=message):
        act()


def test_a_refused_step_changes_nothing() -> None:
    """Move codes are checked before anything moves."""
    batch = _started()
    with pytest.raises(ValueError):
        batch.step([[2], [9]])
    assert batch.steps(0) == batch.steps(1) == 0
    batch.step([[2], [2]])
    assert [p.col for p in batch.observation(0).people] == [1]


def test_arena_keeps_regions_through_repacks() -> None:
    """Regions survive reallocation; a slot reuses its region for data that fits."""
    arena = Arena({"a": np.int64, "b": np.uint8}, 3)
    arena.put(0, 3, {"a": np.array([1, 2, 3]), "b": 7})
    arena.put(1, 2, {"a": np.array([4, 5]), "b": 8})
    base = int(arena.base[0])
    arena.put(0, 2, {"a": np.array([9, 9]), "b": 1})  # fits: same region
    assert int(arena.base[0]) == base
    for _ in range(50):  # grows and repacks many times
        arena.put(2, 100, {"a": np.arange(100), "b": 2})
        arena.put(2, 1, {"a": np.arange(1), "b": 2})
        arena.put(1, 2 + _ % 3, {"a": np.arange(2 + _ % 3) + 4, "b": 8})
    assert arena.region("a", 0).tolist() == [9, 9] and arena.region("b", 0).tolist() == [1, 1]
    assert arena.region("a", 2).tolist() == [0]
    assert arena.region("a", 1).tolist() == (np.arange(2 + 49 % 3) + 4).tolist()
    assert arena.arrays["a"].size <= 4 * (3 + 100 + 4) + 64


def test_an_abandoned_episode_stops_and_frees_its_slot() -> None:
    """abandon() takes a running episode out of the step without an outcome; the slot can start again."""
    sc = make_scenario(["P..E"], max_steps=5)
    batch = SimulationBatch.of([(sc, 0), (sc, 1)])
    batch.step([[2], [2]])
    batch.abandon(0)
    assert batch.live == (1,) and not batch.done(0)
    with pytest.raises(RuntimeError, match="not finished"):
        batch.outcome(0)
    with pytest.raises(ValueError, match="slot 0 is not playing"):
        batch.abandon(0)
    batch.step([[2]])
    batch.start(0, sc, 0)
    assert batch.live == (0, 1) and batch.steps(0) == 0


def test_lockstep_episodes_match_single_stepping_with_give_ups(suite) -> None:  # noqa: ANN001
    """The seam for play_lockstep: the same records as Simulation objects, and a failing batch still
    yields exactly the episodes before it (give-ups abandon their slots)."""
    from emberbench.policies.baselines import GreedyPolicy
    from emberbench.policies.forms import SlotPolicies
    from emberbench.records.lockstep import play_lockstep, step_each

    episodes = [(s, seed) for s in suite.scenarios[:6] for seed in (0, 1)]

    class FailsAt(SlotPolicies):
        def __init__(self, call: int) -> None:
            super().__init__(GreedyPolicy)
            self.calls, self.call = 0, call

        def act_batch(self, observations, slots):  # noqa: ANN001, ANN201
            self.calls += 1
            if self.calls == self.call:
                return [*super().act_batch(observations, slots)[:-1], {"nobody": "N"}]
            return super().act_batch(observations, slots)

    def play(policy, **seam):  # noqa: ANN001, ANN003, ANN202
        out = []
        try:
            for record, _ in play_lockstep(episodes, policy, 5, **seam):
                out.append(record.canonical_bytes())
        except Exception as exc:  # noqa: BLE001 - compared below
            out.append(f"{type(exc).__name__}: {exc}")
        return out

    assert play(SlotPolicies(GreedyPolicy)) == play(SlotPolicies(GreedyPolicy), step_all=step_each)
    for call in (1, 7, 30):
        batched, single = play(FailsAt(call)), play(FailsAt(call), step_all=step_each)
        assert batched == single and batched[-1].startswith("InvalidActionError")


def test_lockstep_episodes_refuse_misuse() -> None:
    """More episodes than slots, or stepping an episode that is not running, are errors."""
    from emberbench.sim.batch_seam import LockstepEpisodes

    sc = make_scenario(["PE"], max_steps=5)
    lanes = LockstepEpisodes(1)
    first = lanes.new_episode(sc, 0)
    with pytest.raises(RuntimeError, match="all 1 slots are in use"):
        lanes.new_episode(sc, 1)
    lanes.step_all([first], [np.array([2])])
    assert first.done and first.t == 1
    with pytest.raises(ValueError, match="must be running"):
        lanes.step_all([first], [np.array([2])])
    first.outcome()
    second = lanes.new_episode(sc, 1)
    assert second.slot == 0 and second.observation().step == 0 and second.inside_ids() == ["p0"]


def test_observations_read_together_equal_those_read_slot_by_slot() -> None:
    """observations(slots), in any order and with finished or abandoned slots among them, gives what
    observation() and inside_ids() give slot by slot."""
    a, b = make_scenario(["P..E", "P..."], max_steps=6), make_scenario(["PE"], max_steps=6)
    batch = SimulationBatch.of([(a, 0), (b, 0), (a, 1)])
    batch.step([[2, 0], [2], [2, 1]])  # slot 1 ends (its one person leaves)
    batch.abandon(2)  # slot 2 is given up, then starts another episode
    batch.start(2, b, 3)
    order = [2, 1, 0]
    observations, inside = batch.observations(order)
    assert observations == [batch.observation(s) for s in order]
    assert inside == [batch.inside_ids(s) for s in order]
    assert observations[2].step == 1 and [p.col for p in observations[2].people] == [1, 0]


def test_lockstep_episodes_observe_only_their_own_episodes() -> None:
    """observe_all refuses an episode whose slot was given to another; otherwise it reads like observation()."""
    from emberbench.sim.batch_seam import LockstepEpisodes

    sc = make_scenario(["PE"], max_steps=5)
    lanes = LockstepEpisodes(1)
    first = lanes.new_episode(sc, 0)
    assert lanes.observe_all([first]) == ([first.observation()], [first.inside_ids()])
    lanes.step_all([first], [np.array([2])])
    first.outcome()
    second = lanes.new_episode(sc, 1)
    with pytest.raises(ValueError, match="not an episode of this batch"):
        lanes.observe_all([first])
    assert lanes.observe_all([second])[1] == [["p0"]]
