"""A read-only store: every read works, every write is refused before it starts, and the store stays byte for byte."""

from __future__ import annotations

import pytest
from emberbench.store import ReadOnlyStoreError, check_ref_log, fsck, open_store

from conftest import is_s3

RUN = "run-" + "cd" * 32


def snapshot(st) -> dict[str, object]:  # noqa: ANN001
    """Every entry of the store with its bytes (local: and its mtime and mode; S3: its ETag and LastModified)."""
    if is_s3(st):
        return {item["Key"]: (item["ETag"], item["LastModified"], item["Size"])
                for item in st.backend.list_prefix(st.backend.prefix)}
    out = {}
    for path in sorted(st.root.rglob("*")):
        info = path.lstat()
        out[str(path.relative_to(st.root))] = (info.st_mtime_ns, info.st_mode,
                                               path.read_bytes() if path.is_file() else None)
    return out


@pytest.fixture
def filled(store):  # noqa: ANN001
    """A store with objects, refs (and their log) and a finished journal."""
    key = store.put(b"record")
    store.refs.set(f"runs/{RUN}", key)
    with store.open_journal(RUN) as journal:
        journal.append({"index": 0}, keys=[key])
        journal.finish({"result": key}, keys=[key])
    store.close()
    return store


def test_reads_work_and_nothing_changes(filled) -> None:  # noqa: ANN001
    """get, has, list, refs, journals, the ref log and fsck without quarantine all answer; no byte moves."""
    before = snapshot(filled)
    ro = open_store(filled.locator, read_only=True)
    assert ro.read_only == "opened read-only" and ro.write_denied() == "opened read-only"
    key = ro.refs.get(f"runs/{RUN}")
    assert ro.get(key) == b"record" and ro.has(key) and list(ro) == [key]
    assert ro.read_journal(RUN).finished and ro.journal_names() == [RUN]
    assert [e.new for e in ro.refs.log.entries()] == [key]
    assert check_ref_log(ro).ok
    assert fsck(ro, verify_data=True, connectivity=True, quarantine=False).ok
    assert b"".join(ro.iter_verified(key)) == b"record"
    ro.close()
    assert snapshot(filled) == before


@pytest.mark.parametrize("write", [
    lambda st, key: st.put(b"new"),
    lambda st, key: st.put(b"record"),  # even a re-put of an existing object (it would refresh its age)
    lambda st, key: st.put_chunks([b"new"]),
    lambda st, key: st.refs.set("x", key),
    lambda st, key: st.refs.compare_and_swap(f"runs/{RUN}", key, None),
    lambda st, key: st.refs.delete(f"runs/{RUN}"),
    lambda st, key: st.refs.adopt(f"runs/{RUN}"),
    lambda st, key: st.open_journal("run-new"),
    lambda st, key: st.open_journal(RUN, create=False),
    lambda st, key: st.delete_journal(RUN),
    lambda st, key: st.backend.writer_guard().__enter__(),
    lambda st, key: st.backend.quarantine_object(key),
    lambda st, key: st.backend.delete_object(key),
], ids=["put", "re-put", "put_chunks", "ref set", "ref cas", "ref delete", "adopt", "new journal",
        "append journal", "delete journal", "lease", "quarantine", "delete object"])
def test_every_write_is_refused_and_leaves_no_trace(filled, write) -> None:  # noqa: ANN001
    """Each kind of write raises ReadOnlyStoreError naming the store and what was refused; nothing changes."""
    before = snapshot(filled)
    ro = open_store(filled.locator, read_only=True)
    key = ro.refs.get(f"runs/{RUN}")
    with pytest.raises(ReadOnlyStoreError, match=r"is read-only \(opened read-only\): .* refused") as caught:
        write(ro, key)
    assert "\n" not in str(caught.value)
    ro.close()
    assert snapshot(filled) == before


def test_create_and_read_only_exclude_each_other(tmp_path) -> None:  # noqa: ANN001
    """A store cannot be created read-only."""
    with pytest.raises(ValueError, match="cannot be created read-only"):
        open_store(tmp_path / "s", create=True, read_only=True)


def test_write_probe_never_writes(filled) -> None:  # noqa: ANN001
    """The probe that tells whether credentials may write changes nothing (S3: a conditional PUT that fails)."""
    before = snapshot(filled)
    st = open_store(filled.locator)
    assert st.write_denied() is None and st.read_only is None
    st.close()
    assert snapshot(filled) == before
