"""A progress bar for long work: episodes done, rate and time left, drawn by rich on stderr.

Before the first count arrives the work may be starting something slow
(an embedded Ray instance takes seconds); :meth:`Bar.status` shows that as
a status line with a spinner instead of an empty ``0/?`` bar. The command
line (:mod:`emberbench.cli.progress`) and :func:`emberbench.evaluate` draw
the same bar; each decides whether to draw it at all.
"""

from __future__ import annotations

import contextlib
from typing import Any


class Bar:
    """``bar(done, total)`` updates the bar; ``bar.status(text)`` shows a status line until the first count.

    Off a terminal, or with ``-q``, both do nothing.
    """

    def __init__(self, description: str, unit: str, enabled: bool, console: Any = None) -> None:
        self.description, self.unit, self.enabled = description, unit, enabled
        self._console = console  # a rich Console; None: one on stderr, made when first needed
        self._stack = contextlib.ExitStack()
        self._progress: Any = None
        self._status: Any = None
        self._task: Any = None

    def status(self, text: str) -> None:
        """Show ``text`` (e.g. ``starting Ray…``) on a transient status line."""
        if not self.enabled or self._progress is not None:
            return
        if self._status is None:
            from rich.status import Status

            self._status = Status(f"{self.description}: {text}", console=self._stderr())
            self._status.start()
        else:
            self._status.update(f"{self.description}: {text}")

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self._progress is None:
            self._end_status()
            self._progress = self._stack.enter_context(self._new_progress())
            # Work resumed from an earlier run must not count towards the rate: the bar starts at ``done``.
            self._task = self._progress.add_task(self.description, total=total, completed=done)
            return
        self._progress.update(self._task, completed=done, total=total)

    def _end_status(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def close(self) -> None:
        """Remove the status line and stop the bar."""
        self._end_status()
        self._stack.close()

    def _stderr(self) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=True)
        return self._console

    def _new_progress(self) -> Any:
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn,
                                   TimeRemainingColumn)
        from rich.text import Text

        unit = self.unit

        class RateColumn(ProgressColumn):
            """Items per second, measured by rich over the recent updates."""

            def render(self, task: Any) -> Text:
                speed = task.finished_speed or task.speed
                return Text("   -  /s" if speed is None else f"{speed:6.1f} {unit}/s")

        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), RateColumn(),
                   TextColumn("left"), TimeRemainingColumn())
        return Progress(*columns, console=self._stderr())


__all__ = ["Bar"]
