"""gc: marks from refs and journals (finished or not), grace period, dry run, lock."""

from __future__ import annotations

import os
import time

import pytest
from conftest import age

from emberbench.store import JournalCorruptError, LockError, Store, gc
from emberbench.store import lock as store_lock


def _scene(store: Store) -> dict[str, str]:
    keys = {name: store.put(name.encode()) for name in ("ref", "open", "done", "old", "young")}
    store.refs.set("keep", keys["ref"])
    with store.open_journal("running") as journal:
        journal.append({"i": 0}, keys=[keys["open"]])
    with store.open_journal("finished") as journal:
        journal.append({"i": 0}, keys=[keys["done"]])
        journal.finish()
    for name in ("ref", "open", "done", "old"):
        age(store, keys[name], 7200)
    return keys


def test_dry_run_deletes_nothing(local_store: Store) -> None:
    """The default is a dry run: candidates are listed, every object stays."""
    store = local_store
    keys = _scene(store)
    report = gc(store, grace_seconds=3600)
    assert report.dry_run and report.deleted == ()
    assert set(report.candidates) == {keys["old"]}
    assert report.young == 1 and report.marked == 3 and report.objects == 5
    assert report.freed_bytes > 0
    assert all(store.has(k) for k in keys.values())


def test_apply_sweeps_only_old_unreferenced(local_store: Store) -> None:
    """With apply, old objects that no ref or journal references are deleted."""
    store = local_store
    keys = _scene(store)
    report = gc(store, grace_seconds=3600, apply=True)
    assert set(report.deleted) == {keys["old"]}
    assert sorted(store) == sorted(keys[n] for n in ("ref", "open", "done", "young"))
    assert store.get(keys["ref"]) == b"ref"


def test_grace_zero_keeps_referenced(local_store: Store) -> None:
    """Even with no grace period, referenced objects survive."""
    store = local_store
    keys = _scene(store)
    gc(store, grace_seconds=0, apply=True)
    assert sorted(store) == sorted(keys[n] for n in ("ref", "open", "done"))


def test_finished_journal_protects_until_deleted(local_store: Store) -> None:
    """gc --grace 0 --apply after a finished run keeps its records; deleting the journal frees them (issue 11)."""
    store = local_store
    keys = _scene(store)
    assert set(gc(store, grace_seconds=0, apply=True).deleted) == {keys["old"], keys["young"]}
    assert store.get(keys["done"]) == b"done"
    assert store.delete_journal("finished") is True
    assert gc(store, grace_seconds=0, apply=True).deleted == (keys["done"],)
    assert not store.has(keys["done"])


def test_reput_rescues_old_object(local_store: Store) -> None:
    """Putting an old unreferenced object again makes it young, so gc keeps it."""
    store = local_store
    key = store.put(b"old")
    age(store, key, 7200)
    store.put(b"old")
    assert gc(store, grace_seconds=3600, apply=True).deleted == ()
    assert store.has(key)


def test_stale_temps_removed(local_store: Store) -> None:
    """Temps older than the grace period (and an hour) go; fresh ones stay."""
    store = local_store
    stale = store.layout.tmp / ".a.1.00.tmp"
    fresh = store.layout.tmp / ".b.1.00.tmp"
    stale.write_bytes(b"x")
    fresh.write_bytes(b"y")
    past = time.time() - 7200
    os.utime(stale, (past, past))
    assert gc(store, grace_seconds=60).stale_temps == ("tmp/.a.1.00.tmp",)
    assert stale.exists()
    gc(store, grace_seconds=60, apply=True)
    assert not stale.exists() and fresh.exists()


def test_lock_held_elsewhere(local_store: Store) -> None:
    """gc --apply waits for the lock and fails with LockError when it cannot get it."""
    store = local_store
    key = store.put(b"x")
    age(store, key, 7200)
    with store_lock.locked(store.layout.gc_lock, shared=True):
        with pytest.raises(LockError):
            gc(store, grace_seconds=0, apply=True, lock_timeout=0.05)
        assert gc(store, grace_seconds=0).candidates == (key,)  # a dry run needs no lock
    assert store.has(key)


def test_unreadable_root_stops_gc(local_store: Store) -> None:
    """If a journal cannot be read, gc deletes nothing rather than guess its references."""
    store = local_store
    keys = _scene(store)
    with store.open_journal("running") as journal:
        journal.append({"i": 1}, keys=[keys["open"]])
    path = store.layout.journal_path("running")
    raw = bytearray(path.read_bytes())
    raw[10] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(JournalCorruptError):
        gc(store, grace_seconds=0, apply=True)
    assert len(list(store)) == 5


def test_negative_grace(local_store: Store) -> None:
    """A negative grace period is refused."""
    store = local_store
    with pytest.raises(ValueError):
        gc(store, grace_seconds=-1)


@pytest.mark.parametrize("action", ["reput", "ref", "journal"])
def test_writer_between_mark_and_sweep(local_store: Store, monkeypatch: pytest.MonkeyPatch, action: str) -> None:
    """A put or a new reference landing after gc chose its candidates, before the sweep, is respected."""
    store = local_store
    key = store.put(b"old but wanted")
    age(store, key, 7200)
    real_guard = store.backend.exclusive_guard

    def writer_then_lock(*args: object, **kwargs: object):
        if action == "reput":
            store.put(b"old but wanted")
        elif action == "ref":
            store.refs.set("late", key)
        else:
            with store.open_journal("late") as journal:
                journal.append({"i": 0}, keys=[key])
        return real_guard(*args, **kwargs)

    monkeypatch.setattr(store.backend, "exclusive_guard", writer_then_lock)
    report = gc(store, grace_seconds=3600, apply=True)
    assert report.candidates == (key,)  # chosen before the writer acted...
    assert report.deleted == () and store.get(key) == b"old but wanted"  # ...and spared


@pytest.mark.parametrize("backend", ["local", "s3"])
def test_roots_on_every_backend(request: pytest.FixtureRequest, tmp_path, backend: str) -> None:  # noqa: ANN001
    """On both backends: young objects survive, and with no grace only refs and journals (finished too) keep objects."""
    from emberbench.store import open_store

    locator = str(tmp_path / "s") if backend == "local" else request.getfixturevalue("s3_locator")
    store = open_store(locator, create=True)
    keys = {name: store.put(name.encode()) for name in ("ref", "open", "done", "loose")}
    store.refs.set("keep", keys["ref"])
    with store.open_journal("running") as journal:
        journal.append({"i": 0}, keys=[keys["open"]])
    with store.open_journal("finished") as journal:
        journal.append({"i": 0}, keys=[keys["done"]])
        journal.finish()
    assert gc(store, grace_seconds=3600, apply=True).deleted == ()
    dry = gc(store, grace_seconds=0)
    assert dry.dry_run and dry.candidates == (keys["loose"],) and store.has(keys["loose"])
    assert gc(store, grace_seconds=0, apply=True).deleted == (keys["loose"],)
    assert sorted(store) == sorted(keys[n] for n in ("ref", "open", "done"))
    store.delete_journal("finished")
    assert gc(store, grace_seconds=0, apply=True).deleted == (keys["done"],)
    store.close()
