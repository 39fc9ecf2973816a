"""fsck: check a store at increasing levels, and quarantine what is corrupt.

Levels (each includes the ones before):

1. **frames** (always): every object file is read whole and its frame, header
   key and blake3 checksum are checked; files in ``objects/`` that are not
   object names are strays; temp files left by crashed writers are reported.
2. **verify_data**: every object's content is re-hashed with SHA-256 and
   compared with its key.
3. **connectivity**: every ref and every unfinished journal is read; each key
   they reference must be stored and intact; stored objects that no root
   references are listed as dangling (what gc would collect after the grace
   period). This level is independent of level 2.

Corrupt objects are moved to ``quarantine/`` (never deleted), under the gc
lock so that no put is in progress for them. A later put of the same bytes
restores the object.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from . import _fs, lock
from .disk import Store
from .errors import IntegrityError, JournalError, LockError, ObjectNotFoundError, RefError, StoreIOError
from .keys import validate_key
from .roots import collect_roots


@dataclass(frozen=True, slots=True)
class CorruptObject:
    """One object that failed a check, and where it went."""

    key: str
    reason: str
    quarantined_to: str | None


@dataclass(frozen=True, slots=True)
class FsckReport:
    """What fsck found. ``ok`` is false for anything that threatens data.

    Attributes:
        levels: the levels that ran (``"frames"``, ``"verify-data"``, ``"connectivity"``).
        objects_checked: object files read.
        corrupt: objects that failed, with their quarantine path if moved.
        stray_files: files under ``objects/`` that are not object names.
        temp_files: temp files left by interrupted writes (harmless; gc removes old ones).
        bad_roots: refs or journals that cannot be read, as ``(what, reason)``.
        torn_journals: ``(journal, bytes)`` for journals with a torn tail (harmless).
        missing: ``(root, key)`` for referenced keys that are not stored intact.
        dangling: stored keys that no root references.
        quarantine_files: files already in ``quarantine/``.
    """

    levels: tuple[str, ...]
    objects_checked: int
    corrupt: tuple[CorruptObject, ...]
    stray_files: tuple[str, ...]
    temp_files: tuple[str, ...]
    bad_roots: tuple[tuple[str, str], ...]
    torn_journals: tuple[tuple[str, int], ...]
    missing: tuple[tuple[str, str], ...]
    dangling: tuple[str, ...]
    quarantine_files: int

    @property
    def ok(self) -> bool:
        """True when no object is corrupt, stray, unreadable or missing."""
        return not (self.corrupt or self.stray_files or self.bad_roots or self.missing)


def fsck(
    store: Store,
    *,
    verify_data: bool = False,
    connectivity: bool = False,
    quarantine: bool = True,
    lock_timeout: float = 30.0,
) -> FsckReport:
    """Check ``store``; see the module docstring for the levels.

    Args:
        store: the store to check.
        verify_data: re-hash every object's content against its key.
        connectivity: check that refs and unfinished journals resolve, and
            list dangling objects.
        quarantine: move corrupt objects to ``quarantine/``.
        lock_timeout: seconds to wait for the gc lock before quarantining.

    Returns:
        The report; fsck raises only if the store itself cannot be listed.
    """
    levels = ["frames"] + (["verify-data"] if verify_data else []) + (["connectivity"] if connectivity else [])
    keys, strays = _scan_objects(store)
    failures: dict[str, str] = {}
    for key in keys:
        try:
            store.get(key, verify_data=verify_data)
        except IntegrityError as exc:
            failures[key] = exc.reason
        except ObjectNotFoundError:
            continue  # removed by gc since the scan
    corrupt = _quarantine(store, failures, verify_data, lock_timeout) if quarantine else tuple(
        CorruptObject(k, r, None) for k, r in sorted(failures.items())
    )
    bad_roots: list[tuple[str, str]] = []
    torn: list[tuple[str, int]] = []
    for name in store.journal_names():
        try:
            state = store.read_journal(name)
        except JournalError as exc:
            bad_roots.append((f"journal {name}", exc.reason))
            continue
        if state.torn_bytes:
            torn.append((name, state.torn_bytes))
    missing: list[tuple[str, str]] = []
    dangling: tuple[str, ...] = ()
    if connectivity:
        try:
            roots = collect_roots(store)
        except (RefError, JournalError) as exc:
            bad_roots.append(("roots", str(exc)))
        else:
            intact = set(keys) - set(failures)
            for name, key in roots.refs:
                if key not in intact:
                    missing.append((f"ref {name}", key))
            for name, key in roots.journals:
                if key not in intact:
                    missing.append((f"journal {name}", key))
            marked = roots.keys()
            dangling = tuple(k for k in sorted(intact) if k not in marked)
    return FsckReport(
        levels=tuple(levels),
        objects_checked=len(keys),
        corrupt=corrupt,
        stray_files=tuple(strays),
        temp_files=tuple(find_temp_files(store)),
        bad_roots=tuple(bad_roots),
        torn_journals=tuple(torn),
        missing=tuple(missing),
        dangling=dangling,
        quarantine_files=len(os.listdir(store.layout.quarantine)),
    )


def _scan_objects(store: Store) -> tuple[list[str], list[str]]:
    """Every object key, and every file under ``objects/`` that is not one."""
    keys: list[str] = []
    strays: list[str] = []
    root = store.layout.objects
    for fanout in sorted(os.listdir(root)):
        folder = root / fanout
        if len(fanout) != 2 or fanout.strip("0123456789abcdef") or not folder.is_dir():
            strays.append(f"objects/{fanout}")
            continue
        for rest in sorted(os.listdir(folder)):
            try:
                keys.append(validate_key(fanout + rest))
            except ValueError:
                strays.append(f"objects/{fanout}/{rest}")
    return keys, strays


def find_temp_files(store: Store) -> list[str]:
    """Temp files left by interrupted writes, relative to the store root."""
    found = [f"tmp/{name}" for name in sorted(os.listdir(store.layout.tmp))]
    for folder in (store.layout.root, store.layout.journals):
        found += [
            str((folder / n).relative_to(store.root))
            for n in sorted(os.listdir(folder))
            if n.startswith(".") and n.endswith(_fs.TEMP_SUFFIX)
        ]
    for folder, _dirs, files in os.walk(store.layout.refs):
        found += [
            os.path.relpath(os.path.join(folder, n), store.root)
            for n in sorted(files)
            if n.startswith(".") and n.endswith(_fs.TEMP_SUFFIX)
        ]
    return found


def _quarantine(
    store: Store, failures: dict[str, str], verify_data: bool, lock_timeout: float
) -> tuple[CorruptObject, ...]:
    if not failures:
        return ()
    moved: list[CorruptObject] = []
    try:
        with lock.locked(store.layout.gc_lock, shared=False, timeout=lock_timeout):
            for key, reason in sorted(failures.items()):
                moved.append(CorruptObject(key, reason, _move_if_still_corrupt(store, key, verify_data)))
    except LockError:
        done = {c.key for c in moved}
        moved += [CorruptObject(k, r, None) for k, r in sorted(failures.items()) if k not in done]
    return tuple(moved)


def _move_if_still_corrupt(store: Store, key: str, verify_data: bool) -> str | None:
    # Re-read under the lock: a put may have replaced the object since the scan.
    try:
        store.get(key, verify_data=verify_data)
        return None
    except ObjectNotFoundError:
        return None
    except IntegrityError:
        pass
    source = store.layout.object_path(key)
    target = store.layout.quarantine / f"{key}.{time.time_ns()}"
    try:
        os.rename(source, target)
    except OSError as exc:
        raise StoreIOError("quarantine", str(source), exc, key=key) from exc
    _fs.fsync_dir(store.layout.quarantine, key)
    _fs.fsync_dir(source.parent, key)
    return str(target.relative_to(store.root))
