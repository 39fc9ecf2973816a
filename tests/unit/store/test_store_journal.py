"""Run journals: append-only, one writer, torn tails dropped, earlier damage refused."""

from __future__ import annotations

import os

import pytest
from conftest import is_s3, raw_journal, write_raw_journal

from emberbench.store import JournalCorruptError, JournalError, LockError, ObjectNotFoundError, Store, journal_name
from emberbench.store.journal import HEADER, parse

KEY = "93a23971a914e5eacbf0a8d25154cda309c3c1c72fbb9914d47c60f3cb681588"
# Golden journal: one entry {"index": 0, "digest": KEY} referencing KEY, then a finish marker.
GOLDEN = bytes.fromhex(
    "4542534a01000000454a00000076930082a5696e64657800a6646967657374d940393361323339"
    "3731613931346535656163626630613864323531353463646133303963336331633732666262393931"
    "346434376336306633636236383135383891c42093a23971a914e5eacbf0a8d25154cda309c3c1c7"
    "2fbb9914d47c60f3cb68158845b517b227f6e0fe600f08ec693b7b50454a000000049301809081af"
    "6cfbc335ad789c6ef3afccf69369"
)


def _fill(store: Store, name: str, n: int) -> list[str]:
    keys = [store.put(f'{{"episode":{i}}}'.encode()) for i in range(n)]
    with store.open_journal(name) as journal:
        for i, key in enumerate(keys):
            journal.append({"index": i, "digest": key}, keys=[key])
    return keys


def test_golden_journal(store: Store) -> None:
    """The writer produces the documented bytes, and the golden sample reads back."""
    store.put(b'{"hello":"world"}')
    with store.open_journal("g") as journal:
        journal.append({"index": 0, "digest": KEY}, keys=[KEY])
        journal.finish()
    assert raw_journal(store, "g") == GOLDEN
    state, end = parse("g", GOLDEN)
    assert end == len(GOLDEN) and state.finished
    assert state.entries[0].data == {"index": 0, "digest": KEY} and state.entries[0].keys == (KEY,)


def test_future_version_refused(store: Store) -> None:
    """A journal written by a newer format version is refused, not guessed at."""
    future = GOLDEN[:4] + b"\x02" + GOLDEN[5:]
    write_raw_journal(store, "f", future)
    with pytest.raises(JournalError, match="unknown journal version 2"):
        store.read_journal("f")
    with pytest.raises(JournalError):
        store.open_journal("f")


def test_append_and_resume(store: Store) -> None:
    """Entries survive close and reopen, in order, with their keys; append_many adds a batch."""
    keys = _fill(store, "run", 5)
    with store.open_journal("run") as journal:
        assert [e.data["index"] for e in journal.entries] == [0, 1, 2, 3, 4]
        journal.append_many([({"index": 5}, []), ({"index": 6}, [keys[0]])])
    state = store.read_journal("run")
    assert [e.data["index"] for e in state.entries] == list(range(7))
    assert state.referenced_keys() == frozenset(keys)
    assert not state.finished and state.torn_bytes == 0


def test_discard_if_empty_deletes_only_an_empty_journal(store: Store) -> None:
    """An empty journal is deleted under its writer; one with an entry or a finish marker is only closed."""
    journal = store.open_journal("empty")
    assert store.journal_names() == ["empty"]
    assert journal.discard_if_empty() is True
    assert store.journal_names() == []
    with pytest.raises(JournalError, match="closed"):
        journal.append({"index": 0})
    assert journal.discard_if_empty() is False  # already closed: nothing more happens
    _fill(store, "used", 1)
    assert store.open_journal("used").discard_if_empty() is False
    with store.open_journal("done") as journal:
        journal.finish()
    assert store.open_journal("done").discard_if_empty() is False
    assert store.journal_names() == ["done", "used"]
    with store.open_journal("empty") as journal:  # the name is free again, and the writer lock with it
        assert journal.entries == ()


def test_finish_marker(store: Store) -> None:
    """finish records a marker with its own keys; afterwards appends are refused."""
    keys = _fill(store, "run", 2)
    with store.open_journal("run") as journal:
        journal.finish({"result": keys[1]}, keys=[keys[1]])
        journal.finish()  # idempotent
        with pytest.raises(JournalError, match="finished"):
            journal.append({"index": 9})
    state = store.read_journal("run")
    assert state.finished and state.finish is not None and state.finish.data == {"result": keys[1]}
    assert len(state.entries) == 2


def test_referenced_keys_must_be_stored(store: Store) -> None:
    """An entry may not reference an object that is not durable yet; nothing is written."""
    with store.open_journal("run") as journal:
        with pytest.raises(ObjectNotFoundError):
            journal.append({"index": 0}, keys=["0" * 64])
        assert journal.entries == ()
    assert store.read_journal("run").entries == ()


def test_unencodable_entry(store: Store) -> None:
    """An entry msgpack cannot encode raises JournalError and is not written."""
    with store.open_journal("run") as journal:
        with pytest.raises(JournalError, match="cannot be encoded"):
            journal.append({"x": object()})
    assert store.read_journal("run").entries == ()


def test_one_writer(store: Store) -> None:
    """A second writer is refused while the first holds the journal, and admitted after."""
    first = store.open_journal("run")
    with pytest.raises(LockError):
        store.open_journal("run")
    with pytest.raises(LockError):
        store.delete_journal("run")
    first.close()
    with store.open_journal("run", timeout=1.0) as second:
        assert second.entries == ()
    assert store.delete_journal("run") is True
    assert store.journal_names() == []


def test_closed_writer_refuses(store: Store) -> None:
    """Appending after close raises instead of writing to a released journal."""
    journal = store.open_journal("run")
    journal.close()
    journal.close()
    with pytest.raises(JournalError, match="closed"):
        journal.append({"i": 1})


def test_missing_journal(store: Store) -> None:
    """Reading, or opening without create, a journal that does not exist raises JournalError."""
    with pytest.raises(JournalError, match="no such journal"):
        store.read_journal("absent")
    with pytest.raises(JournalError, match="no such journal"):
        store.open_journal("absent", create=False)


def test_truncation_at_every_offset_of_tail(local_store: Store) -> None:
    """Cutting the last entry at any byte drops only it; the writer truncates it away and appends."""
    store = local_store
    _fill(store, "run", 3)
    path = store.layout.journal_path("run")
    full = path.read_bytes()
    three_end = len(full)
    state_two = parse("run", full[: three_end - 1])
    assert len(state_two[0].entries) == 2
    two_end = state_two[1]
    for cut in range(two_end, three_end):
        path.write_bytes(full[:cut])
        state = store.read_journal("run")
        assert len(state.entries) == 2 and state.torn_bytes == cut - two_end, cut
    path.write_bytes(full[: two_end + 5])
    with store.open_journal("run") as journal:
        assert len(journal.entries) == 2 and journal.dropped_bytes == 5
        assert os.path.getsize(path) == two_end
        journal.append({"index": 2})
    assert [e.data["index"] for e in store.read_journal("run").entries] == [0, 1, 2]


def test_truncated_header(local_store: Store) -> None:
    """A crash right after creating the file (partial header) reads as empty and is rewritten."""
    store = local_store
    path = store.layout.journal_path("run")
    path.write_bytes(HEADER[:3])
    assert store.read_journal("run").entries == ()
    with store.open_journal("run") as journal:
        journal.append({"index": 0})
    assert path.read_bytes().startswith(HEADER)


def test_corrupt_last_entry_dropped(local_store: Store) -> None:
    """A flipped bit anywhere in the last entry drops just that entry."""
    store = local_store
    _fill(store, "run", 3)
    path = store.layout.journal_path("run")
    full = path.read_bytes()
    two_end = parse("run", full[:-1])[1]
    for offset in range(two_end, len(full)):
        bad = bytearray(full)
        bad[offset] ^= 0x10
        path.write_bytes(bytes(bad))
        assert len(store.read_journal("run").entries) == 2, offset


def test_corruption_before_the_end_is_an_error(store: Store) -> None:
    """A flipped bit in any entry but the last raises JournalCorruptError with its offset."""
    _fill(store, "run", 3)
    full = raw_journal(store, "run")
    two_end = parse("run", full[:-1])[1]
    for offset in range(len(HEADER), two_end, 17 if is_s3(store) else 1):
        bad = bytearray(full)
        bad[offset] ^= 0x01
        write_raw_journal(store, "run", bytes(bad))
        with pytest.raises(JournalCorruptError) as info:
            store.read_journal("run")
        assert info.value.offset <= offset, offset
        with pytest.raises(JournalCorruptError):
            store.open_journal("run")
    write_raw_journal(store, "run", full)
    assert len(store.read_journal("run").entries) == 3


def test_journal_name_helper_opens(store: Store) -> None:
    """Names from journal_name() are accepted by the store."""
    name = journal_name("manifest-hash", "org/model v2")
    with store.open_journal(name) as journal:
        journal.append({"index": 0})
    assert store.journal_names() == [name]


def test_rewrite_replaces_a_journal_whole_and_closes_the_writer(store: Store) -> None:
    """Issue 22 (defect 11): a repair replaces a finished journal whole (atomically, on both backends); the
    writer is closed; the next writer reads and extends the new journal; nothing is left behind."""
    keys = _fill(store, "j", 5)
    with store.open_journal("j", create=False) as journal:
        journal.finish({"result": keys[0]}, keys=[keys[0]])
    writer = store.open_journal("j", create=False)
    with pytest.raises(ObjectNotFoundError):
        writer.rewrite([({"index": 0}, ["f" * 64])])
    assert [e.data["index"] for e in store.read_journal("j").entries] == [0, 1, 2, 3, 4]  # left as it was
    writer = store.open_journal("j", create=False)
    writer.rewrite([({"index": 9, "digest": keys[1]}, [keys[1]])])
    with pytest.raises(JournalError, match="closed"):
        writer.append({"index": 10})
    state = store.read_journal("j")
    assert [dict(e.data) for e in state.entries] == [{"index": 9, "digest": keys[1]}] and not state.finished
    assert raw_journal(store, "j").startswith(HEADER)
    with store.open_journal("j", create=False) as journal:
        journal.append({"index": 10}, keys=[keys[2]])
        journal.finish({"result": keys[3]}, keys=[keys[3]])
    state = store.read_journal("j")
    assert [e.data["index"] for e in state.entries] == [9, 10] and state.finish.data == {"result": keys[3]}
    assert store.read_journal("j").referenced_keys() == {keys[1], keys[2], keys[3]}
    if is_s3(store):
        rest = [item["Key"].rsplit("/", 1)[1] for item in store.backend.list_prefix(f"{store.backend.prefix}journals/j/")]
        bases = [int(r[5:]) for r in rest if r.startswith("base-")]
        assert len(bases) == 1 and all(int(r) > bases[0] for r in rest if not r.startswith("base-")), rest
    else:
        assert os.listdir(store.layout.journals) == ["j.journal"]


def test_rewrite_refuses_a_journal_another_writer_extended(store: Store) -> None:
    """A rewrite never overwrites what a rival writer appended after this writer read the journal."""
    keys = _fill(store, "j", 2)
    writer = store.open_journal("j", create=False)
    if is_s3(store):  # a rival that took the journal over appends its own segment
        store.backend.client.put_object(Bucket=store.backend.bucket,
                                        Key=f"{store.backend.prefix}journals/j/{writer._next:010d}",
                                        Body=b"")
    else:  # a rival that replaced the file
        path = store.layout.journal_path("j")
        os.replace(path, path.with_name("old"))
        path.write_bytes(HEADER)
    with pytest.raises(JournalError, match="another"):
        writer.rewrite([({"index": 0, "digest": keys[0]}, [keys[0]])])
