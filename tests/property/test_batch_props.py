"""Lockstep stepping against single stepping: every episode of a batch evolves exactly as alone.

Each example draws a few random scenarios (each with its own seed and moves)
and a number of slots, plays every episode alone through ``Simulation.step``
and all of them together through ``SimulationBatch.step`` (refilling slots as
episodes end, so episodes of different sizes and lengths share the batch and
end at different steps), and compares, after every step, what a policy sees
(slot by slot, and all slots read at once) and the whole state, and at the
end the outcome and the record's bytes.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from emberbench.records.record import record_from_outcome
from emberbench.sim.actions import encode_action
from emberbench.sim.batch import SimulationBatch
from emberbench.sim.simulator import Simulation
from tests.strategies import ScriptedRandomPolicy, small_scenarios

MOVES = st.lists(st.integers(0, 4), min_size=1, max_size=64)
EPISODES = st.lists(st.tuples(small_scenarios(), MOVES), min_size=1, max_size=6)
CROWDED = st.lists(st.tuples(small_scenarios(max_side=6, max_people=24), MOVES), min_size=1, max_size=4)


def _same_state(batch: SimulationBatch, slot: int, sim: Simulation) -> None:
    lane = batch.simulation(slot)
    assert batch.steps(slot) == sim.t
    assert np.array_equal(lane.pos, sim.pos)
    assert np.array_equal(lane.state, sim.state)
    assert np.array_equal(lane.inside, sim.inside)
    assert np.array_equal(lane.occ, sim.occ)
    assert np.array_equal(lane._cells_moved, sim._cells_moved)
    assert np.array_equal(lane._exposure, sim._exposure)
    assert (lane._active, lane._attempts, lane._blocked_n, lane._congestion) == (
        sim._active, sim._attempts, sim._blocked_n, sim._congestion)
    assert lane._actions == sim._actions and lane._blocked == sim._blocked
    assert lane._evac == sim._evac and lane._cas == sim._cas


def _lockstep(episodes, slots: int) -> None:  # noqa: ANN001
    """Play ``episodes`` alone and in a batch of ``slots`` slots; compare at every step."""
    batch = SimulationBatch(slots)
    queue = list(range(len(episodes)))
    single: dict[int, Simulation] = {}
    policies: dict[int, tuple[ScriptedRandomPolicy, ScriptedRandomPolicy]] = {}
    owner: dict[int, int] = {}
    finished: set[int] = set()

    def begin(slot: int) -> None:
        k = queue.pop(0)
        scenario, choices = episodes[k]
        batch.start(slot, scenario, scenario.seed)
        single[k] = Simulation(scenario, scenario.seed)
        policies[k] = (ScriptedRandomPolicy(choices), ScriptedRandomPolicy(choices))
        owner[slot] = k

    for slot in range(min(slots, len(episodes))):
        begin(slot)
    while batch.live:
        codes = []
        asked = list(reversed(batch.live))  # read together first, in an order of the driver's choosing
        together = dict(zip(asked, zip(*batch.observations(asked))))
        for slot in batch.live:
            k = owner[slot]
            sim = single[k]
            assert together[slot] == (sim.observation(), sim.inside_ids())
            obs = batch.observation(slot)
            assert obs == sim.observation()
            assert batch.inside_ids(slot) == sim.inside_ids()
            codes.append(np.asarray(encode_action(policies[k][0](obs), batch.inside_ids(slot), batch.steps(slot)),
                                    dtype=np.int64))
            sim.step(np.asarray(encode_action(policies[k][1](sim.observation()), sim.inside_ids(), sim.t),
                                dtype=np.int64))
        live = batch.live
        batch.step(codes)
        for slot in live:
            k = owner[slot]
            sim = single[k]
            _same_state(batch, slot, sim)
            assert batch.done(slot) == sim.done
            assert (slot in batch.live) == (not sim.done)
            if sim.done:
                scenario = episodes[k][0]
                assert batch.outcome(slot) == sim.outcome()
                record = record_from_outcome(scenario, scenario.seed, batch.outcome(slot))
                assert record.canonical_bytes() == record_from_outcome(
                    scenario, scenario.seed, sim.outcome()).canonical_bytes()
                finished.add(k)
                if queue:
                    begin(slot)
    assert finished == set(range(len(episodes)))


@given(EPISODES, st.integers(1, 4))
def test_batch_steps_exactly_like_single_episodes(episodes, slots) -> None:  # noqa: ANN001
    """Random scenarios, seeds and moves: state, observations, outcome and record agree at every step."""
    _lockstep(episodes, slots)


@given(CROWDED, st.integers(1, 3))
def test_batch_agrees_on_crowded_maps(episodes, slots) -> None:  # noqa: ANN001
    """Crowded small maps (queues, contests, swaps and cycles) agree with single stepping too."""
    _lockstep(episodes, slots)


@given(st.lists(small_scenarios(), min_size=2, max_size=5), st.data())
def test_an_episode_does_not_depend_on_its_neighbours(scenarios, data) -> None:  # noqa: ANN001
    """The same episode gives the same outcome whichever episodes share the batch and whichever slot it has."""
    target = scenarios[0]
    choices = data.draw(MOVES)
    slot = data.draw(st.integers(0, len(scenarios) - 1))
    others = scenarios[1:]
    order = others[:slot] + [target] + others[slot:]
    batch = SimulationBatch.of([(s, s.seed) for s in order])
    policies = [ScriptedRandomPolicy(choices if i == slot else [1, 2, 3, 4, 0]) for i in range(len(order))]
    while batch.live:
        batch.step([encode_action(policies[s](batch.observation(s)), batch.inside_ids(s), batch.steps(s))
                    for s in batch.live])
    alone = Simulation(target, target.seed)
    policy = ScriptedRandomPolicy(choices)
    while not alone.done:
        alone.step(np.asarray(encode_action(policy(alone.observation()), alone.inside_ids(), alone.t),
                              dtype=np.int64))
    assert batch.outcome(slot) == alone.outcome()
