"""gc: delete objects that nothing references and that are older than a grace period.

Mark: every key referenced by a ref or by any journal, finished or not
(:mod:`store.roots`). Sweep: every other object older than the grace period
by the storage's own clock. A dry run (the default) reports what would go and
changes nothing.

Why this is safe against concurrent writers: the sweep runs under the
backend's exclusive guard, and every put and every new reference holds the
writer guard (locally ``gc.lock`` shared/exclusive; on S3 writer leases and
the gc lease, see :mod:`store.s3_lease`), so no writer is between "found the
object" and "referenced it or refreshed its age" while gc deletes. Under the
guard gc reads the roots again and re-checks each candidate's age before
deleting it. An object a writer put (or re-put) less than ``grace`` seconds
ago is therefore never deleted, and one referenced by a root at sweep time is
never deleted. The contract for writers: reference an object (ref or journal
entry) within ``grace`` seconds of putting it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .roots import collect_roots

if TYPE_CHECKING:
    from .core import Store

MIN_TEMP_AGE_SECONDS = 3600.0
"""Temp files younger than this are never removed, whatever the grace period:
a ref or journal temp may belong to a write in progress (only object puts are
excluded by the gc lock)."""

DEFAULT_GRACE_SECONDS = 24 * 3600.0
"""One day: far longer than any put-to-journal delay of a run."""


@dataclass(frozen=True, slots=True)
class GcReport:
    """What gc found and (unless ``dry_run``) deleted.

    Attributes:
        dry_run: nothing was deleted.
        grace_seconds: the grace period used.
        objects: objects seen.
        marked: objects referenced by a root.
        young: unreferenced objects kept because they are within the grace period.
        candidates: unreferenced objects older than the grace period.
        deleted: objects actually deleted (empty in a dry run).
        freed_bytes: bytes of the deleted objects (or of the candidates, in a dry run).
        stale_temps: temp files older than the grace period and than an hour
            (deleted unless dry run).
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


def gc(store: Store, *, grace_seconds: float = DEFAULT_GRACE_SECONDS, apply: bool = False,
       lock_timeout: float = 60.0) -> GcReport:
    """Collect unreferenced objects older than ``grace_seconds``.

    Args:
        store: the store.
        grace_seconds: minimum age of an object gc may delete.
        apply: actually delete; otherwise only report (dry run).
        lock_timeout: seconds to wait for the exclusive guard.

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
    marked = collect_roots(store).keys()
    now = backend.now()
    infos = list(backend.list_objects())
    candidates: list[str] = []
    sizes: dict[str, int] = {}
    young = 0
    for info in infos:
        if info.key in marked:
            continue
        if now - info.mtime >= grace_seconds:
            candidates.append(info.key)
            sizes[info.key] = info.size
        else:
            young += 1
    stale = _stale_temps(store, grace_seconds, now)
    marked_count = len(infos) - len(candidates) - young
    if not apply:
        return GcReport(True, grace_seconds, len(infos), marked_count, young, tuple(candidates), (),
                        sum(sizes.values()), tuple(stale))
    deleted: list[str] = []
    freed = 0
    with backend.exclusive_guard(lock_timeout) as still_held:
        # Writers may have added references since the first mark.
        marked = collect_roots(store).keys()
        now = backend.now()
        for key in candidates:
            info = backend.object_info(key)
            if key in marked or info is None or now - info.mtime < grace_seconds:
                continue
            still_held()
            if backend.delete_object(key):
                deleted.append(key)
                freed += info.size
        for rel in _stale_temps(store, grace_seconds, now):
            backend.delete_temp(rel)
    return GcReport(False, grace_seconds, len(infos), marked_count, young, tuple(candidates), tuple(deleted),
                    freed, tuple(stale))


def _stale_temps(store: Store, grace_seconds: float, now: float) -> list[str]:
    threshold = max(grace_seconds, MIN_TEMP_AGE_SECONDS)
    return [rel for rel, mtime in store.backend.temp_entries() if now - mtime >= threshold]
