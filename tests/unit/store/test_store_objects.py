"""Objects: put, get, has, missing, size, iteration, idempotence, the format file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import age, is_s3, raw_object, tmp_leftovers, write_raw, write_raw_object

from emberbench.store import (
    Codec,
    IntegrityError,
    InvalidKeyError,
    KeyMismatchError,
    ObjectNotFoundError,
    ObjectTooLargeError,
    Store,
    StoreFormatError,
    fsck,
    key_of,
)
from emberbench.store.layout import FORMAT_FILE


def test_put_get_round_trip(store: Store) -> None:
    """put returns the SHA-256 key and get returns exactly the bytes."""
    data = b'{"index":0}' * 100
    key = store.put(data)
    assert key == key_of(data)
    assert store.get(key) == data
    assert store.get(key, verify_data=True) == data
    assert store.has(key) and key in store
    assert store.size(key) == len(data)


def test_object_file_is_under_fanout(local_store: Store) -> None:
    """Objects live at objects/<2 hex>/<62 hex> and no temp is left behind."""
    store = local_store
    key = store.put(b"abc")
    assert (store.root / "objects" / key[:2] / key[2:]).is_file()
    assert tmp_leftovers(store) == []


def test_put_with_expected_key(store: Store) -> None:
    """An expected key is checked before anything is written."""
    data = b"payload"
    assert store.put(data, key=key_of(data)) == key_of(data)
    wrong = key_of(b"other")
    with pytest.raises(KeyMismatchError) as info:
        store.put(b"different", key=wrong)
    assert info.value.expected == wrong and info.value.actual == key_of(b"different")
    assert not store.has(wrong) and not store.has(key_of(b"different"))


def test_put_is_idempotent_and_refreshes_mtime(local_store: Store) -> None:
    """A second put of the same bytes succeeds, keeps one file, and makes it young again."""
    store = local_store
    key = store.put(b"same")
    age(store, key, 10_000)
    old = os.stat(store.layout.object_path(key)).st_mtime
    assert store.put(b"same") == key
    assert os.stat(store.layout.object_path(key)).st_mtime > old + 9_000
    assert list(store) == [key]


def test_missing_keeps_order_and_dedups(store: Store) -> None:
    """missing() lists what a writer still has to send, once each, in order."""
    a, b = store.put(b"a"), key_of(b"b")
    c = key_of(b"c")
    assert store.missing([c, a, b, c]) == (c, b)
    assert store.missing([]) == ()


def test_iteration_is_sorted_and_skips_strays(store: Store) -> None:
    """Iteration yields every key sorted and ignores files that are not object names."""
    keys = sorted(store.put(bytes([i])) for i in range(20))
    write_raw(store, "objects/ab/not-a-key", b"x")
    assert list(store) == keys == list(store.keys())


@pytest.mark.parametrize("method", ["get", "has", "size"])
def test_invalid_key_rejected_before_path(store: Store, method: str) -> None:
    """A malformed key raises InvalidKeyError for every accessor, never a path error."""
    with pytest.raises(InvalidKeyError):
        getattr(store, method)("../../etc/passwd")
    with pytest.raises(InvalidKeyError):
        store.missing(["A" * 64])


def test_get_missing(store: Store) -> None:
    """A key that is not stored raises ObjectNotFoundError (a KeyError) naming it."""
    key = key_of(b"nope")
    with pytest.raises(ObjectNotFoundError) as info:
        store.get(key)
    assert info.value.key == key and isinstance(info.value, KeyError)
    assert key in str(info.value)
    with pytest.raises(ObjectNotFoundError):
        store.size(key)


def test_zlib_objects_readable_by_any_store(store: Store) -> None:
    """The codec is per object: a zlib object reads back through a default store."""
    data = b'{"a": 1}' * 5000
    key = Store.open(store.locator, codec=Codec.ZLIB).put(data)
    assert len(raw_object(store, key)) < len(data) // 10
    assert store.get(key, verify_data=True) == data
    assert store.size(key) == len(data)


def test_get_with_a_cap_refuses_a_larger_object_from_its_header(store: Store) -> None:
    """max_length bounds the raw length (a zlib object's too): one byte over is refused, naming both numbers."""
    import pickle

    data = b'{"a": 1}' * 5000
    key = Store.open(store.locator, codec=Codec.ZLIB).put(data)
    assert store.get(key, max_length=len(data)) == data
    with pytest.raises(ObjectTooLargeError, match=f"holds {len(data)} bytes, more than the {len(data) - 1}") as err:
        store.get(key, max_length=len(data) - 1)
    assert (err.value.key, err.value.length, err.value.cap) == (key, len(data), len(data) - 1)
    again = pickle.loads(pickle.dumps(err.value))
    assert str(again) == str(err.value) and vars(again) == vars(err.value)


def test_put_replaces_corrupt_object_and_keeps_evidence(store: Store) -> None:
    """A put over a corrupt object restores it and links the damaged bytes into quarantine."""
    key = store.put(b"precious")
    write_raw_object(store, key, raw_object(store, key)[:-1] + b"!")
    with pytest.raises(IntegrityError):
        store.get(key)
    assert store.put(b"precious") == key
    assert store.get(key) == b"precious"
    assert store.backend.quarantine_count() == 1
    assert fsck(store).ok


def test_open_requires_a_store(tmp_path: Path) -> None:
    """Opening a folder that is not a store is refused without creating anything."""
    with pytest.raises(StoreFormatError, match="not a store"):
        Store.open(tmp_path / "nothing")
    assert not (tmp_path / "nothing").exists()


def test_future_format_version_refused(store: Store) -> None:
    """A store written by a newer version is refused with both versions named."""
    write_raw(store, FORMAT_FILE, json.dumps({"format": "emberbench-store", "version": 2}).encode())
    with pytest.raises(StoreFormatError, match="version 2") as info:
        Store.open(store.locator)
    assert info.value.found == 2 and info.value.supported == 1


def test_create_is_idempotent(store: Store) -> None:
    """Creating an existing store keeps its objects and its format file."""
    key = store.put(b"kept")
    again = Store.open(store.locator, create=True)
    assert again.get(key) == b"kept"
    if not is_s3(store):
        assert json.loads((store.root / FORMAT_FILE).read_text()) == {"format": "emberbench-store", "version": 1}
        assert len([p for p in store.layout.objects.iterdir() if p.is_dir()]) == 256


def test_get_many_keeps_order_and_checks(store: Store) -> None:
    """get_many yields each object in the order asked, and raises on a damaged one when its turn comes."""
    keys = [store.put(bytes([i]) * (i + 1)) for i in range(40)]
    assert list(store.get_many(keys, ahead=4)) == [bytes([i]) * (i + 1) for i in range(40)]
    write_raw_object(store, keys[7], raw_object(store, keys[7])[:-1])
    got = []
    with pytest.raises(IntegrityError):
        for data in store.get_many(keys, ahead=4):
            got.append(data)
    assert len(got) == 7


def test_get_many_reads_a_local_store_in_the_calling_thread(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a local store, reader threads only contended for the interpreter (2.7 times the CPU of plain reads,
    and slower: a run's final artifact reads every record back); they stay for S3's round trips."""
    import threading

    keys = [store.put(bytes([i]) * 64) for i in range(20)]
    readers: list[int] = []
    real = Store.get

    def get(self, key, **kwargs):  # noqa: ANN001, ANN003, ANN202
        readers.append(threading.get_ident())
        return real(self, key, **kwargs)

    monkeypatch.setattr(Store, "get", get)
    assert list(store.get_many(keys, ahead=4)) == [bytes([i]) * 64 for i in range(20)]
    here = {threading.get_ident()}
    assert len(readers) == 20
    assert (set(readers) == here) != is_s3(store)
