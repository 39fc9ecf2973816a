"""Copying a store (issue 25, defect 2): `store copy SRC DST`, and the library copy it is built on.

A local journal with a torn tail (normal after a crash) used to become one
corrupt S3 segment, and an S3 journal that could not be read stopped a copy
to a folder halfway. `store copy` copies the runs finished when it starts,
each whole or not at all, and the copy passes fsck and audit on both backends.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from emberbench.evaluation.runner import run_evaluation
from emberbench.evaluation.store_runner import open_store
from emberbench.provenance import attest_run
from emberbench.runs.audit import OK, audit_store
from emberbench.store import fsck
from emberbench.store.copy import copy_store, journal_snapshot
from tests.run_support import invoke, small_manifest
from tests.unit.provenance.support import fixed_key


def _torn(store, name: str) -> None:  # noqa: ANN001
    """Leave a torn append at the end of a local journal, as a crash in the middle of a write does."""
    path = store.layout.journal_path(name)
    with open(path, "ab") as handle:
        handle.write(b"EJ\x00\x00\x01\x00partial")


@pytest.fixture
def source(tmp_path: Path, suite):  # noqa: ANN001
    """A local store with two finished runs (one signed), an unfinished run whose journal has a torn tail, and a
    ref of no run: (store, the finished runs, the unfinished run)."""
    store = open_store(tmp_path / "src")
    manifest = small_manifest(suite)
    for model in ("a", "b"):
        run_evaluation(manifest, suite, "greedy", model, tmp_path / f"{model}.json", store=store)
    finished = sorted(store.journal_names())
    attest_run(store, finished[0], fixed_key(0))
    run_evaluation(small_manifest(suite, seeds=(3,)), suite, "greedy", "c", tmp_path / "c.json", store=store)
    (unfinished,) = sorted(set(store.journal_names()) - set(finished))
    state = store.read_journal(unfinished)
    from emberbench.store.journal import ENTRY, HEADER, encode_entry

    store.layout.journal_path(unfinished).write_bytes(
        HEADER + b"".join(encode_entry(ENTRY, e.data, e.keys) for e in state.entries))
    store.refs.delete(f"results/{unfinished}")
    _torn(store, unfinished)
    store.refs.set("model-cache/ab/" + "c" * 64, store.put(b"a cached answer"))
    store.close()
    return store, finished, unfinished


def test_store_copy_local_to_s3_and_back_passes_fsck_and_audit(source, s3_locator: str, tmp_path: Path, suite) -> None:  # noqa: ANN001
    """`store copy` from a folder (torn tail included) to S3 and back to a folder: the finished runs and the
    other ref arrive whole, the unfinished run is named as skipped, and both copies pass fsck and audit."""
    store, finished, unfinished = source
    assert fsck(store).ok and fsck(store).torn_journals
    there = invoke("store", "copy", store.locator, s3_locator)
    assert there.exit_code == 0, there.output
    assert f"skipped  {unfinished}: unfinished when the copy began" in there.output
    assert all(f"copied   {run}" in there.output for run in finished)
    assert "2 run(s) copied, 0 already there, 1 skipped; 1 other ref(s)" in there.output
    assert invoke("store", "fsck", "--store", s3_locator, "--connectivity", "--verify-data").exit_code == 0
    remote = open_store(s3_locator)
    assert [v.state for v in audit_store(remote, suite)] == [OK, OK]
    assert invoke("runs", "verify", finished[0][4:12], "--store", s3_locator).exit_code == 0
    back = tmp_path / "back"
    again = invoke("store", "copy", s3_locator, back)
    assert again.exit_code == 0 and "note: new empty store at" in again.output, again.output
    assert invoke("store", "fsck", "--store", back, "--connectivity", "--verify-data").exit_code == 0
    local = open_store(back)
    assert [v.state for v in audit_store(local, suite)] == [OK, OK]
    for run in finished:
        assert local.layout.journal_path(run).read_bytes() == journal_snapshot(store, run)[0]
    assert invoke("store", "copy", store.locator, s3_locator).output.count("present  ") == 2


def test_the_library_copy_drops_a_torn_tail_and_skips_an_unreadable_journal(source, s3_locator: str,
                                                                           tmp_path: Path) -> None:  # noqa: ANN001
    """copy_store: a torn local tail is not copied (the S3 copy reads whole); an S3 journal that cannot be read
    is skipped and named, and the rest is copied (it used to stop with JournalCorruptError halfway)."""
    store, finished, unfinished = source
    remote = open_store(s3_locator)
    report = copy_store(store, remote)
    assert report.journals == 3 and report.skipped == ()
    assert fsck(remote, connectivity=True).ok
    assert remote.read_journal(unfinished).torn_bytes == 0
    b = remote.backend
    b.client.put_object(Bucket=b.bucket, Key=f"{b.prefix}journals/{finished[1]}/0000000009", Body=b"garbage")
    back = open_store(tmp_path / "back")
    report = copy_store(remote, back)
    assert report.journals == 2 and len(report.skipped) == 1 and report.skipped[0].startswith(f"journal {finished[1]}")
    assert sorted(back.journal_names()) == sorted(set(finished + [unfinished]) - {finished[1]})


@pytest.mark.parametrize("backend", ["local", "s3"])
def test_store_copy_never_writes_into_something_that_is_not_a_store(backend: str, source, request,
                                                                     tmp_path: Path) -> None:  # noqa: ANN001
    """A destination that holds anything but a store is refused in one line, and nothing is written to it."""
    store, _, _ = source
    if backend == "local":
        target = tmp_path / "photos"
        target.mkdir()
        (target / "holiday.jpg").write_bytes(b"\xff\xd8")
        locator = str(target)
    else:
        locator = request.getfixturevalue("s3_locator")
        probe = open_store(locator)
        probe.backend.client.delete_object(Bucket=probe.backend.bucket, Key=probe.backend.prefix + "format")
        probe.backend.client.put_object(Bucket=probe.backend.bucket, Key=probe.backend.prefix + "notes.txt", Body=b"x")
    result = invoke("store", "copy", store.locator, locator)
    assert result.exit_code == 1 and len(result.output.strip().splitlines()) == 1 and "not a store" in result.output
    if backend == "local":
        assert sorted(os.listdir(target)) == ["holiday.jpg"]
    else:
        listed = probe.backend.client.list_objects_v2(Bucket=probe.backend.bucket, Prefix=probe.backend.prefix)
        assert [item["Key"][len(probe.backend.prefix):] for item in listed["Contents"]] == ["notes.txt"]


def test_a_run_is_copied_whole_or_not_at_all(source, tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """When a run's refs cannot all be written, what the copy wrote of it (journal, refs) is removed and the run
    is named; the other runs are copied, and the next copy completes it. A run the destination holds otherwise
    is never overwritten."""
    from emberbench.store import RefConflictError, Refs

    store, finished, _ = source
    real = Refs.compare_and_swap

    def failing(self, name, expected, new):  # noqa: ANN001, ANN202
        if name == f"runs/{finished[1]}":
            raise RefConflictError(name, expected, "0" * 64)  # another writer got there first
        return real(self, name, expected, new)

    monkeypatch.setattr(Refs, "compare_and_swap", failing)
    target = tmp_path / "dst"
    first = invoke("store", "copy", store.locator, target)
    monkeypatch.undo()
    assert first.exit_code == 1 and f"skipped  {finished[1]}: ref 'runs/{finished[1]}'" in first.output, first.output
    assert f"copied   {finished[0]}" in first.output
    copied = open_store(target)
    assert finished[1] not in copied.journal_names()
    assert not any(copied.refs.exists(f"{kind}/{finished[1]}") for kind in ("runs", "results", "attestations"))
    assert invoke("store", "fsck", "--store", target).exit_code == 0
    copied.refs.delete(f"results/{finished[0]}")
    copied.refs.set(f"results/{finished[0]}", copied.put(b"another result"))
    again = invoke("store", "copy", store.locator, target)
    assert again.exit_code == 1 and f"skipped  {finished[0]}: the destination holds another version" in again.output
    assert f"copied   {finished[1]}" in again.output
    assert copied.get(copied.refs.get(f"results/{finished[0]}")) == b"another result"
