"""Simulator rules: step order, conflicts, walls, fire, casualties, evacuations, termination."""

from __future__ import annotations

import numpy as np
import pytest

from emberbench.records.episode import play_episode
from emberbench.sim.simulator import Simulation
from tests.helpers import Script, make_scenario


def positions(sim: Simulation) -> dict[str, tuple[int, int]]:
    return {p.id: (p.row, p.col) for p in sim.observation().people}


def step(sim: Simulation, moves: dict[str, str]) -> None:
    from emberbench.sim.actions import encode_action

    sim.step(np.asarray(encode_action(moves, sim.inside_ids(), sim.t), dtype=np.int64))


def test_move_into_wall_or_off_map_is_blocked() -> None:
    """A move into a wall or off the grid leaves the person in place, marked 'w'."""
    sc = make_scenario(["P.#", "...", "..E"])
    sim = Simulation(sc, 0)
    step(sim, {"p0": "N"})
    assert positions(sim) == {"p0": (0, 0)}
    step(sim, {"p0": "E"})
    step(sim, {"p0": "E"})
    assert positions(sim) == {"p0": (0, 1)}
    out = sim
    assert out._blocked == ["w", ".", "w"]


def test_two_movers_to_one_cell_lowest_index_wins() -> None:
    """Among people aiming at one cell, the lowest scenario index moves; the rest are congestion."""
    sc = make_scenario(["P.P", "...", "..E"])
    sim = Simulation(sc, 0)
    step(sim, {"p0": "E", "p1": "W"})
    assert positions(sim) == {"p0": (0, 1), "p1": (0, 2)}
    assert sim._blocked[-1] == ".c"


def test_chain_moves_follow_the_leader() -> None:
    """A person may step into a cell its occupant leaves in the same step."""
    sc = make_scenario(["PPP.E"])
    sim = Simulation(sc, 0)
    step(sim, {"p0": "E", "p1": "E", "p2": "E"})
    assert positions(sim) == {"p0": (0, 1), "p1": (0, 2), "p2": (0, 3)}
    assert sim._blocked[-1] == "..."


def test_chain_behind_a_stayer_is_blocked() -> None:
    """If the front person stays, everyone pushing into the queue is blocked by people."""
    sc = make_scenario(["PPP.E"])
    sim = Simulation(sc, 0)
    step(sim, {"p0": "E", "p1": "E", "p2": "stay"})
    assert positions(sim) == {"p0": (0, 0), "p1": (0, 1), "p2": (0, 2)}
    assert sim._blocked[-1] == "cc."


def test_swap_is_blocked() -> None:
    """Two people trying to swap cells both stay."""
    sc = make_scenario(["PP.E"])
    sim = Simulation(sc, 0)
    step(sim, {"p0": "E", "p1": "W"})
    assert positions(sim) == {"p0": (0, 0), "p1": (0, 1)}
    assert sim._blocked[-1] == "cc"


def test_rotation_cycle_is_blocked() -> None:
    """Four people rotating around a 2x2 square form a cycle and all stay."""
    sc = make_scenario(["PP#", "PPE"])
    sim = Simulation(sc, 0)
    step(sim, {"p0": "E", "p1": "S", "p3": "W", "p2": "N"})
    assert positions(sim) == {"p0": (0, 0), "p1": (0, 1), "p2": (1, 0), "p3": (1, 1)}


def test_loser_of_a_conflict_blocks_the_person_behind() -> None:
    """Someone moving into the cell of a conflict loser is blocked too."""
    sc = make_scenario(["P.P", ".P.", "E.."])
    # p0 (0,0) E -> (0,1); p1 (0,2) W -> (0,1) loses; p2 (1,1) N -> (0,1) loses too.
    sim = Simulation(sc, 0)
    step(sim, {"p0": "E", "p1": "W", "p2": "N"})
    assert positions(sim)["p0"] == (0, 1)
    assert positions(sim)["p1"] == (0, 2) and positions(sim)["p2"] == (1, 1)


def test_evacuation_at_exit_and_casualty_in_fire() -> None:
    """Reaching a non-burning exit evacuates; standing on a burning cell kills."""
    sc = make_scenario(["P.E", "...", "*P."], spread=(0, 1))
    record, metrics = play_episode(sc, 0, Script([{"p0": "E", "p1": "W"}, {"p0": "E"}]))
    assert record.casualties == ((1, "p1"),)
    assert record.evacuations == ((2, "p0", "e0"),)
    assert record.termination == "all_resolved" and record.steps == 2


def test_burning_exit_does_not_evacuate() -> None:
    """A person stepping onto a burning exit is a casualty, not an evacuee."""
    sc = make_scenario(["PE*"], spread=(1, 1))
    record, _ = play_episode(sc, 0, Script([{"p0": "E"}]))
    assert record.casualties == ((1, "p0"),)
    assert record.evacuations == ()


def test_max_steps_termination_and_stranded() -> None:
    """At the step limit the people inside are stranded."""
    sc = make_scenario(["P..E"], max_steps=2)
    record, metrics = play_episode(sc, 0, Script([]))
    assert record.termination == "max_steps" and record.steps == 2
    assert record.stranded == ("p0",)
    assert metrics.count("terminal_trapped_count") == 0


def test_deterministic_spread_reaches_neighbours_each_step() -> None:
    """With spread 1/1 the fire grows by one ring of 4-neighbours per step; walls never burn."""
    sc = make_scenario(["....P", ".#...", "*...E"], spread=(1, 1), max_steps=5)
    sim = Simulation(sc, 0)
    burning = [sorted(sim.observation().burning())]
    for _ in range(2):
        step(sim, {p: "stay" for p in sim.inside_ids()})
        burning.append(sorted(sim.observation().burning()))
    assert burning[0] == [(2, 0)]
    assert burning[1] == [(1, 0), (2, 0), (2, 1)]
    assert (1, 1) not in burning[2] and (0, 0) in burning[2] and (2, 2) in burning[2]


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_zero_spread_never_grows(seed: int) -> None:
    """A spread of 0 keeps the initial fire forever."""
    sc = make_scenario(["P...*", "....E"], spread=(0, 5), max_steps=6)
    record, _ = play_episode(sc, seed, Script([]))
    assert set(record.burning) == {1}
