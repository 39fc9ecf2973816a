"""A run's liveness: the heartbeat it writes into its run-info, and the rule that calls it dead.

A run's ``state`` says ``running`` from its start until it ends; a run that
is killed (SIGKILL, a lost machine) or cut off from its store never gets to
say otherwise. So while it runs, a store-backed run writes a **heartbeat**
every :data:`HEARTBEAT_SECONDS`: the run-info's ``heartbeat`` field (the
time on the *store's* clock, so that readers on other machines compare it
with the same clock), and in the same beat it renews its writer and journal
leases (:meth:`store.Store.keep_alive`).

**The staleness rule.** A run whose run-info says ``running`` is shown as
``dead`` once its last heartbeat (for a run-info written before heartbeats
existed, its ``started`` time) is :data:`STALE_SECONDS` or more behind the
store's clock. That is three missed beats, and the TTL of the run's S3
leases: when a run is called dead its leases are stale too, and the next
writer or gc takes them over without waiting further. Nothing is judged by a
pid.

Each beat on S3 costs a handful of requests (one listing for the clock, the
run-info object, the ref's compare-and-swap, the lease renewals) and leaves
one superseded run-info object of about 1 KB, which gc collects after its
grace period.
"""

from __future__ import annotations

import calendar
import threading
import time
from typing import Any

from .run_info import RunInfo, run_info_ref

HEARTBEAT_SECONDS = 60.0
"""How often a running run writes its heartbeat and renews its leases."""
STALE_SECONDS = 180.0
"""A running run without a heartbeat for this long (store clock) is dead; equal to the S3 lease TTL."""
DEAD = "dead"


def store_time(store: Any) -> str:
    """The store's clock now, as a run-info time (ISO 8601 UTC to the second)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(store.now()))


def seconds_of(stamp: str) -> float:
    """A run-info time as seconds since the epoch."""
    return float(calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")))


def last_beat(info: RunInfo) -> str:
    """The run's last sign of life: its heartbeat, else (a run-info from before heartbeats) its start."""
    return info.heartbeat or info.started


def effective_state(info: RunInfo, now: float) -> str:
    """``info.state``, except ``dead`` for a running run whose last heartbeat is stale at ``now`` (store clock)."""
    if info.state == "running" and now - seconds_of(last_beat(info)) >= STALE_SECONDS:
        return DEAD
    return info.state


def describe_liveness(info: RunInfo, now: float) -> str:
    """One line for ``runs show``: how long ago the run last beat, and what that makes it."""
    ago = max(0, int(now - seconds_of(last_beat(info))))
    what = "heartbeat" if info.heartbeat else "start (no heartbeat recorded)"
    state = effective_state(info, now)
    if state == DEAD:
        return (f"dead: its last {what} was {ago} s ago (a running run is dead after {STALE_SECONDS:g} s "
                "without one)")
    if info.state == "running":
        return f"alive: its last {what} was {ago} s ago"
    return f"{info.state}: its last {what} was {ago} s ago"


def record_heartbeat(store: Any, run: str, *, attempts: int = 8) -> bool:
    """Write a heartbeat into the run-info of ``run`` if it says ``running``; whether one was written.

    The ref moves by compare-and-swap from the run-info just read, so an
    update the run itself makes at the same time is never lost: the loser
    reads again.
    """
    from emberbench.store import RefConflictError, RefError

    from .run_info import _readable

    ref = run_info_ref(run)
    for _ in range(attempts):
        try:
            old = store.refs.get(ref)
        except RefError:
            return False  # no run-info (yet) or a damaged ref: nothing to beat into
        info = _readable(store, old)
        if info is None or info.run != run or info.state != "running":
            return False
        beat = store_time(store)
        if info.heartbeat is not None and beat <= info.heartbeat:
            return False
        try:
            store.refs.compare_and_swap(ref, old, store.put(info.replace(heartbeat=beat).to_bytes()))
            return True
        except RefConflictError:
            continue
    return False


class Heartbeat:
    """A thread that beats for one run until stopped (see the module docstring).

    Args:
        store: the run's store.
        run: the run's name.
        journal: the run's journal writer (its lease is renewed too).
        seconds: the interval (default :data:`HEARTBEAT_SECONDS`).
    """

    def __init__(self, store: Any, run: str, journal: Any, *, seconds: float | None = None) -> None:
        self.store, self.run, self.journal = store, run, journal
        self.seconds = HEARTBEAT_SECONDS if seconds is None else seconds
        self.beats = 0
        self.failure: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"emberbench-heartbeat-{run[4:12]}", daemon=True)

    def start(self) -> Heartbeat:
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(self.seconds):
            try:
                self.beat()
            except Exception as exc:  # noqa: BLE001 - a missed beat is not the run's failure; the next one retries
                self.failure = " ".join(str(exc).split())[:300]

    def beat(self) -> None:
        """One heartbeat: renew the leases, then record the time in the run-info."""
        self.store.keep_alive()
        self.journal.keep_alive()
        if record_heartbeat(self.store, self.run):
            self.beats += 1

    def stop(self) -> None:
        """Stop beating (waits for a beat in progress to end)."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=120)


__all__ = ["DEAD", "HEARTBEAT_SECONDS", "STALE_SECONDS", "Heartbeat", "describe_liveness", "effective_state",
           "last_beat", "record_heartbeat", "seconds_of", "store_time"]
