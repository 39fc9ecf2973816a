"""The terminal view: frames as text that fits 80 columns."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from emberbench.records.episode import play_episode
from emberbench.policies.spec import resolve_policy
from emberbench.viewer.frames import episode_frames
from emberbench.viewer.terminal import fit_scale, frame_text, play_in_terminal
from tests.helpers import make_scenario


def _frames(scenario, seed=0, policy="greedy"):  # noqa: ANN001, ANN202
    record, metrics = play_episode(scenario, seed, resolve_policy(policy)())
    return episode_frames(scenario, record, metrics)


@pytest.mark.parametrize(("width", "height", "columns", "rows", "scale"), [
    (64, 64, 80, None, 1), (200, 10, 80, None, 3), (80, 10, 80, None, 1), (81, 10, 80, None, 2),
    (40, 100, 80, 30, 4),
])
def test_fit_scale(width, height, columns, rows, scale) -> None:  # noqa: ANN001
    """The scale is the smallest integer that fits the map in the columns (and rows)."""
    assert fit_scale(width, height, columns, rows) == scale


def test_wide_map_is_scaled_into_80_columns() -> None:
    """A 200-column map renders in at most 80 columns, and its exit and people stay visible."""
    rows = ["." * 199 + "E", "P" + "." * 199, "." * 200]
    frames = _frames(make_scenario(rows, max_steps=5))
    text = frame_text(frames, 0, columns=80).plain
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "1 char = 3x3 cells" in lines[2]
    assert "E" in "".join(lines[3:]) and "@" in "".join(lines[3:])


def test_largest_public_map_fits_unscaled(suite) -> None:  # noqa: ANN001
    """The 64x64 campus fits 80 columns one character per cell; casualties show as x at the end."""
    frames = _frames(suite.scenario("v1-pub-11-large-campus"), policy="stay")
    lines = frame_text(frames, frames.steps).plain.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert len(lines) == 3 + 64
    assert "x" in "".join(lines[3:])


def test_non_terminal_output_prints_first_and_last_frames(suite) -> None:  # noqa: ANN001
    """Piped output gets the first and the last frame only."""
    frames = _frames(suite.scenario("v1-pub-01-single-exit-sparse"))
    buf = io.StringIO()
    play_in_terminal(frames, Console(file=buf, width=80, force_terminal=False))
    out = buf.getvalue()
    assert f"step 0/{frames.steps}" in out and f"step {frames.steps}/{frames.steps}" in out
    assert out.count("step ") == 2
