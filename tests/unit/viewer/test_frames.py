"""Frames: an authenticated episode replayed in the simulator and encoded as move codes."""

from __future__ import annotations

import numpy as np
import pytest

from emberbench.records.episode import play_episode, replay
from emberbench.policies.spec import resolve_policy
from emberbench.viewer.frames import CASUALTY, EVACUATED, STRANDED, casualty_cells, episode_frames

CASES = [
    ("v1-pub-01-single-exit-sparse", 0, "greedy"),
    ("v1-pub-03-bottleneck-door", 0, "greedy"),
    ("v1-pub-02-fire-at-near-exit", 1, "random"),
    ("v1-pub-08-sealed-room", 0, "stay"),
]


def _played(suite, sid, seed, policy):  # noqa: ANN001, ANN202
    sc = suite.scenario(sid)
    record, metrics = play_episode(sc, seed, resolve_policy(policy)())
    return sc, record, metrics


@pytest.mark.parametrize(("sid", "seed", "policy"), CASES)
def test_decoded_positions_are_the_simulators(suite, sid, seed, policy) -> None:  # noqa: ANN001
    """Positions rebuilt from the move codes equal the simulator's positions after every step."""
    sc, record, metrics = _played(suite, sid, seed, policy)
    frames = episode_frames(sc, record, metrics)
    seen = []
    replay(sc, record, observer=lambda sim: seen.append(np.divmod(sim.pos, sim.grid.pw)))
    assert len(seen) == frames.steps == record.steps
    for step, (rows, cols) in enumerate(seen, start=1):
        assert frames.positions(step) == list(zip((rows - 1).tolist(), (cols - 1).tolist()))


@pytest.mark.parametrize(("sid", "seed", "policy"), CASES)
def test_last_frame_counts_match_the_metrics(suite, sid, seed, policy) -> None:  # noqa: ANN001
    """At the last step the frame counts equal the episode's authenticated counts; at step 0 all are inside."""
    sc, record, metrics = _played(suite, sid, seed, policy)
    frames = episode_frames(sc, record, metrics)
    end, start = frames.counts(frames.steps), frames.counts(0)
    c = metrics.counts_dict()
    assert (end[EVACUATED], end[CASUALTY], end[STRANDED]) == (c["evacuated"], c["casualties"], c["stranded"])
    assert start["inside"] == sc.population and start["burning"] == len(sc.fire)
    assert list(frames.burning[1:]) == list(record.burning)


def test_blocked_moves_are_encoded(suite) -> None:  # noqa: ANN001
    """The number of blocked codes equals the record's blocked moves (walls and people apart)."""
    sc, record, metrics = _played(suite, "v1-pub-03-bottleneck-door", 0, "greedy")
    frames = episode_frames(sc, record, metrics)
    walls = sum(frames.counts(t)["blocked_wall"] for t in range(1, frames.steps + 1))
    people = sum(frames.counts(t)["blocked_people"] for t in range(1, frames.steps + 1))
    assert people == sum(line.count("c") for line in record.blocked) > 0
    assert walls == sum(line.count("w") for line in record.blocked)


def test_a_record_that_does_not_reproduce_is_refused(suite) -> None:  # noqa: ANN001
    """Frames are made only of records that replay to themselves."""
    from dataclasses import replace

    from emberbench.errors import EmberError

    sc, record, metrics = _played(suite, "v1-pub-01-single-exit-sparse", 0, "greedy")
    forged = replace(record, casualties=((1, sc.people[0].id),))
    with pytest.raises(EmberError):
        episode_frames(sc, forged, metrics)


def test_casualty_cells_are_burning_cells(suite) -> None:  # noqa: ANN001
    """Every casualty cell found by replay was burning at the casualty's step, one cell per casualty."""
    sc, record, metrics = _played(suite, "v1-pub-08-sealed-room", 0, "stay")
    frames = episode_frames(sc, record, metrics)
    cells = casualty_cells(sc, record)
    assert len(cells) == len(record.casualties) > 0
    for (step, _pid), (r, c) in zip(record.casualties, cells):
        assert 0 <= frames.ignition[r * sc.width + c] <= step
