"""The record spool: records this run stored are assembled from a checked local copy, not read back."""

from __future__ import annotations

import hashlib
import os

import pytest

import emberbench.store_runner as store_runner
from emberbench.record_spool import RecordSpool
from emberbench.runner import run_evaluation
from emberbench.store import Store
from emberbench.store_runner import open_store
from tests.run_support import small_manifest

RECORDS = [b'{"a":1}', b"", b"x" * 5000]


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_records_come_back_only_under_their_digest() -> None:
    """Each spooled record is returned for its digest; another digest gets None; unknown indexes are absent."""
    spool = RecordSpool(5)
    for index, record in enumerate(RECORDS):
        assert spool.add(index, _digest(record), record)
    for index, record in enumerate(RECORDS):
        assert spool.has(index)
        assert spool.get(index, _digest(record)) == record
        assert spool.get(index, _digest(record + b"!")) is None
    assert not spool.has(4) and spool.get(4, _digest(b"")) is None
    spool.close()
    assert not spool.has(0) and spool.get(0, _digest(RECORDS[0])) is None


@pytest.mark.parametrize("damage", ["content", "digest", "length"])
def test_a_damaged_entry_is_never_returned(damage: str) -> None:
    """A flipped byte anywhere in an entry (digest, length or content) makes get return None, every time."""
    spool = RecordSpool(2)
    first, second = b'{"first":true}', b'{"second":true}'
    spool.add(0, _digest(first), first)
    spool.add(1, _digest(second), second)
    offset = {"digest": 3, "length": 32 + 7, "content": 40 + 2}[damage]
    byte = os.pread(spool._fd, 1, offset)
    os.pwrite(spool._fd, bytes([byte[0] ^ 0x01]), offset)
    assert spool.get(0, _digest(first)) is None
    assert spool.get(0, _digest(first)) is None
    assert spool.get(1, _digest(second)) == second
    spool.close()


def test_records_past_the_cap_are_not_spooled() -> None:
    """Disk use stays under the cap: a record that would pass it is refused and reads as absent."""
    spool = RecordSpool(3, cap=2 * (40 + 100))
    assert spool.add(0, _digest(b"a" * 100), b"a" * 100)
    assert spool.add(1, _digest(b"b" * 100), b"b" * 100)
    assert not spool.add(2, _digest(b"c"), b"c")
    assert not spool.has(2) and spool.has(1)
    spool.close()


def test_a_failing_spool_write_stops_spooling_without_failing(monkeypatch) -> None:
    """A temp folder that is full: add returns False from then on, and nothing reads as spooled."""
    import emberbench.record_spool as record_spool

    spool = RecordSpool(3)
    assert spool.add(0, _digest(b"a"), b"a")
    real = os.pwrite

    def full(fd: int, data: bytes, offset: int) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(record_spool.os, "pwrite", full)
    assert not spool.add(1, _digest(b"b"), b"b")
    monkeypatch.setattr(record_spool.os, "pwrite", real)
    assert not spool.add(2, _digest(b"c"), b"c")
    assert not spool.has(1) and not spool.has(2)
    assert spool.get(0, _digest(b"a")) == b"a"
    spool.close()


class _Counting:
    """Counts the keys the run reads from the store, and the spools the sink opens."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, spool_class: type[RecordSpool] = RecordSpool) -> None:
        self.read: list[str] = []
        self.spools: list[RecordSpool] = []
        real_many, real_get = Store.get_many, Store.get
        counter = self

        def get_many(store, keys, **kwargs):  # noqa: ANN001, ANN003, ANN202
            def seen():  # noqa: ANN202
                for key in keys:
                    counter.read.append(key)
                    yield key
            return real_many(store, seen(), **kwargs)

        def get(store, key, **kwargs):  # noqa: ANN001, ANN003, ANN202
            data = real_get(store, key, **kwargs)  # a put's probe of a new key raises: not a read
            counter.read.append(key)
            return data

        class Recorded(spool_class):  # type: ignore[misc, valid-type]
            def __init__(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
                super().__init__(*args, **kwargs)
                counter.spools.append(self)

        monkeypatch.setattr(Store, "get_many", get_many)
        monkeypatch.setattr(Store, "get", get)
        monkeypatch.setattr(store_runner, "RecordSpool", Recorded)


def _records(store: Store) -> set[str]:
    (name,) = store.journal_names()
    return {e.data["digest"] for e in store.read_journal(name).entries if "digest" in e.data}


def test_a_run_assembles_its_own_records_without_reading_them_back(tmp_path, suite, monkeypatch) -> None:  # noqa: ANN001
    """Checkpointed after every episode, an in-process run reads none of its records from the store;
    the artifact is byte for byte the one written without a store, and the spool is closed at the end."""
    manifest = small_manifest(suite)
    reference = tmp_path / "ref.json"
    run_evaluation(manifest, suite, "greedy", "m", reference)
    counting = _Counting(monkeypatch)
    store = open_store(tmp_path / "s")
    out = tmp_path / "g.json"
    run_evaluation(manifest, suite, "greedy", "m", out, store=store, checkpoint_every=1)
    assert out.read_bytes() == reference.read_bytes()
    assert not _records(store) & set(counting.read)
    assert counting.spools and all(s._file is None for s in counting.spools)


class _Damaging(RecordSpool):
    """Spools each record with its last byte flipped (its digest entry left right)."""

    def add(self, index: int, digest: str, record: bytes) -> bool:
        return super().add(index, digest, record[:-1] + bytes([record[-1] ^ 0x01]))


def test_a_damaged_spool_falls_back_to_the_store(tmp_path, suite, monkeypatch) -> None:  # noqa: ANN001
    """Every spooled copy is bad: the run reads each record from the store and the artifact is unchanged."""
    manifest = small_manifest(suite)
    reference = tmp_path / "ref.json"
    run_evaluation(manifest, suite, "greedy", "m", reference)
    counting = _Counting(monkeypatch, _Damaging)
    store = open_store(tmp_path / "s")
    out = tmp_path / "g.json"
    run_evaluation(manifest, suite, "greedy", "m", out, store=store)
    assert out.read_bytes() == reference.read_bytes()
    assert _records(store) <= set(counting.read)


def test_the_spool_is_closed_when_a_run_fails(tmp_path, suite, monkeypatch) -> None:  # noqa: ANN001
    """A run that fails after records were spooled leaves no spool open (its unnamed file is gone)."""
    manifest = small_manifest(suite)
    counting = _Counting(monkeypatch)
    real = store_runner.StoreSink.add
    calls = []

    def failing_add(sink, outcome):  # noqa: ANN001, ANN202
        calls.append(outcome.index)
        if len(calls) == 2:
            raise OSError("disk full")
        return real(sink, outcome)

    monkeypatch.setattr(store_runner.StoreSink, "add", failing_add)
    with pytest.raises(OSError, match="disk full"):
        run_evaluation(manifest, suite, "greedy", "m", tmp_path / "g.json", store=open_store(tmp_path / "s"))
    assert counting.spools and counting.spools[0]._end > 0
    assert all(s._file is None for s in counting.spools)
