"""What is special to the S3 backend: locators, segments, leases, conditional writes, copying stores."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from conftest import raw_object

from emberbench.store import (
    JournalCorruptError,
    JournalError,
    LocatorError,
    LockError,
    RefConflictError,
    Store,
    StoreFormatError,
    fsck,
    gc,
    open_store,
)
from emberbench.store.copy import copy_store
from emberbench.store.locator import parse_s3
from emberbench.store.s3_journal import piece_metadata, segment_key


@pytest.mark.parametrize(
    ("locator", "message"),
    [
        ("s3://Bad_Bucket/x", "invalid bucket name"),
        ("s3://bucket/a/../b", "prefix"),
        ("s3://bucket/p?color=red", "unknown or repeated option"),
        ("s3://bucket/p?endpoint=ftp://host", "http:// or https://"),
        ("s3://bucket/p?endpoint=http://user:pw@host:9000", "must not carry credentials"),
        ("gs://bucket/p", "unsupported scheme"),
    ],
)
def test_bad_locators_refused(locator: str, message: str) -> None:
    """Malformed or unsupported locators are refused with one line, never taken as a folder (issue 14)."""
    with pytest.raises(LocatorError, match=message):
        open_store(locator)


def test_s3_locator_is_not_a_local_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression (issue 14): ``s3://...`` was silently a local folder named ``s3:``; now it is S3 or an error."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(Exception) as info:
        open_store("s3://no-such-bucket-here/prefix?endpoint=http://127.0.0.1:9", create=True)
    assert not (tmp_path / "s3:").exists()
    assert "s3:" not in str(info.value) or "s3://" in str(info.value)


def test_locator_round_trip(store: Store) -> None:
    """A store's locator reopens the same store, and carries no secret."""
    key = store.put(b"x")
    again = open_store(store.locator)
    assert again.get(key) == b"x" and again.locator == store.locator
    assert "testing" not in store.locator
    if store.locator.startswith("s3://"):
        parsed = parse_s3(store.locator)
        assert parsed.endpoint is not None and parsed.endpoint.startswith("http://127.0.0.1:")


def test_open_missing_and_nonempty_prefix(s3_locator: str) -> None:
    """Opening an empty prefix is refused without create; a prefix holding foreign objects is never turned into a store."""
    with pytest.raises(StoreFormatError, match="not a store"):
        open_store(s3_locator)
    st = open_store(s3_locator, create=True)
    st.backend.client.put_object(Bucket=st.backend.bucket, Key=st.backend.prefix + "other/file", Body=b"x")
    foreign = s3_locator.replace("?", "/other?")
    with pytest.raises(StoreFormatError, match="not a store"):
        open_store(foreign, create=False)
    st.backend.client.delete_object(Bucket=st.backend.bucket, Key=st.backend.prefix + "format")
    with pytest.raises(StoreFormatError, match="not a store"):
        open_store(s3_locator, create=True)


def test_missing_segment_detected(s3_locator: str) -> None:
    """A journal with a missing segment is corrupt (a gap), and so is a segment with a flipped bit."""
    st = open_store(s3_locator, create=True)
    with st.open_journal("run") as journal:
        for i in range(4):
            journal.append({"index": i})
    client, bucket = st.backend.client, st.backend.bucket
    key2 = segment_key(st.backend, "run", 2)
    good = client.get_object(Bucket=bucket, Key=key2)["Body"].read()
    client.delete_object(Bucket=bucket, Key=key2)
    with pytest.raises(JournalCorruptError, match="segment 2 is missing"):
        st.read_journal("run")
    bad = bytearray(good)
    bad[9] ^= 0x04
    client.put_object(Bucket=bucket, Key=key2, Body=bytes(bad))
    with pytest.raises(JournalCorruptError, match="segment 2"):
        st.read_journal("run")
    client.put_object(Bucket=bucket, Key=key2, Body=good)
    with pytest.raises(JournalCorruptError, match="segment 2 lacks the journal and number"):
        st.read_journal("run")  # the right bytes, uploaded plainly: no longer provably in their place
    client.put_object(Bucket=bucket, Key=key2, Body=good, Metadata=piece_metadata("run", 2))
    assert [e.data["index"] for e in st.read_journal("run").entries] == [0, 1, 2, 3]


def test_segments_are_never_overwritten(s3_locator: str) -> None:
    """A writer whose segment number is taken (another writer appended) gets a conflict, not an overwrite."""
    st = open_store(s3_locator, create=True)
    journal = st.open_journal("run")
    journal.append({"index": 0})
    st.backend.client.put_object(Bucket=st.backend.bucket, Key=segment_key(st.backend, "run", 2), Body=b"x")
    with pytest.raises(JournalError, match="another writer"):
        journal.append({"index": 1})
    journal.close()


def test_racing_ref_updates_lose_nothing(s3_locator: str) -> None:
    """Four threads each add their keys to one ref's list with compare-and-swap: every addition survives."""
    st = open_store(s3_locator, create=True)
    import json

    def add(worker: int) -> None:
        mine = open_store(s3_locator)
        for i in range(4):
            def change(old: str | None) -> str:
                items = json.loads(mine.get(old)) if old else []
                return mine.put(json.dumps(sorted([*items, f"{worker}-{i}"])).encode())

            mine.refs.update("list", change, attempts=200)

    threads = [threading.Thread(target=add, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    final = json.loads(st.get(st.refs.get("list")))
    assert sorted(final) == sorted(f"{w}-{i}" for w in range(4) for i in range(4))


def test_racing_puts_one_object(s3_locator: str) -> None:
    """Eight threads put the same large object at once: one creates it, all succeed, fsck is clean."""
    st = open_store(s3_locator, create=True)
    data = bytes(range(256)) * 8192
    keys: list[str] = []
    threads = [threading.Thread(target=lambda: keys.append(open_store(s3_locator).put(data))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(keys) == 8 and len(set(keys)) == 1
    assert st.get(keys[0], verify_data=True) == data
    assert fsck(st, verify_data=True).ok


def test_writer_waits_for_gc_lease(s3_locator: str) -> None:
    """While gc holds its lease, a writer cannot take a writer lease (it waits, then gives up)."""
    from emberbench.store import s3_lease

    st = open_store(s3_locator, create=True)
    other = open_store(s3_locator)
    other.backend.leases = type(st.backend.leases)(other.backend.client, other.backend.bucket, other.backend.prefix,
                                                   other.backend.name)
    with st.backend.exclusive_guard(1.0):
        old = s3_lease.WRITER_WAIT_SECONDS
        s3_lease.WRITER_WAIT_SECONDS = 0.3
        try:
            with pytest.raises(LockError, match="gc holds"):
                other.put(b"blocked")
        finally:
            s3_lease.WRITER_WAIT_SECONDS = old
    assert other.has(other.put(b"now free"))


def test_copy_between_backends_passes_fsck(local_store: Store, s3_locator: str, tmp_path: Path) -> None:
    """A store copied local -> S3 -> local keeps every object byte for byte and passes fsck."""
    keys = [local_store.put(bytes([i]) * 1000) for i in range(5)]
    local_store.refs.set("results/r", keys[0])
    with local_store.open_journal("run") as journal:
        journal.append({"index": 0}, keys=keys[1:3])
        journal.finish({"result": keys[0]}, keys=[keys[0]])
    remote = open_store(s3_locator, create=True)
    copy_store(local_store, remote)
    assert fsck(remote, verify_data=True, connectivity=True).ok
    assert [raw_object(remote, k) for k in keys] == [raw_object(local_store, k) for k in keys]
    back = open_store(tmp_path / "back", create=True)
    copy_store(remote, back)
    report = fsck(back, verify_data=True, connectivity=True)
    assert report.ok and set(report.dangling) == {keys[3], keys[4]}
    assert back.layout.journal_path("run").read_bytes() == local_store.layout.journal_path("run").read_bytes()
    with pytest.raises(RefConflictError):
        back.refs.compare_and_swap("results/r", None, keys[1])


def test_journal_compaction(s3_locator: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every COMPACT_EVERY appends the journal becomes one base object; readers see the same entries."""
    from emberbench.store import s3_journal

    monkeypatch.setattr(s3_journal, "COMPACT_EVERY", 4)
    st = open_store(s3_locator, create=True)
    with st.open_journal("run") as journal:
        for i in range(10):
            journal.append({"index": i})
    segments, bases = s3_journal.list_segments(st.backend, "run")
    assert [seq for seq, _, _ in bases] == [7] and [seq for seq, _, _ in segments] == [8, 9, 10]
    assert [e.data["index"] for e in st.read_journal("run").entries] == list(range(10))
    with st.open_journal("run") as journal:
        journal.append({"index": 10})
    assert [e.data["index"] for e in st.read_journal("run").entries] == list(range(11))
    assert st.delete_journal("run") and st.journal_names() == []


def test_idle_journal_writer_reclaims_its_lease(s3_locator: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A journal writer idle past its lease deadline appends again if nobody took the journal over."""
    import time as time_module

    from emberbench.store import s3_lease

    st = open_store(s3_locator, create=True)
    journal = st.open_journal("run")
    journal.append({"index": 0})
    start = time_module.monotonic()
    monkeypatch.setattr(s3_lease.time, "monotonic", lambda: start + s3_lease.TTL_SECONDS)
    journal.append({"index": 1})  # past the deadline: reclaimed, not refused
    monkeypatch.undo()
    journal.close()
    assert [e.data["index"] for e in st.read_journal("run").entries] == [0, 1]


def test_root_and_layout_of_an_s3_store_raise_a_store_error(s3_locator: str) -> None:
    """Issue 14: `root`/`layout` of an S3 store is a one-line StoreError naming the store, not a bare AttributeError."""
    from emberbench.store import NotLocalStoreError, StoreError

    st = open_store(s3_locator, create=True)
    for what in ("root", "layout"):
        with pytest.raises(StoreError, match=r"is not a local folder: it has no " + what) as info:
            getattr(st, what)
        assert isinstance(info.value, NotLocalStoreError) and st.locator in str(info.value)
    assert getattr(st, "root", None) is None  # still an AttributeError for getattr with a default
    st.close()
