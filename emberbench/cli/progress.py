"""A progress bar for long CLI work: episodes done, rate and time left, on a terminal only."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Any


@contextlib.contextmanager
def progress_bar(description: str, *, unit: str = "episodes", enabled: bool | None = None
                 ) -> Iterator[Callable[[int, int], None]]:
    """Yield a ``callback(done, total)``; draws a rich bar on stderr when stderr is a terminal.

    Off a terminal (a pipe, a log file, CI), or with ``-q``, nothing is drawn.
    """
    if enabled is None:
        from .verbosity import show_progress

        enabled = sys.stderr.isatty() and show_progress()
    if not enabled:
        yield lambda done, total: None
        return
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn,
                               TimeRemainingColumn)
    from rich.text import Text

    class RateColumn(ProgressColumn):
        """Items per second, measured by rich over the recent updates."""

        def render(self, task: Any) -> Text:
            speed = task.finished_speed or task.speed
            return Text("   -  /s" if speed is None else f"{speed:6.1f} {unit}/s")

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), RateColumn(),
               TextColumn("left"), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True)) as bar:
        task = bar.add_task(description, total=None)
        started = [False]

        def update(done: int, total: int) -> None:
            if not started[0]:
                # Work resumed from an earlier run must not count towards the rate.
                bar.reset(task, total=total, completed=done)
                started[0] = True
            else:
                bar.update(task, completed=done, total=total)

        yield update
