"""Collecting what earlier in-process commands dropped, at a cost that does not grow with the session."""

from __future__ import annotations

import gc


def collect_dropped() -> None:
    """Collect unreachable objects now, then set every survivor aside from later collections.

    A store that an in-process command opened and dropped may sit in a reference cycle, holding a writer lease
    file until the cycle collector frees it; tests that compare file snapshots call this first so that the file
    does not vanish between two snapshots. A full collection walks every tracked object of the process: on this
    project's 2-core machines about 0.1 s a call late in a session, more than half of the quick loop's CPU when
    every snapshot paid it. Freezing the survivors (``gc.freeze``) keeps them out of later collections, so the
    next call walks only what was made since. Frozen objects are still freed by reference counting; only a cycle
    among them would outlive the session, which costs memory, never a wrong snapshot.
    """
    gc.collect()
    gc.freeze()
