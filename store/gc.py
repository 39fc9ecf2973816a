"""gc: delete objects that nothing references, no live writer may need, and that are older than a grace period.

Mark: every key referenced by a ref or by any journal, finished or not
(:mod:`store.roots`). Keep also every unreferenced object stamped at or after
the start of a live writer lease of another process (what a writer put or
refreshed under its lease and may be about to reference): gc runs beside
active writers instead of waiting for them to stop. Sweep: every other
object older than the grace period by the storage's own clock. A dry run
(the default) reports what would go and changes nothing.

Why this is safe against concurrent writers: the sweep runs under the
backend's exclusive guard (locally ``gc.lock``, which every put and every new
reference holds shared for its duration; on S3 the gc lease, which new writer
leases wait for, see :mod:`store.s3_lease`). Under the guard gc reads the
roots and the live leases again and re-checks each candidate's age before
deleting it. A writer refreshes (re-stamps) an object it puts again when the
object is older than its lease, so whatever it relies on is stamped after
its lease began, and a refresh that races a sweep looks again afterwards.
The contract for writers: put an object (again) before referencing it, and
reference it within ``grace`` seconds of putting it or while its lease lives.

Every object seen is accounted for in the report: referenced, kept for a live
writer, within the grace period, or a candidate; and every candidate is
deleted, spared (referenced, refreshed or protected by the time of the
sweep) or already gone.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .roots import collect_roots

if TYPE_CHECKING:
    from .backend import Backend, WriterLease
    from .core import Store

MIN_TEMP_AGE_SECONDS = 3600.0
"""Temp files younger than this are never removed, whatever the grace period:
a ref or journal temp may belong to a write in progress (only object puts are
excluded by the gc lock)."""

DEFAULT_GRACE_SECONDS = 24 * 3600.0
"""One day: far longer than any put-to-journal delay of a run."""

LEASE_SLACK_SECONDS = 2.0
"""Objects stamped up to this long before a live lease began are kept too (stamps are whole seconds, and a
service's nodes may stamp a second apart)."""


@dataclass(frozen=True, slots=True)
class GcReport:
    """What gc found and (unless ``dry_run``) deleted; every object seen is in exactly one count.

    ``objects == marked + protected + young + len(candidates)``; with
    ``apply``, ``len(candidates) == len(deleted) + len(spared) + len(vanished)``.

    Attributes:
        dry_run: nothing was deleted.
        grace_seconds: the grace period used.
        objects: objects seen.
        marked: objects referenced by a root.
        protected: unreferenced objects kept because a live writer lease may need them.
        young: unreferenced objects kept because they are within the grace period.
        candidates: the other unreferenced objects (older than the grace period, no live lease after them).
        deleted: candidates actually deleted (empty in a dry run).
        spared: candidates kept at the sweep: referenced, refreshed or protected meanwhile.
        vanished: candidates already gone at the sweep (another gc, a repair).
        freed_bytes: bytes of the deleted objects (or of the candidates, in a dry run).
        stale_temps: temp files older than the grace period and than an hour
            (deleted unless dry run).
        live_writers: the live writer leases of other processes gc kept objects for.
        released_leases: leases of dead holders gc removed (apply only).
        ignored_roots: journals and refs gc was told to treat as gone (retention).
    """

    dry_run: bool
    grace_seconds: float
    objects: int
    marked: int
    young: int
    candidates: tuple[str, ...]
    deleted: tuple[str, ...]
    freed_bytes: int
    stale_temps: tuple[str, ...]
    protected: int = 0
    spared: tuple[str, ...] = ()
    vanished: tuple[str, ...] = ()
    live_writers: tuple[str, ...] = ()
    released_leases: tuple[str, ...] = ()
    ignored_roots: int = 0


def _cutoff(leases: list[WriterLease]) -> float | None:
    """Objects stamped at or after this are kept for a live writer (None: no live writer)."""
    return min(lease.since for lease in leases) - LEASE_SLACK_SECONDS if leases else None


def gc(store: Store, *, grace_seconds: float = DEFAULT_GRACE_SECONDS, apply: bool = False,
       lock_timeout: float = 60.0, ignore_journals: Iterable[str] = (), ignore_refs: Iterable[str] = ()) -> GcReport:
    """Collect unreferenced objects older than ``grace_seconds`` that no live writer may need.

    Args:
        store: the store.
        grace_seconds: minimum age of an object gc may delete.
        apply: actually delete; otherwise only report (dry run).
        lock_timeout: seconds to wait for the exclusive guard.
        ignore_journals, ignore_refs: roots to treat as already deleted (a
            dry run of a retention rule shows what deleting them would free).

    Raises:
        RefError / JournalError / StoreLayoutError: a root cannot be read;
            nothing is deleted.
        LockError: the exclusive guard was not obtained in time (``apply``
            only), or was lost during the sweep (S3 lease).
        ValueError: a negative grace period.
    """
    if grace_seconds < 0:
        raise ValueError(f"grace period must be >= 0 seconds, got {grace_seconds}")
    backend = store.backend
    skip_journals, skip_refs = frozenset(ignore_journals), frozenset(ignore_refs)
    marked = collect_roots(store, ignore_journals=skip_journals, ignore_refs=skip_refs).keys()
    leases = backend.writer_leases()
    cutoff = _cutoff(leases)
    now = backend.now()
    infos = list(backend.list_objects())
    candidates: list[str] = []
    sizes: dict[str, int] = {}
    young = protected = 0
    for info in infos:
        if info.key in marked:
            continue
        if cutoff is not None and info.mtime >= cutoff:
            protected += 1
        elif now - info.mtime < grace_seconds:
            young += 1
        else:
            candidates.append(info.key)
            sizes[info.key] = info.size
    stale = _stale_temps(backend, grace_seconds, now)
    marked_count = len(infos) - len(candidates) - young - protected
    common = {"protected": protected, "ignored_roots": len(skip_journals) + len(skip_refs)}
    if not apply:
        return GcReport(True, grace_seconds, len(infos), marked_count, young, tuple(candidates), (),
                        sum(sizes.values()), tuple(stale), live_writers=tuple(lease.name for lease in leases),
                        **common)
    deleted: list[str] = []
    spared: list[str] = []
    vanished: list[str] = []
    freed = 0
    with backend.exclusive_guard(lock_timeout, beside_writers=True) as still_held:
        # Writers may have added references, refreshed objects or taken leases since the first mark.
        marked = collect_roots(store, ignore_journals=skip_journals, ignore_refs=skip_refs).keys()
        leases = backend.writer_leases()
        cutoff = _cutoff(leases)
        now = backend.now()
        for key in candidates:
            info = backend.object_info(key)
            if info is None:
                vanished.append(key)
                continue
            if key in marked or now - info.mtime < grace_seconds or (cutoff is not None and info.mtime >= cutoff):
                spared.append(key)
                continue
            still_held()
            if backend.delete_object(key):
                deleted.append(key)
                freed += info.size
            else:
                vanished.append(key)
        for rel in _stale_temps(backend, grace_seconds, now):
            backend.delete_temp(rel)
        released = backend.release_dead_leases()
    return GcReport(False, grace_seconds, len(infos), marked_count, young, tuple(candidates), tuple(deleted),
                    freed, tuple(stale), spared=tuple(spared), vanished=tuple(vanished),
                    live_writers=tuple(lease.name for lease in leases), released_leases=tuple(released), **common)


def _stale_temps(backend: Backend, grace_seconds: float, now: float) -> list[str]:
    threshold = max(grace_seconds, MIN_TEMP_AGE_SECONDS)
    return [rel for rel, mtime in backend.temp_entries() if now - mtime >= threshold]
