"""Episode metrics by hand on tiny scenarios, with exact expected Fractions."""

from __future__ import annotations

from fractions import Fraction

import pytest

from emberbench.records.episode import play_episode
from emberbench.errors import RecordAuthenticationError
from emberbench.records.metrics import metric_fraction, metrics_from_dict
from tests.helpers import Script, make_scenario


def values(metrics) -> dict[str, Fraction | None]:  # noqa: ANN001
    from emberbench.records.metric_defs import METRIC_NAMES

    return {name: metric_fraction(metrics, name) for name in METRIC_NAMES}


def test_one_exit_straight_walk() -> None:
    """Two people walk straight to one exit; path efficiency is 1; no fire means zero exposure."""
    sc = make_scenario(["P..E", "#..#", "P..#"], max_steps=10)
    # p0: E,E,E -> evacuates at step 3. p1: N,N... (2,0)->(1,0) is wall; go E,N,N? build path E,E,N,N,E
    steps = [
        {"p0": "E", "p1": "E"},
        {"p0": "E", "p1": "E"},
        {"p0": "E", "p1": "N"},
        {"p1": "N"},
        {"p1": "E"},
    ]
    record, m = play_episode(sc, 0, Script(steps))
    v = values(m)
    assert record.evacuations == ((3, "p0", "e0"), (5, "p1", "e0"))
    assert v["evacuated_rate"] == 1 and v["casualty_rate"] == 0 and v["stranded_rate"] == 0
    assert v["mean_person_time_to_safety"] == Fraction(3 + 5, 2)
    assert v["aggregate_path_efficiency"] == Fraction(3 + 5, 3 + 5)
    assert v["blocked_rate"] == 0 and v["congestion_block_rate"] == 0
    assert v["mean_exposure"] == 0  # no fire anywhere: no histogram entries
    assert m.count("active_person_states") == 3 + 5
    assert v["exits_used"] == 1 and v["max_exit_share"] == 1 and v["exit_balance"] is None


def test_two_exits_balance_and_share() -> None:
    """Three evacuees over two exits: max share 2/3 and balance (1 - 5/9) / (1/2) = 8/9."""
    sc = make_scenario(["EPP.PE"], max_steps=5)
    record, m = play_episode(sc, 0, Script([{"p0": "W", "p1": "W", "p2": "E"}, {"p1": "W"}, {"p1": "W"}]))
    assert [e[2] for e in record.evacuations] == ["e0", "e1", "e0"]
    v = values(m)
    assert v["exits_used"] == 2
    assert v["max_exit_share"] == Fraction(2, 3)
    assert v["exit_balance"] == (1 - (Fraction(2, 3) ** 2 + Fraction(1, 3) ** 2)) / (1 - Fraction(1, 2))
    assert v["exit_balance"] == Fraction(8, 9)


def test_congestion_counts() -> None:
    """A queue behind a stayer: attempts, blocks and congestion blocks counted exactly."""
    sc = make_scenario(["PP.E"], max_steps=2)
    # step 1: p0 E into p1 who stays -> congestion; p1 stays. step 2: p0 N (wall) -> wall block; p1 E moves.
    record, m = play_episode(sc, 0, Script([{"p0": "E"}, {"p0": "N", "p1": "E"}]))
    c = m.counts_dict()
    assert (c["movement_attempts"], c["blocked_moves"], c["congestion_blocks"]) == (3, 2, 1)
    assert values(m)["blocked_rate"] == Fraction(2, 3)
    assert values(m)["congestion_block_rate"] == Fraction(1, 3)
    assert record.termination == "max_steps" and c["stranded"] == 2
    assert values(m)["mean_person_time_to_safety"] == 2  # both censored at max_steps = 2


def test_casualty_stranded_and_trapped_with_exposure() -> None:
    """One casualty, one trapped (walled in), one stranded with a path: rates and exposure exact."""
    # Row 0: p0 beside the fire; row 2: p1 sealed in a pocket; row 4: p2 free but stays.
    sc = make_scenario(
        ["*P...", "#####", "P#..E", "##...", "P...."],
        spread=(0, 1), max_steps=3,
    )
    record, m = play_episode(sc, 0, Script([{"p0": "W"}]))
    c = m.counts_dict()
    assert record.casualties == ((1, "p0"),)
    assert (c["casualties"], c["stranded"], c["terminal_trapped_count"]) == (1, 2, 1)
    v = values(m)
    assert v["casualty_rate"] == Fraction(1, 3)
    assert v["stranded_rate"] == Fraction(2, 3)
    assert v["terminal_trapped_rate"] == Fraction(1, 3)
    assert v["evacuated_rate"] == 0
    # Exposure, L1 distance to the single burning cell (0, 0), at the start of each step:
    # step 1: p0 d=1, p1 (2,0) d=2, p2 (4,0) d=4; steps 2 and 3: p1 d=2, p2 d=4.
    assert m.exposure_histogram == ((1, 1), (2, 3), (4, 3))
    assert c["active_person_states"] == 7
    assert v["mean_exposure"] == (Fraction(1, 1) + Fraction(3, 2) + Fraction(3, 4)) / 7
    assert v["aggregate_path_efficiency"] is None  # no evacuee moved
    assert v["exits_used"] == 0 and v["max_exit_share"] is None and v["exit_balance"] is None


def test_stored_metrics_must_match_counts() -> None:
    """A stored float that differs from float(Fraction) of the counts is rejected."""
    sc = make_scenario(["P.E"], max_steps=4)
    _, m = play_episode(sc, 0, Script([{"p0": "E"}, {"p0": "E"}]))
    data = m.to_dict()
    assert metrics_from_dict(data) == m
    data["safety"]["evacuated_rate"] = 0.5
    with pytest.raises(RecordAuthenticationError, match="safety.evacuated_rate is 0.5, but the counts give 1.0"):
        metrics_from_dict(data)
    data = m.to_dict()
    data["exits"]["exits_used"] = 1.0
    with pytest.raises(RecordAuthenticationError, match="exits_used"):
        metrics_from_dict(data)
