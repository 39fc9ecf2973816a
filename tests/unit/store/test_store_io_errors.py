"""Injected I/O failures: every put fails loudly and the store stays valid."""

from __future__ import annotations

import errno
import os
import stat

import pytest
from conftest import tmp_leftovers

from emberbench.store import Store, StoreIOError, fsck, key_of

DATA = b'{"record": "bytes"}' * 50
ERRNOS = [errno.ENOSPC, errno.EIO]


def _failing(err: int):
    def fail(*args: object, **kwargs: object) -> None:
        raise OSError(err, os.strerror(err))

    return fail


def _assert_valid_without(store: Store, key: str) -> None:
    """The put left no object, no temp, and fsck finds nothing wrong."""
    assert not store.has(key)
    assert tmp_leftovers(store) == []
    report = fsck(store, verify_data=True, connectivity=True)
    assert report.ok and report.temp_files == ()


@pytest.mark.parametrize("err", ERRNOS)
def test_write_failure(local_store: Store, monkeypatch: pytest.MonkeyPatch, err: int) -> None:
    """A failing write raises StoreIOError(write) carrying the errno; nothing is stored."""
    store = local_store
    monkeypatch.setattr(os, "write", _failing(err))
    with pytest.raises(StoreIOError) as info:
        store.put(DATA)
    monkeypatch.undo()
    assert info.value.operation == "write" and info.value.errno == err
    assert info.value.key == key_of(DATA)
    _assert_valid_without(store, key_of(DATA))


def test_zero_length_write_is_enospc(local_store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that makes no progress is reported as ENOSPC instead of looping forever."""
    store = local_store
    monkeypatch.setattr(os, "write", lambda fd, data: 0)
    with pytest.raises(StoreIOError) as info:
        store.put(DATA)
    monkeypatch.undo()
    assert info.value.errno == errno.ENOSPC
    _assert_valid_without(store, key_of(DATA))


def test_short_writes_are_completed(local_store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that accepts only a few bytes at a time still stores the whole object."""
    store = local_store
    real = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real(fd, bytes(data[:7])))
    key = store.put(DATA)
    monkeypatch.undo()
    assert store.get(key) == DATA


@pytest.mark.parametrize("err", ERRNOS)
def test_file_fsync_failure(local_store: Store, monkeypatch: pytest.MonkeyPatch, err: int) -> None:
    """A failing fsync of the temp file is fatal for the put; the temp is removed."""
    store = local_store
    monkeypatch.setattr(os, "fsync", _failing(err))
    with pytest.raises(StoreIOError) as info:
        store.put(DATA)
    monkeypatch.undo()
    assert info.value.operation == "fsync" and info.value.errno == err
    _assert_valid_without(store, key_of(DATA))


def test_folder_fsync_failure(local_store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """If only the folder fsync fails, put still raises; the linked object is whole and valid."""
    store = local_store
    real = os.fsync

    def fsync(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(errno.EIO, "injected")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(StoreIOError) as info:
        store.put(DATA)
    monkeypatch.undo()
    assert info.value.operation == "fsync" and info.value.errno == errno.EIO
    assert store.get(key_of(DATA)) == DATA
    assert fsck(store, verify_data=True).ok and tmp_leftovers(store) == []


@pytest.mark.parametrize("err", ERRNOS)
def test_link_failure(local_store: Store, monkeypatch: pytest.MonkeyPatch, err: int) -> None:
    """A failing link into place raises StoreIOError(link); the temp is removed."""
    store = local_store
    monkeypatch.setattr(os, "link", _failing(err))
    with pytest.raises(StoreIOError) as info:
        store.put(DATA)
    monkeypatch.undo()
    assert info.value.operation == "link" and info.value.errno == err
    _assert_valid_without(store, key_of(DATA))


def test_rename_fallback_when_links_unsupported(local_store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a filesystem without hard links, put falls back to rename and still stores the object."""
    store = local_store
    monkeypatch.setattr(os, "link", _failing(errno.EPERM))
    key = store.put(DATA)
    monkeypatch.undo()
    assert store.get(key) == DATA and tmp_leftovers(store) == []


@pytest.mark.parametrize("err", ERRNOS)
def test_rename_failure(local_store: Store, monkeypatch: pytest.MonkeyPatch, err: int) -> None:
    """When the rename into place fails, put raises StoreIOError(rename) and stores nothing."""
    store = local_store
    monkeypatch.setattr(os, "link", _failing(errno.EPERM))
    monkeypatch.setattr(os, "replace", _failing(err))
    with pytest.raises(StoreIOError) as info:
        store.put(DATA)
    monkeypatch.undo()
    assert info.value.operation == "rename" and info.value.errno == err
    _assert_valid_without(store, key_of(DATA))


def test_failed_put_does_not_disturb_existing_objects(local_store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A put that fails leaves every earlier object readable."""
    store = local_store
    keys = [store.put(bytes([i]) * 100) for i in range(5)]
    monkeypatch.setattr(os, "fsync", _failing(errno.EIO))
    with pytest.raises(StoreIOError):
        store.put(DATA)
    monkeypatch.undo()
    assert [store.get(k) for k in keys] == [bytes([i]) * 100 for i in range(5)]


@pytest.mark.parametrize("err", ERRNOS)
def test_ref_update_failure_keeps_old_value(local_store: Store, monkeypatch: pytest.MonkeyPatch, err: int) -> None:
    """A failing rename during a ref update raises and leaves the ref at its old key, no temp."""
    store = local_store
    old, new = store.put(b"old"), store.put(b"new")
    store.refs.set("run", old)
    monkeypatch.setattr(os, "replace", _failing(err))
    with pytest.raises(StoreIOError):
        store.refs.set("run", new)
    monkeypatch.undo()
    assert store.refs.get("run") == old
    assert fsck(store).temp_files == ()


def test_journal_fsync_failure_breaks_writer(local_store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failed journal fsync raises, the writer refuses more appends, and reopening recovers."""
    store = local_store
    key = store.put(b"rec")
    with store.open_journal("j") as journal:
        journal.append({"index": 0}, keys=[key])
        monkeypatch.setattr(os, "fsync", _failing(errno.EIO))
        with pytest.raises(StoreIOError):
            journal.append({"index": 1}, keys=[key])
        monkeypatch.undo()
        with pytest.raises(Exception, match="reopen"):
            journal.append({"index": 2}, keys=[key])
    with store.open_journal("j") as journal:
        # The entry whose fsync failed may or may not be there; never a torn one.
        assert [e.data["index"] for e in journal.entries][:1] == [0]
        journal.append({"index": 9})
    assert store.read_journal("j").entries[-1].data["index"] == 9
