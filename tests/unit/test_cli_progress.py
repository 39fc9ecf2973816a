"""The CLI progress display: a status line while something slow starts, then a bar with a known total."""

from __future__ import annotations

import io

from rich.console import Console

from emberbench.cli.progress import Bar


def _terminal() -> tuple[Console, io.StringIO]:
    sink = io.StringIO()
    return Console(file=sink, force_terminal=True, width=80, color_system=None), sink


def test_status_line_before_the_bar_instead_of_an_unknown_total() -> None:
    """Issue 16 (item 5): during Ray start-up the bar showed `0/?`; now a status line says what is happening,
    and the bar appears only with the first count, with its total."""
    console, sink = _terminal()
    bar = Bar("run g", "episodes", True, console=console)
    bar.status("starting Ray…")
    bar(0, 36)
    bar(36, 36)
    bar.close()
    shown = sink.getvalue()
    assert "run g: starting Ray…" in shown and "36/36" in shown and "/?" not in shown
    assert shown.index("starting Ray…") < shown.index("36/36")


def test_nothing_is_drawn_when_disabled() -> None:
    """Off a terminal (or with -q) neither the status nor the bar writes anything."""
    console, sink = _terminal()
    bar = Bar("run g", "episodes", False, console=console)
    bar.status("starting Ray…")
    bar(1, 2)
    bar.close()
    assert sink.getvalue() == ""
