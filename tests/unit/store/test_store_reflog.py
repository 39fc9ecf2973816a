"""The ref log: every ref change is a write-once, chained, attributable entry; the check finds what bypassed it."""

from __future__ import annotations

import pickle
import threading

import pytest
from emberbench.store import (
    ReadOnlyStoreError,
    RefLogError,
    check_ref_log,
    open_store,
)
from emberbench.store.reflog import ENTRY_CAP, RefLog, actor, encode_entry, parse_entry, run_of

from conftest import is_s3, write_raw

RUN = "run-" + "ab" * 32


def _delete_entry(st, seq: int, rel: str | None = None) -> None:  # noqa: ANN001
    name = rel or f"reflog/{seq:012d}"
    if is_s3(st):
        st.backend.client.delete_object(Bucket=st.backend.bucket, Key=st.backend.prefix + name)
    else:
        (st.root / name).unlink()


def test_every_change_is_logged_with_old_new_who_and_run(store) -> None:  # noqa: ANN001
    """set, compare-and-swap, update and delete each append one entry; a no-op appends none."""
    a, b = store.put(b"a"), store.put(b"b")
    store.refs.set(f"runs/{RUN}", a)
    store.refs.set(f"runs/{RUN}", a)  # no change: no entry
    store.refs.compare_and_swap(f"runs/{RUN}", a, b)
    store.refs.update("model-cache/x", lambda old: a)
    store.refs.delete(f"runs/{RUN}")
    entries = list(store.refs.log.entries())
    assert [(e.seq, e.ref, e.old, e.new) for e in entries] == [
        (0, f"runs/{RUN}", None, a), (1, f"runs/{RUN}", a, b), (2, "model-cache/x", None, a),
        (3, f"runs/{RUN}", b, None)]
    assert all(e.by == actor() and "@" in e.by for e in entries)
    assert [e.run for e in entries] == [RUN, RUN, None, RUN]
    assert entries[0].prev is None and all(e.prev == p.digest for p, e in zip(entries, entries[1:]))
    assert [e.seq for e in store.refs.history(f"runs/{RUN}")] == [0, 1, 3]
    report = check_ref_log(store)
    assert report.ok and report.entries == 4 and report.last == 3, report


def test_a_new_process_continues_the_chain(store) -> None:  # noqa: ANN001
    """A store opened afresh finds the end of the log (a galloping search on S3) and links to it."""
    key = store.put(b"k")
    for i in range(37):
        store.refs.set(f"t/{i}", key)
    again = open_store(store.locator)
    try:
        assert again.refs.log.last_seq() == 36
        again.refs.set("t/last", key)
    finally:
        again.close()
    entries = list(store.refs.log.entries())
    assert entries[-1].seq == 37 and entries[-1].prev == entries[-2].digest
    assert check_ref_log(store).ok


def test_concurrent_writers_share_one_dense_chain(store) -> None:  # noqa: ANN001
    """Writers in several store instances racing for the same numbers: every change logged once, chain intact."""
    key = store.put(b"k")
    others = [open_store(store.locator) for _ in range(3)]

    def write(st, i: int) -> None:  # noqa: ANN001
        for j in range(6):
            st.refs.set(f"w/{i}-{j}", key)

    threads = [threading.Thread(target=write, args=(st, i)) for i, st in enumerate(others)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for st in others:
        st.close()
    entries = list(store.refs.log.entries())
    assert [e.seq for e in entries] == list(range(18))
    assert sorted(e.ref for e in entries) == sorted(f"w/{i}-{j}" for i in range(3) for j in range(6))
    assert check_ref_log(store).ok


def test_a_ref_changed_around_the_store_is_reported(store) -> None:  # noqa: ANN001
    """A ref rewritten with plain writes (no log entry) no longer matches its last entry: reported, named."""
    a, b = store.put(b"a"), store.put(b"b")
    store.refs.set(f"results/{RUN}", a)
    write_raw(store, f"refs/results/{RUN}", (b + "\n").encode())
    report = check_ref_log(store)
    assert not report.ok
    assert any(f"ref results/{RUN}" in p and "changed without a log entry" in p for p in report.problems), report
    write_raw(store, "refs/planted/x", (a + "\n").encode())
    assert any("ref planted/x" in p and "no entry" in p for p in check_ref_log(store).problems)


def test_a_deleted_replaced_or_stray_entry_is_reported(store) -> None:  # noqa: ANN001
    """A gap, a replaced entry (the chain breaks at its successor), a foreign name and garbage are each named."""
    key = store.put(b"k")
    for i in range(5):
        store.refs.set(f"t/{i}", key)
    _delete_entry(store, 1)
    entry = store.refs.log.read(3)
    forged = encode_entry(type(entry)(3, entry.ref, None, key, entry.time, "mallory@x", None, "0" * 64))
    write_raw(store, "reflog/000000000003", forged)
    write_raw(store, "reflog/notes.txt", b"hello")
    write_raw(store, "reflog/000000000009", b"garbage")
    problems = check_ref_log(store).problems
    text = "\n".join(problems)
    assert "entry 1 missing" in text, text
    assert "entry 4: does not follow entry 3" in text or "entry 3: does not follow" in text, text
    assert "reflog/notes.txt" in text and "ref log entry 9: not a JSON entry" in text, text


def test_adopt_records_refs_made_before_the_log(store) -> None:  # noqa: ANN001
    """Refs written around the store are adopted as they are (note 'adopted'); the check then passes."""
    key = store.put(b"k")
    write_raw(store, "refs/old/one", (key + "\n").encode())
    assert not check_ref_log(store).problems and check_ref_log(store).notes  # an empty log: a note, not damage
    store.refs.set("new/two", key)
    assert check_ref_log(store).problems
    entry = store.refs.adopt("old/one")
    assert entry.note == "adopted" and entry.new == key and entry.old is None
    assert check_ref_log(store).ok


def test_adopt_records_a_ref_moved_or_deleted_around_the_log(store) -> None:  # noqa: ANN001
    """A ref that disagrees with its last entry (moved, or deleted, around the store) is adopted as it is now."""
    from tests.run_support import invoke

    a, b = store.put(b"a"), store.put(b"b")
    store.refs.set(f"results/{RUN}", a)
    store.refs.set("other/x", a)
    write_raw(store, f"refs/results/{RUN}", (b + "\n").encode())
    _delete_entry(store, -1, rel="refs/other/x")
    report = check_ref_log(store)
    assert not report.damage and [(d.ref, d.value, d.last.new) for d in report.disagreements] == [
        ("other/x", None, a), (f"results/{RUN}", b, a)]
    assert report.problems == tuple(d.line for d in report.disagreements)
    adopted = invoke("store", "log", "--adopt", "--store", store.locator)
    assert adopted.exit_code == 0 and "2 ref(s) adopted" in adopted.output, adopted.output
    assert "adopted  other/x -> deleted" in adopted.output
    moved = store.refs.history(f"results/{RUN}")[-1]
    assert (moved.old, moved.new, moved.note) == (a, b, "adopted")
    assert check_ref_log(store).ok
    assert "0 ref(s) adopted" in invoke("store", "log", "--adopt", "--store", store.locator).output


def test_the_logs_own_damage_is_told_apart_from_refs_that_disagree(store) -> None:  # noqa: ANN001
    """`damage` holds the log's own problems (never repaired); a ref whose only entry is unreadable disagrees too."""
    key = store.put(b"k")
    for i in range(3):
        store.refs.set(f"t/{i}", key)
    write_raw(store, "reflog/000000000001", b"garbage")
    report = check_ref_log(store)
    assert report.damage == ("ref log entry 1: not a JSON entry",)
    assert [d.ref for d in report.disagreements] == ["t/1"] and report.disagreements[0].last is None
    assert store.refs.log.entry_digest(1) == __import__("hashlib").sha256(b"garbage").hexdigest()
    assert store.refs.log.entry_digest(7) is None


def test_an_adjacent_pair_logged_out_of_order_is_accepted(store) -> None:  # noqa: ANN001
    """Two writers of one ref may log in the opposite order of their swaps; the check accepts that pair only."""
    a, b, c = store.put(b"a"), store.put(b"b"), store.put(b"c")
    store.refs.set("x", a)
    log = store.refs.log
    store.backend.swap_ref("x", (a + "\n").encode(), (b + "\n").encode())
    store.backend.swap_ref("x", (b + "\n").encode(), (c + "\n").encode())
    log.append("x", b, c)
    log.append("x", a, b)
    assert check_ref_log(store).ok
    store.backend.swap_ref("x", (c + "\n").encode(), (a + "\n").encode())
    assert not check_ref_log(store).ok


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.replace(b'"reflog":1', b'"reflog":2'), "version 2 is not supported"),
    (lambda d: d.replace(b'"seq":0', b'"seq":5'), "it says it is entry 5"),
    (lambda d: d.replace(b'"by":"', b'"extra":1,"by":"'), "unknown field"),
    (lambda d: d.replace(b'"old":null', b'"old":"ABC"'), "invalid object key"),
    (lambda d: d + b" " * ENTRY_CAP, "cap"),
])
def test_entries_are_read_strictly(change, message) -> None:  # noqa: ANN001
    """An entry of another version, position or shape is refused with one line naming it."""
    from emberbench.store.reflog import RefLogEntry

    data = encode_entry(RefLogEntry(0, "runs/x", None, "a" * 64, "2026-01-31T12:00:00Z", "u@h", None, None))
    assert parse_entry(0, data).new == "a" * 64
    with pytest.raises(RefLogError, match=message):
        parse_entry(0, change(data))


def test_run_of_names_only_run_refs() -> None:
    """The run of a ref is its last component when that is a run name."""
    assert run_of(f"runs/{RUN}") == RUN and run_of(f"attestations/{RUN}") == RUN
    assert run_of("model-cache/ab/cd") is None and run_of("catalog/index") is None


def test_new_errors_pickle() -> None:
    """The ref log's and read-only mode's errors cross process boundaries with message and attributes."""
    for error in (RefLogError(3, "bad"), ReadOnlyStoreError("s3://b/p", "put an object", "PutObject denied")):
        again = pickle.loads(pickle.dumps(error))
        assert type(again) is type(error) and str(again) == str(error) and vars(again) == vars(error)
    assert isinstance(ReadOnlyStoreError("s", "o", "r"), PermissionError)


def test_log_uses_the_backend_only(store) -> None:  # noqa: ANN001
    """A RefLog over the same backend sees what the store's refs appended."""
    store.refs.set("a/b", store.put(b"x"))
    assert RefLog(store.backend).last_seq() == 0


def test_store_log_shows_who_changed_which_ref(store) -> None:  # noqa: ANN001
    """`store log [REF]` prints each change (seq, time, user@host, ref, old -> new); --json one object a line."""
    import json

    from tests.run_support import invoke

    a, b = store.put(b"a"), store.put(b"b")
    store.refs.set(f"results/{RUN}", a)
    store.refs.set(f"results/{RUN}", b)
    store.refs.set("other/x", a)
    out = invoke("store", "log", f"results/{RUN}", "--store", store.locator)
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert len(lines) == 2 and f"results/{RUN}  created -> {a[:16]}" in lines[0] and actor() in lines[0]
    assert f"{a[:16]} -> {b[:16]}" in lines[1]
    rows = [json.loads(line) for line in invoke("store", "log", "--json", "--limit", "2", "--store",
                                                store.locator).output.splitlines()]
    assert [r["seq"] for r in rows] == [1, 2] and rows[1]["ref"] == "other/x" and rows[0]["run"] == RUN
    assert invoke("store", "log", "../x", "--store", store.locator).exit_code == 2
    write_raw(store, "refs/planted/y", (a + "\n").encode())
    adopted = invoke("store", "log", "--adopt", "--store", store.locator)
    assert adopted.exit_code == 0 and "adopted  planted/y" in adopted.output and "1 ref(s) adopted" in adopted.output
    assert check_ref_log(store).ok
