"""fsck levels: strays, temps, torn and corrupt journals, connectivity and dangling objects."""

from __future__ import annotations

import os

from emberbench.store import Store, fsck, key_of


def test_clean_store(store: Store) -> None:
    """A store with refs and journals passes every level with nothing to report."""
    key = store.put(b"r")
    store.refs.set("r", key)
    with store.open_journal("j") as journal:
        journal.append({"i": 0}, keys=[key])
    report = fsck(store, verify_data=True, connectivity=True)
    assert report.ok and report.objects_checked == 1 and report.dangling == ()
    assert report.levels == ("frames", "verify-data", "connectivity")


def test_strays_and_temps(store: Store) -> None:
    """A stray file under objects/ is a problem; a leftover temp is only reported."""
    store.put(b"x")
    (store.layout.tmp / ".abc.1.ff.tmp").write_bytes(b"partial")
    report = fsck(store)
    assert report.ok and report.temp_files == ("tmp/.abc.1.ff.tmp",)
    (store.layout.objects / "zz").mkdir()
    (store.layout.objects / "00" / "short").write_bytes(b"")
    report = fsck(store)
    assert not report.ok and report.stray_files == ("objects/00/short", "objects/zz")


def test_connectivity_missing_and_dangling(store: Store) -> None:
    """A ref or unfinished journal pointing at a lost object is missing; unreferenced ones dangle."""
    kept, lost, loose = store.put(b"kept"), store.put(b"lost"), store.put(b"loose")
    store.refs.set("r", kept)
    with store.open_journal("j") as journal:
        journal.append({"i": 0}, keys=[lost])
    os.unlink(store.layout.object_path(lost))
    assert fsck(store).ok  # without connectivity nothing looks at references
    report = fsck(store, connectivity=True)
    assert not report.ok
    assert report.missing == (("journal j", lost),)
    assert report.dangling == (loose,)


def test_corrupt_referenced_object_is_missing(store: Store) -> None:
    """An object a ref needs that fails its checksum counts as corrupt and missing."""
    key = store.put(b"needed")
    store.refs.set("r", key)
    path = store.layout.object_path(key)
    os.chmod(path, 0o644)
    path.write_bytes(path.read_bytes()[:-1])
    report = fsck(store, connectivity=True, quarantine=False)
    assert [c.key for c in report.corrupt] == [key]
    assert report.missing == (("ref r", key),)


def test_finished_journal_is_a_root_until_deleted(store: Store) -> None:
    """Objects referenced by a finished journal are kept; deleting the journal makes them dangle (issue 11)."""
    key = store.put(b"episode")
    with store.open_journal("j") as journal:
        journal.append({"i": 0}, keys=[key])
        journal.finish()
    assert fsck(store, connectivity=True).dangling == ()
    assert store.delete_journal("j") is True
    assert fsck(store, connectivity=True).dangling == (key,)


def test_torn_and_corrupt_journals(store: Store) -> None:
    """A torn journal tail is a note; damage before the end is a problem."""
    with store.open_journal("torn") as journal:
        journal.append({"i": 0})
    path = store.layout.journal_path("torn")
    path.write_bytes(path.read_bytes() + b"EJ\x00")
    report = fsck(store)
    assert report.ok and report.torn_journals == (("torn", 3),)
    with store.open_journal("bad") as journal:
        journal.append_many([({"i": 0}, []), ({"i": 1}, [])])
    bad = store.layout.journal_path("bad")
    raw = bytearray(bad.read_bytes())
    raw[12] ^= 0xFF
    bad.write_bytes(bytes(raw))
    report = fsck(store, connectivity=True)
    assert not report.ok
    assert report.bad_roots[0][0] == "journal bad"


def test_unknown_key_is_not_checked(store: Store) -> None:
    """fsck reports counts that match the objects present."""
    for i in range(7):
        store.put(bytes([i]))
    assert fsck(store).objects_checked == 7
    assert not store.has(key_of(b"absent"))
