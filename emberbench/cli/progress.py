"""The progress bar of long CLI work (:class:`emberbench.evaluation.progress.Bar`), on a terminal only."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

from ..evaluation.progress import Bar


@contextlib.contextmanager
def progress_bar(description: str, *, unit: str = "episodes", enabled: bool | None = None) -> Iterator[Bar]:
    """Yield a :class:`Bar`; it draws on stderr only when stderr is a terminal.

    Off a terminal (a pipe, a log file, CI), or with ``-q``, nothing is drawn.
    """
    if enabled is None:
        from .verbosity import show_progress

        enabled = sys.stderr.isatty() and show_progress()
    bar = Bar(description, unit, enabled)
    try:
        yield bar
    finally:
        bar.close()


__all__ = ["Bar", "progress_bar"]
