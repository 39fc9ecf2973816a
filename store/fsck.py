"""fsck: check a store at increasing levels, and quarantine what is corrupt.

Levels (each includes the ones before):

1. **frames** (always): every object is read in pieces (never whole) and its
   frame, header key and blake3 checksum are checked; entries in ``objects/``
   that are not object names are strays; every ref and journal is read and
   each one that cannot be is reported (fsck carries on past it); leftovers
   of interrupted writes are listed.
2. **verify_data**: every object's content is re-hashed with SHA-256 and
   compared with its key.
3. **connectivity**: each key the readable refs and journals reference must
   be stored and intact; stored objects that no root references are listed
   as dangling (what gc would collect after the grace period). This level is
   independent of level 2.

Corrupt objects are moved to ``quarantine/`` (never deleted), under the
exclusive guard so that no put is in progress for them. A later put of the
same bytes restores the object. fsck works the same on every backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import IntegrityError, LockError, ObjectNotFoundError, StoreError

if TYPE_CHECKING:
    from .core import Store


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
        objects_checked: objects read.
        corrupt: objects that failed, with their quarantine path if moved.
        stray_files: entries under ``objects/`` that are not object names.
        temp_files: leftovers of interrupted writes (harmless; gc removes old ones).
        bad_roots: refs or journals that cannot be read, as ``(what, reason)``.
        torn_journals: ``(journal, bytes)`` for journals with a torn tail (harmless).
        missing: ``(root, key)`` for referenced keys that are not stored intact.
        dangling: stored keys that no root references.
        quarantine_files: entries already in ``quarantine/``.
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


def fsck(store: Store, *, verify_data: bool = False, connectivity: bool = False, quarantine: bool = True,
         lock_timeout: float = 30.0) -> FsckReport:
    """Check ``store``; see the module docstring for the levels.

    Args:
        store: the store to check.
        verify_data: re-hash every object's content against its key.
        connectivity: check that refs and journals resolve, and list dangling objects.
        quarantine: move corrupt objects to ``quarantine/``.
        lock_timeout: seconds to wait for the exclusive guard before quarantining.

    Returns:
        The report; fsck raises only if the store itself cannot be listed.
    """
    levels = ["frames"] + (["verify-data"] if verify_data else []) + (["connectivity"] if connectivity else [])
    backend = store.backend
    keys = [info.key for info in backend.list_objects()]
    failures: dict[str, str] = {}
    for key in keys:
        try:
            store.check(key, verify_data=verify_data)
        except IntegrityError as exc:
            failures[key] = exc.reason
        except ObjectNotFoundError:
            continue  # removed by gc since the listing
        except StoreError as exc:
            failures[key] = str(exc)
    corrupt = _quarantine(store, failures, verify_data, lock_timeout) if quarantine else tuple(
        CorruptObject(k, r, None) for k, r in sorted(failures.items())
    )
    bad_roots: list[tuple[str, str]] = []
    root_keys: list[tuple[str, str]] = []
    for name in store.refs.names():
        try:
            root_keys.append((f"ref {name}", store.refs.get(name)))
        except StoreError as exc:
            if getattr(exc, "reason", "") != "no such ref":
                bad_roots.append((f"ref {name}", getattr(exc, "reason", str(exc))))
    torn: list[tuple[str, int]] = []
    for name in store.journal_names():
        try:
            state = store.read_journal(name)
        except StoreError as exc:
            if getattr(exc, "reason", "") != "no such journal":
                bad_roots.append((f"journal {name}", getattr(exc, "reason", str(exc))))
            continue
        if state.torn_bytes:
            torn.append((name, state.torn_bytes))
        root_keys.extend((f"journal {name}", key) for key in sorted(state.referenced_keys()))
    missing: list[tuple[str, str]] = []
    dangling: tuple[str, ...] = ()
    if connectivity:
        intact = set(keys) - set(failures)
        missing = [(root, key) for root, key in root_keys if key not in intact]
        marked = {key for _, key in root_keys}
        dangling = tuple(k for k in sorted(intact) if k not in marked)
    return FsckReport(
        levels=tuple(levels),
        objects_checked=len(keys),
        corrupt=corrupt,
        stray_files=tuple(backend.stray_entries()),
        temp_files=tuple(rel for rel, _ in backend.temp_entries()),
        bad_roots=tuple(bad_roots),
        torn_journals=tuple(torn),
        missing=tuple(missing),
        dangling=dangling,
        quarantine_files=backend.quarantine_count(),
    )


def find_temp_files(store: Store) -> list[str]:
    """Leftovers of interrupted writes, relative to the store root."""
    return [rel for rel, _ in store.backend.temp_entries()]


def _quarantine(store: Store, failures: dict[str, str], verify_data: bool,
                lock_timeout: float) -> tuple[CorruptObject, ...]:
    if not failures:
        return ()
    moved: list[CorruptObject] = []
    try:
        with store.backend.exclusive_guard(lock_timeout) as still_held:
            for key, reason in sorted(failures.items()):
                still_held()
                moved.append(CorruptObject(key, reason, _move_if_still_corrupt(store, key, verify_data)))
    except LockError:
        done = {c.key for c in moved}
        moved += [CorruptObject(k, r, None) for k, r in sorted(failures.items()) if k not in done]
    return tuple(moved)


def _move_if_still_corrupt(store: Store, key: str, verify_data: bool) -> str | None:
    # Re-read under the guard: a put may have replaced the object since the scan.
    try:
        store.check(key, verify_data=verify_data)
        return None
    except ObjectNotFoundError:
        return None
    except IntegrityError:
        pass
    return store.backend.quarantine_object(key)
