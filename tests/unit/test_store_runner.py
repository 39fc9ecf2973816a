"""Runs with a store: run identity, full authentication on resume, regeneration, bytes written.

The regression tests of issue 11 (defects 1, 2, 4, 5 and 7) are marked in their docstrings.
"""

from __future__ import annotations

import pytest

from emberbench.errors import EmberError, ResultError, ResumeError, RunIntegrityError
from emberbench.evaluation.runner import run_evaluation
from emberbench.store import Store, fsck, gc
from emberbench.evaluation.store_runner import open_store
from tests.run_support import flip_byte, object_file, small_manifest, tamper_metric


@pytest.fixture(scope="module")
def manifest(suite):  # noqa: ANN001
    return small_manifest(suite)


@pytest.fixture(scope="module")
def reference(tmp_path_factory, suite, manifest):  # noqa: ANN001
    """The artifact bytes of greedy (model id 'm') without a store."""
    out = tmp_path_factory.mktemp("ref") / "r.json"
    run_evaluation(manifest, suite, "greedy", "m", out)
    return out.read_bytes()


def _journal_keys(store: Store) -> list[str]:
    (name,) = store.journal_names()
    return sorted({e.data["digest"] for e in store.read_journal(name).entries if "digest" in e.data})


def test_no_resume_never_reuses_the_journal(tmp_path, suite, manifest) -> None:  # noqa: ANN001
    """Issue 11 defect 1: --no-resume into a new path with another policy does not take greedy's episodes."""
    store = open_store(tmp_path / "s")
    run_evaluation(manifest, suite, "greedy", "m", tmp_path / "g.json", store=store)
    with pytest.raises(ResumeError, match="--no-resume"):
        run_evaluation(manifest, suite, "stay", "m", tmp_path / "new.json", store=store, resume=False)
    assert not (tmp_path / "new.json").exists()


def test_resume_with_another_policy_is_refused_naming_both(tmp_path, suite, manifest) -> None:  # noqa: ANN001
    """Issue 11 defect 1: the same (manifest, model id) under another policy spec is refused in one line."""
    store = open_store(tmp_path / "s")
    run_evaluation(manifest, suite, "greedy", "m", tmp_path / "g.json", store=store)
    with pytest.raises(ResumeError) as info:
        run_evaluation(manifest, suite, "stay", "m", tmp_path / "new.json", store=store)
    message = str(info.value)
    assert "'greedy'" in message and "'stay'" in message and "\n" not in message
    assert not (tmp_path / "new.json").exists()


def test_resume_into_a_new_path_says_where_episodes_came_from(tmp_path, suite, manifest, reference) -> None:  # noqa: ANN001
    """Issue 11 defect 1: resuming from the journal into a new --out reports the journal and its start."""
    store = open_store(tmp_path / "s")
    first = run_evaluation(manifest, suite, "greedy", "m", tmp_path / "g.json", store=store)
    assert first.from_journal == 0 and first.journal_started
    again = run_evaluation(manifest, suite, "greedy", "m", tmp_path / "new.json", store=store)
    assert again.ran == 0 and again.from_journal == len(manifest.episodes)
    assert again.journal_started == first.journal_started
    assert (tmp_path / "new.json").read_bytes() == reference


def test_tampered_artifact_is_refused_and_left_untouched(tmp_path, suite, manifest) -> None:  # noqa: ANN001
    """Issue 11 defect 2: with a store, a tampered artifact at --out is authenticated, refused, not replaced."""
    store = open_store(tmp_path / "s")
    out = tmp_path / "g.json"
    run_evaluation(manifest, suite, "greedy", "m", out, store=store)
    tamper_metric(out)
    tampered = out.read_bytes()
    with pytest.raises(ResultError, match="stored metrics differ"):
        run_evaluation(manifest, suite, "greedy", "m", out, store=store)
    assert out.read_bytes() == tampered


@pytest.mark.parametrize("damage", ["delete", "flip"])
def test_journaled_record_is_checked_and_regenerated(tmp_path, suite, manifest, reference, damage) -> None:  # noqa: ANN001
    """Issue 11 defects 2 and 4: a journaled record missing or corrupt is played again to the same digest."""
    store = open_store(tmp_path / "s")
    run_evaluation(manifest, suite, "greedy", "m", tmp_path / "g.json", store=store)
    key = _journal_keys(store)[1]
    if damage == "delete":
        object_file(store, key).unlink()
    else:
        flip_byte(object_file(store, key), 200)
    summary = run_evaluation(manifest, suite, "greedy", "m", tmp_path / "new.json", store=store)
    assert summary.regenerated == 1 and summary.ran == 0
    assert (tmp_path / "new.json").read_bytes() == reference
    assert store.get(key, verify_data=True)


def test_regenerated_record_must_reproduce_the_journaled_digest(tmp_path, suite, manifest) -> None:  # noqa: ANN001
    """A regenerated record that differs from the journal stops the run with an integrity error naming it."""
    store = open_store(tmp_path / "s")
    run_evaluation(manifest, suite, "random", "m", tmp_path / "g.json", store=store)
    key = _journal_keys(store)[0]
    object_file(store, key).unlink()
    count = [0]

    def drifting():  # noqa: ANN202 - the same spec name, but plays differently now
        from emberbench.policies import StayPolicy

        count[0] += 1
        return StayPolicy()

    with pytest.raises(RunIntegrityError, match=key):
        run_evaluation(manifest, suite, drifting, "m", tmp_path / "new.json", store=store, policy_spec="random")
    assert not (tmp_path / "new.json").exists()


def test_gc_after_a_finished_run_is_not_a_dead_end(tmp_path, suite, manifest, reference) -> None:  # noqa: ANN001
    """Issue 11 defect 4: after gc deletes a finished run's records, rerunning the command regenerates them."""
    store = open_store(tmp_path / "s")
    out = tmp_path / "g.json"
    run_evaluation(manifest, suite, "greedy", "m", out, store=store)
    gc(store, grace_seconds=0, apply=True)
    out.unlink()
    summary = run_evaluation(manifest, suite, "greedy", "m", out, store=store)
    assert summary.completed == len(manifest.episodes)
    assert out.read_bytes() == reference
    assert fsck(store, verify_data=True, connectivity=True).ok


def test_quarantined_result_object_is_rebuilt_by_rerunning(tmp_path, suite, manifest, reference) -> None:  # noqa: ANN001
    """Issue 11 defect 4: fsck quarantines a corrupt result object; the same command puts it back."""
    store = open_store(tmp_path / "s")
    out = tmp_path / "g.json"
    run_evaluation(manifest, suite, "greedy", "m", out, store=store)
    (name,) = [n for n, _ in store.refs.items() if n.startswith("results/")]
    key = store.refs.get(name)
    flip_byte(object_file(store, key), 120)
    assert not fsck(store).ok
    assert not store.has(key)
    run_evaluation(manifest, suite, "greedy", "m", out, store=store)
    assert store.get(key, verify_data=True) == reference
    assert out.read_bytes() == reference


def _bytes_written(monkeypatch) -> list[int]:  # noqa: ANN001
    """Count the bytes every atomic artifact write hands to the file."""
    import emberbench.evaluation.store_runner as store_runner

    written: list[int] = []
    real = store_runner.atomic_write_bytes

    def counting(path, data):  # noqa: ANN001, ANN202
        def chunks():  # noqa: ANN202
            for chunk in ([data] if isinstance(data, bytes) else data):
                written.append(len(chunk))
                yield chunk
        return real(path, chunks())

    monkeypatch.setattr(store_runner, "atomic_write_bytes", counting)
    return written


def test_time_checkpoints_keep_artifact_bytes_linear(tmp_path, suite, monkeypatch) -> None:  # noqa: ANN001
    """Issue 11 defect 5: however often the checkpoint timer fires, artifact writes stay within budget."""
    manifest = small_manifest(suite, seeds=tuple(range(12)))
    written = _bytes_written(monkeypatch)
    out = tmp_path / "g.json"
    run_evaluation(manifest, suite, "stay", "m", out, store=open_store(tmp_path / "s"), checkpoint_seconds=1e-9)
    final = out.stat().st_size
    assert sum(written) <= 1.5 * final, (sum(written), final)


def test_corrupt_object_during_a_run_is_an_integrity_error(tmp_path, suite, manifest) -> None:  # noqa: ANN001
    """Issue 11 defect 7: a corrupt journal stops the run with an EMBERBench integrity error naming it."""
    store = open_store(tmp_path / "s")
    run_evaluation(manifest, suite, "greedy", "m", tmp_path / "g.json", store=store)
    (name,) = store.journal_names()
    path = store.layout.journal_path(name)
    data = bytearray(path.read_bytes())
    data[12] ^= 0xFF  # inside the first entry: a valid entry follows, so this is not a torn tail
    path.write_bytes(bytes(data))
    with pytest.raises(RunIntegrityError, match=name) as info:
        run_evaluation(manifest, suite, "greedy", "m", tmp_path / "g.json", store=store)
    assert isinstance(info.value, EmberError)


@pytest.mark.parametrize("backend", ["local", "s3"])
def test_resume_checks_and_regenerates_on_either_backend(tmp_path, request, suite, manifest, reference, backend):  # noqa: ANN001
    """On a local or an S3 store: a deleted record is played again, a tampered artifact is refused untouched."""
    locator = tmp_path / "s" if backend == "local" else request.getfixturevalue("s3_locator")
    store = open_store(locator)
    out = tmp_path / "g.json"
    run_evaluation(manifest, suite, "greedy", "m", out, store=store)
    (name,) = store.journal_names()
    key = [e.data["digest"] for e in store.read_journal(name).entries if "digest" in e.data][2]
    if backend == "local":
        object_file(store, key).unlink()
    else:
        b = store.backend
        b.client.delete_object(Bucket=b.bucket, Key=f"{b.prefix}objects/{key[:2]}/{key[2:]}")
        store.close()
        store = open_store(locator)  # as the next run would (this one remembers what it put)
    assert not store.has(key)
    summary = run_evaluation(manifest, suite, "greedy", "m", tmp_path / "new.json", store=store)
    assert summary.regenerated == 1 and (tmp_path / "new.json").read_bytes() == reference
    tamper_metric(out)
    with pytest.raises(ResultError, match="stored metrics differ"):
        run_evaluation(manifest, suite, "greedy", "m", out, store=store)


def test_an_unreachable_store_stops_the_run_with_one_line_naming_it_and_the_rerun_resumes(
        tmp_path, s3_locator, suite, manifest, reference, monkeypatch) -> None:  # noqa: ANN001
    """The S3 server stops answering mid-run (every journal write after the first episodes fails): the run
    stops with one line naming the store and the cause, not the broken writer's later refusal ("a previous
    append failed"), which the run's close used to raise over it; the rerun resumes from the journal."""
    from botocore.exceptions import EndpointConnectionError
    from typer.testing import CliRunner

    import emberbench.store.s3_journal as s3_journal
    import emberbench.evaluation.store_runner as store_runner
    from emberbench.cli.main import app
    from emberbench.results.manifest import write_manifest
    from emberbench.store.s3_client import io_error

    write_manifest(manifest, tmp_path / "m.json")
    args = ["run", "--manifest", str(tmp_path / "m.json"), "--policy", "greedy", "--model-id", "m",
            "--out", str(tmp_path / "g.json"), "--store", s3_locator, "--executor", "local"]
    original = s3_journal.SegmentJournalWriter._create_segment
    endpoint = s3_locator.split("endpoint=")[1]

    def unreachable_after_two_segments(self, seq: int, data: bytes) -> None:  # noqa: ANN001
        if seq >= 3:  # segment 0 the header, 1 the run header, 2 the first episode: then the server is gone
            raise io_error("append", f"{self._backend.name}/journals/{self.name}",
                           EndpointConnectionError(endpoint_url=f"{endpoint}/seg"))
        original(self, seq, data)

    monkeypatch.setattr(s3_journal.SegmentJournalWriter, "_create_segment", unreachable_after_two_segments)
    monkeypatch.setattr(store_runner, "JOURNAL_BATCH", 1)  # each episode its own journal write
    failed = CliRunner().invoke(app, args)
    lines = [line for line in failed.output.splitlines() if line.strip()]
    bucket_prefix = s3_locator.split("?")[0]
    assert failed.exit_code == 1 and len(lines) == 1, failed.output
    assert lines[0].startswith(f"error: store append failed at {bucket_prefix}/journals/run-"), lines[0]
    assert lines[0].endswith(f"cannot reach the S3 server at {endpoint} (EndpointConnectionError)"), lines[0]
    monkeypatch.setattr(s3_journal.SegmentJournalWriter, "_create_segment", original)
    again = CliRunner().invoke(app, args)
    n = len(manifest.episodes)
    assert again.exit_code == 0, again.output
    assert f"{n}/{n} episodes ({n - 1} run now, 1 resumed: 1 from the store's run journal" in again.output
    assert (tmp_path / "g.json").read_bytes() == reference


def test_a_broken_journal_writer_names_what_broke_it(tmp_path) -> None:  # noqa: ANN001
    """Once an append failed, every later append is refused naming the first failure (store and cause)."""
    from emberbench.store import JournalError, StoreIOError

    store = open_store(tmp_path / "s")
    journal = store.open_journal("run-x", create=True)
    key = store.put(b"{}")
    journal.append({"a": 1}, keys=[key])

    def down(blob: bytes) -> None:
        raise StoreIOError("append", "s3://b/p/journals/run-x", OSError(5, "Could not connect to the endpoint URL"))

    journal._persist = down
    with pytest.raises(StoreIOError):
        journal.append({"a": 2})
    with pytest.raises(JournalError, match=r"journal 'run-x': a previous append failed \(StoreIOError: store append "
                                           r"failed at s3://b/p/journals/run-x: Could not connect to the endpoint "
                                           r"URL\); reopen the journal"):
        journal.append({"a": 3})
    journal.close()
