"""The terminal view: an episode's frames as text, for a head node with no browser.

Each map cell is one character; a map wider than the terminal (80 columns by
default) or taller than the screen is scaled down by an integer factor, each
character then standing for a ``k x k`` block that shows its most important
content (a blocked person over a person over a casualty over fire over an
exit over a wall over floor), so nothing that matters disappears.
"""

from __future__ import annotations

import math
import time

from rich.console import Console, Group
from rich.text import Text

from ..records.record import RunRecord
from ..sim.suite import Suite
from .frames import CASUALTY, EVACUATED, PEOPLE_BLOCKED, STRANDED, WALL_BLOCKED, EpisodeFrames

# (priority, glyph, style): the highest priority in a block is drawn.
FLOOR = (0, " ", "")
WALL = (1, "#", "grey50")
EXIT = (2, "E", "bold green")
FIRE = (3, "*", "red")
NEW_FIRE = (4, "*", "bold yellow")
DEAD = (5, "x", "bold red")
OUT = (6, "o", "bold green")
PERSON = (7, "@", "bold blue")
STUCK = (8, "?", "bold yellow")
BLOCKED = (9, "@", "bold white on red")
LEGEND = "@ inside (red=blocked) o evacuated x casualty ? stranded * fire E exit # wall"
HEADER_LINES = 3


def fit_scale(width: int, height: int, columns: int, rows: int | None = None) -> int:
    """The smallest integer factor that fits a ``height x width`` map into ``columns`` (and ``rows``)."""
    scale = max(1, math.ceil(width / max(1, columns)))
    if rows is not None and rows > 0:
        scale = max(scale, math.ceil(height / rows))
    return scale


def _cells(frames: EpisodeFrames, step: int) -> dict[tuple[int, int], tuple[int, str, str]]:
    sc = frames.scenario
    out: dict[tuple[int, int], tuple[int, str, str]] = {}
    for r, row in enumerate(sc.map):
        for c, ch in enumerate(row):
            if ch == "#":
                out[(r, c)] = WALL
    for e in sc.exits:
        out[(e.row, e.col)] = EXIT
    w = sc.width
    for k, ig in enumerate(frames.ignition):
        if 0 <= ig <= step:
            out[(k // w, k % w)] = NEW_FIRE if ig == step and step > 0 else FIRE
    line = frames.moves[step - 1] if step >= 1 else ""
    for i, cell in enumerate(frames.positions(step)):
        state = frames.state(i, step)
        if state == EVACUATED:
            if frames.fates[i].step != step:
                continue
            mark = OUT
        elif state == CASUALTY:
            mark = DEAD
        elif state == STRANDED:
            mark = STUCK
        elif line and (line[i] in WALL_BLOCKED or line[i] in PEOPLE_BLOCKED):
            mark = BLOCKED
        else:
            mark = PERSON
        if mark[0] > out.get(cell, FLOOR)[0]:
            out[cell] = mark
    return out


def frame_text(frames: EpisodeFrames, step: int, *, columns: int = 80, rows: int | None = None) -> Text:
    """One frame as rich text: a header with the step's counts, then the (possibly scaled) map."""
    sc = frames.scenario
    scale = fit_scale(sc.width, sc.height, columns, None if rows is None else rows - HEADER_LINES)
    cells = _cells(frames, step)
    c = frames.counts(step)
    title = f"{sc.id} seed {frames.seed}" + (f" (episode {frames.index})" if frames.index is not None else "")
    text = Text(no_wrap=True, overflow="crop")
    text.append(title[:columns] + "\n", style="bold")
    status = (f"step {step}/{frames.steps}  inside {c['inside']}  evacuated {c['evacuated']}  "
              f"dead {c['casualty']}  stranded {c['stranded']}  fire {c['burning']}  "
              f"blocked {c['blocked_wall'] + c['blocked_people']}")
    text.append(status[:columns] + "\n")
    note = LEGEND if scale == 1 else f"1 char = {scale}x{scale} cells; " + LEGEND
    text.append(note[:columns] + "\n", style="dim")
    for r0 in range(0, sc.height, scale):
        for c0 in range(0, sc.width, scale):
            best = FLOOR
            for r in range(r0, min(r0 + scale, sc.height)):
                for cc in range(c0, min(c0 + scale, sc.width)):
                    mark = cells.get((r, cc), FLOOR)
                    if mark[0] > best[0]:
                        best = mark
            text.append(best[1], style=best[2] or None)
        text.append("\n")
    return text


def play_in_terminal(frames: EpisodeFrames, console: Console | None = None, *, fps: float = 10.0,
                     columns: int | None = None) -> None:
    """Play the episode frame by frame in the terminal (live), or print its first and last frames.

    In an interactive terminal each frame replaces the previous one at ``fps``
    frames per second; otherwise (a pipe, a log file) the first and last
    frames are printed, so logs stay short.
    """
    console = console or Console()
    width = columns or min(console.width, 200)
    if not console.is_terminal:
        console.print(frame_text(frames, 0, columns=width))
        console.print(frame_text(frames, frames.steps, columns=width))
        return
    from rich.live import Live

    rows = console.height - 1
    delay = 1.0 / max(0.1, fps)
    with Live(Group(frame_text(frames, 0, columns=width, rows=rows)), console=console,
              auto_refresh=False, transient=False) as live:
        for step in range(1, frames.steps + 1):
            time.sleep(delay)
            live.update(Group(frame_text(frames, step, columns=width, rows=rows)), refresh=True)


def render_record(record: RunRecord, suite: Suite, console: Console | None = None, *, fps: float = 10.0) -> None:
    """Authenticate ``record`` by replay, then play it with :func:`play_in_terminal`."""
    from .frames import episode_frames
    from .source import record_episode

    episode = record_episode(record, suite)
    play_in_terminal(episode_frames(episode.scenario, episode.record, episode.metrics), console, fps=fps)
