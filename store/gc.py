"""gc: delete objects that nothing references and that are older than a grace period.

Mark: every key referenced by a ref or by an entry of an unfinished journal
(:mod:`store.roots`). Sweep: every other object whose mtime is older than the
grace period. A dry run (the default) reports what would go and changes
nothing.

Why this is safe against concurrent writers: the sweep runs under the gc lock
held exclusively, and every put holds it shared, so no put is between
"found the object" and "refreshed its mtime" while gc looks. Under the lock gc
reads the roots again and re-checks each candidate's mtime before unlinking.
An object a writer put (or re-put) less than ``grace`` seconds ago is
therefore never deleted, and one referenced by a root at sweep time is never
deleted. The contract for writers: reference an object (ref or journal entry)
within ``grace`` seconds of putting it, and finish a journal only after its
results are reachable from a ref.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from . import _fs, lock
from .disk import Store
from .fsck import find_temp_files
from .roots import collect_roots

MIN_TEMP_AGE_SECONDS = 3600.0
"""Temp files younger than this are never removed, whatever the grace period:
a ref or journal temp may belong to a write in progress (only object puts are
excluded by the gc lock)."""

DEFAULT_GRACE_SECONDS = 24 * 3600.0
"""One day: far longer than any put-to-journal delay of a run, and than
plausible clock skew between NFS clients and server."""


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


def gc(
    store: Store,
    *,
    grace_seconds: float = DEFAULT_GRACE_SECONDS,
    apply: bool = False,
    lock_timeout: float = 60.0,
) -> GcReport:
    """Collect unreferenced objects older than ``grace_seconds``.

    Args:
        store: the store.
        grace_seconds: minimum age (by mtime) of an object gc may delete.
        apply: actually delete; otherwise only report (dry run).
        lock_timeout: seconds to wait for the gc lock.

    Raises:
        RefError / JournalError: a root cannot be read; nothing is deleted.
        LockError: the gc lock was not obtained in time (``apply`` only).
        ValueError: a negative grace period.
    """
    if grace_seconds < 0:
        raise ValueError(f"grace period must be >= 0 seconds, got {grace_seconds}")
    marked = collect_roots(store).keys()
    now = time.time()
    keys = list(store)
    candidates: list[str] = []
    young = 0
    for key in keys:
        if key in marked:
            continue
        age = _age(store, key, now)
        if age is None:
            continue
        if age >= grace_seconds:
            candidates.append(key)
        else:
            young += 1
    stale = _stale_temps(store, grace_seconds, now)
    if not apply:
        freed = sum(_file_size(store.layout.object_path(k)) for k in candidates)
        return GcReport(True, grace_seconds, len(keys), len(keys) - len(candidates) - young,
                        young, tuple(candidates), (), freed, tuple(stale))
    deleted: list[str] = []
    freed = 0
    with lock.locked(store.layout.gc_lock, shared=False, timeout=lock_timeout):
        # Writers may have added references since the first mark.
        marked = collect_roots(store).keys()
        now = time.time()
        touched: set[str] = set()
        for key in candidates:
            age = _age(store, key, now)
            if key in marked or age is None or age < grace_seconds:
                continue
            path = store.layout.object_path(key)
            size = _file_size(path)
            try:
                os.unlink(path)
            except FileNotFoundError:
                continue
            deleted.append(key)
            freed += size
            touched.add(key[:2])
        for fanout in sorted(touched):
            _fs.fsync_dir(store.layout.objects / fanout)
        for rel in _stale_temps(store, grace_seconds, now):
            _fs.remove_quietly(store.root / rel)
    return GcReport(False, grace_seconds, len(keys), len(keys) - len(candidates) - young,
                    young, tuple(candidates), tuple(deleted), freed, tuple(stale))


def _age(store: Store, key: str, now: float) -> float | None:
    try:
        return now - os.stat(store.layout.object_path(key)).st_mtime
    except FileNotFoundError:
        return None


def _file_size(path: os.PathLike[str]) -> int:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0


def _stale_temps(store: Store, grace_seconds: float, now: float) -> list[str]:
    threshold = max(grace_seconds, MIN_TEMP_AGE_SECONDS)
    stale = []
    for rel in find_temp_files(store):
        try:
            if now - os.stat(store.root / rel).st_mtime >= threshold:
                stale.append(rel)
        except FileNotFoundError:
            continue
    return stale
