"""fsck levels: strays, temps, torn and corrupt journals, connectivity and dangling objects."""

from __future__ import annotations

from conftest import delete_raw_object, is_s3, raw_journal, raw_object, write_raw, write_raw_journal, write_raw_object

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


def test_strays_and_temps(local_store: Store) -> None:
    """A stray file under objects/ is a problem; a leftover temp is only reported."""
    store = local_store
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
    delete_raw_object(store, lost)
    assert fsck(store).ok  # without connectivity nothing looks at references
    report = fsck(store, connectivity=True)
    assert not report.ok
    assert report.missing == (("journal j", lost),)
    assert report.dangling == (loose,)


def test_corrupt_referenced_object_is_missing(store: Store) -> None:
    """An object a ref needs that fails its checksum counts as corrupt and missing."""
    key = store.put(b"needed")
    store.refs.set("r", key)
    write_raw_object(store, key, raw_object(store, key)[:-1])
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
    """A torn local journal tail is a note (on S3, where PUTs are atomic, damage); earlier damage is a problem."""
    with store.open_journal("torn") as journal:
        journal.append({"i": 0})
    write_raw_journal(store, "torn", raw_journal(store, "torn") + b"EJ\x00")
    report = fsck(store)
    if is_s3(store):
        assert not report.ok and report.bad_roots[0][0] == "journal torn"
    else:
        assert report.ok and report.torn_journals == (("torn", 3),)
    with store.open_journal("bad") as journal:
        journal.append_many([({"i": 0}, []), ({"i": 1}, [])])
    raw = bytearray(raw_journal(store, "bad"))
    raw[12] ^= 0xFF
    write_raw_journal(store, "bad", bytes(raw))
    report = fsck(store, connectivity=True)
    assert not report.ok
    assert ("journal bad" in [what for what, _ in report.bad_roots])


def test_unknown_key_is_not_checked(store: Store) -> None:
    """fsck reports counts that match the objects present."""
    for i in range(7):
        store.put(bytes([i]))
    assert fsck(store).objects_checked == 7
    assert not store.has(key_of(b"absent"))


def test_fsck_carries_on_past_damaged_roots(store: Store) -> None:
    """A malformed ref and a corrupt journal are each reported; the intact ones are still checked."""
    good = store.put(b"good")
    store.refs.set("a-good", good)
    write_raw(store, "refs/b-broken", b"not a key\n")
    with store.open_journal("j-bad") as journal:
        journal.append_many([({"i": 0}, []), ({"i": 1}, [])])
    raw = bytearray(raw_journal(store, "j-bad"))
    raw[12] ^= 0xFF
    write_raw_journal(store, "j-bad", bytes(raw))
    lost = store.put(b"lost")
    with store.open_journal("j-good") as journal:
        journal.append({"i": 0}, keys=[lost])
    delete_raw_object(store, lost)
    report = fsck(store, connectivity=True)
    assert [what for what, _ in report.bad_roots] == ["ref b-broken", "journal j-bad"]
    assert report.missing == (("journal j-good", lost),)
