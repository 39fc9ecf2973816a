"""Property tests over random small maps and random actions."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from emberbench.records.episode import authenticate, play_episode
from emberbench.records.metric_defs import METRICS
from emberbench.records.metrics import metric_fraction
from emberbench.sim.simulator import Simulation
from tests.strategies import ScriptedRandomPolicy, small_scenarios

MOVES = st.lists(st.integers(0, 4), min_size=1, max_size=64)


@given(small_scenarios(), MOVES)
def test_invariants_hold_at_every_step(scenario, choices) -> None:  # noqa: ANN001
    """No two people share a cell, nobody is on a wall, and the population is conserved."""
    sim = Simulation(scenario, scenario.seed)
    policy = ScriptedRandomPolicy(choices)
    wall = sim.grid.wall
    from emberbench.sim.actions import encode_action

    while not sim.done:
        codes = encode_action(policy(sim.observation()), sim.inside_ids(), sim.t)
        sim.step(np.asarray(codes, dtype=np.int64))
        inside_cells = sim.pos[sim.inside]
        assert len(set(inside_cells.tolist())) == inside_cells.size
        assert not wall[inside_cells].any()
        evac = int((sim.state == 1).sum())
        dead = int((sim.state == 2).sum())
        assert evac + dead + sim.inside.size == scenario.population
        assert (sim.occ >= 0).sum() == sim.inside.size


@given(small_scenarios(), MOVES)
def test_moves_are_single_steps(scenario, choices) -> None:  # noqa: ANN001
    """Each person moves at most one cell per step and never through a wall."""
    sim = Simulation(scenario, scenario.seed)
    policy = ScriptedRandomPolicy(choices)
    from emberbench.sim.actions import encode_action

    while not sim.done:
        before = sim.pos.copy()
        codes = encode_action(policy(sim.observation()), sim.inside_ids(), sim.t)
        sim.step(np.asarray(codes, dtype=np.int64))
        delta = np.abs(sim.pos - before)
        assert set(delta.tolist()) <= {0, 1, sim.grid.pw}


@given(small_scenarios(), MOVES)
def test_metric_identities_and_exact_floats(scenario, choices) -> None:  # noqa: ANN001
    """Stored floats equal float(Fraction); outcome and movement identities hold; replay agrees."""
    record, metrics = play_episode(scenario, scenario.seed, ScriptedRandomPolicy(choices))
    c = metrics.counts_dict()
    assert c["evacuated"] + c["casualties"] + c["stranded"] == c["population"]
    assert c["congestion_blocks"] <= c["blocked_moves"] <= c["movement_attempts"]
    assert c["terminal_trapped_count"] <= c["stranded"]
    stored = metrics.to_dict()
    for m in METRICS:
        exact = metric_fraction(metrics, m.name)
        value = stored[m.group][m.name]
        if exact is None:
            assert value is None
        else:
            assert isinstance(exact, Fraction) and value == float(exact)

    class OneSuite:
        def resolve(self, sid, h):  # noqa: ANN001
            assert (sid, h) == (scenario.id, scenario.content_hash)
            return scenario

    assert authenticate(record, OneSuite()) == metrics
