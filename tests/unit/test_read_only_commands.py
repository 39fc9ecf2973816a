"""Every read command works on a read-only store and writes nothing: bytes unchanged, and a trap on every write."""

from __future__ import annotations


import pytest
from emberbench.evaluation.runner import run_evaluation
from emberbench.evaluation.store_runner import open_store
from tests.heap import collect_dropped
from tests.run_support import invoke, small_manifest

_S3_WRITES = ("put_object", "delete_object", "delete_objects", "copy_object", "create_multipart_upload",
              "upload_part", "complete_multipart_upload", "abort_multipart_upload", "put_object_retention",
              "put_object_legal_hold")


class WriteAttempted(BaseException):
    """Raised by the traps: a BaseException, so no command can swallow it as a store error."""


class _TrapClient:
    """A boto3 client whose every mutating call is a WriteAttempted (reads pass through)."""

    def __init__(self, inner) -> None:  # noqa: ANN001
        self._inner = inner

    def __getattr__(self, name: str):  # noqa: ANN204
        if name in _S3_WRITES:
            def trap(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
                raise WriteAttempted(f"S3 {name} {kwargs.get('Key', '')}")
            return trap
        return getattr(self._inner, name)


class _TrapBackend:
    """Wraps a backend: its write methods are traps, everything else passes through."""

    def __init__(self, inner) -> None:  # noqa: ANN001
        self._inner = inner

    def __getattr__(self, name: str):  # noqa: ANN204
        from emberbench.store.readonly import WRITES

        if name in WRITES:
            def trap(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
                raise WriteAttempted(f"backend {name}")
            return trap
        return getattr(self._inner, name)


@pytest.fixture
def trapped(monkeypatch):  # noqa: ANN001
    """Every store a command opens gets traps under its read-only layer (backend methods and the S3 client)."""
    import emberbench.store as store_package
    from emberbench.store.readonly import ReadOnlyBackend

    real = store_package.open_store

    def opener(locator, **kwargs):  # noqa: ANN001, ANN003, ANN202
        st = real(locator, **kwargs)
        backend = st.backend.inner if isinstance(st.backend, ReadOnlyBackend) else st.backend
        if hasattr(backend, "client"):
            backend.client = _TrapClient(backend.client)
            backend.leases.client = backend.client
        if isinstance(st.backend, ReadOnlyBackend):
            st.backend.inner = _TrapBackend(backend)
        return st

    monkeypatch.setattr(store_package, "open_store", opener)


def snapshot(st) -> dict[str, object]:  # noqa: ANN001
    """Every entry with its bytes and age (local: mtime and mode too; S3: ETag and LastModified).

    Stores that earlier in-process commands opened and dropped are collected first: each holds a writer
    lease file until then, which would otherwise vanish between two snapshots.
    """
    collect_dropped()
    if st.locator.startswith("s3://"):
        return {item["Key"]: (item["ETag"], item["LastModified"], item["Size"])
                for item in st.backend.list_prefix(st.backend.prefix)}
    out = {}
    for path in sorted(st.root.rglob("*")):
        info = path.lstat()
        out[str(path.relative_to(st.root))] = (info.st_mtime_ns, info.st_mode,
                                               path.read_bytes() if path.is_file() else None)
    return out


@pytest.fixture(params=["local", "s3"])
def filled(request, tmp_path, suite):  # noqa: ANN001
    """A store with two complete runs and a catalog index; its locator and the run ids."""
    locator = str(tmp_path / "s") if request.param == "local" else request.getfixturevalue("s3_locator")
    st = open_store(locator)
    manifest = small_manifest(suite)
    for policy in ("greedy", "random"):
        run_evaluation(manifest, suite, policy, policy, tmp_path / f"{policy}.json", store=st)
    assert invoke("runs", "ls", "--store", locator).exit_code == 0  # builds the index
    st.close()
    yield locator, sorted(st.journal_names()), tmp_path


COMMANDS = [
    ("runs", "ls"),
    ("runs", "ls", "--json", "--tag", "none", "--sort", "started", "--limit", "1"),
    ("runs", "ls", "--scan"),
    ("runs", "show", "{run}"),
    ("runs", "verify", "{run}"),
    ("runs", "export", "{run}", "--out", "{tmp}/exported.json"),
    ("store", "audit"),
    ("store", "fsck", "--verify-data", "--connectivity"),
    ("store", "ls", "--objects"),
    ("store", "log"),
    ("store", "info"),
]


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c[:2]) + ("" if len(c) < 3 else " " + c[2])
                                                    for c in COMMANDS])
def test_read_commands_work_read_only_and_write_nothing(filled, trapped, command) -> None:  # noqa: ANN001
    """With --read-only each read command succeeds; no write is attempted (traps) and no byte changes."""
    locator, runs, tmp = filled
    st = open_store(locator)
    before = snapshot(st)
    args = [a.format(run=runs[0][4:12], tmp=tmp) for a in command]
    result = invoke(*args, "--store", locator, "--read-only")
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    if command[:2] == ("runs", "verify"):
        assert "(not recorded: the store is read-only)" in result.output
    assert snapshot(st) == before


def test_a_stale_index_is_not_saved_read_only(filled, request) -> None:  # noqa: ANN001
    """A read-only `runs ls` over a damaged index lists every run and says it saved nothing."""
    locator, runs, tmp = filled
    st = open_store(locator)
    st.refs.set("catalog/index", st.put(b"{}"))
    st.close()
    request.getfixturevalue("trapped")
    before = snapshot(st)
    result = invoke("runs", "ls", "--store", locator, "--read-only")
    assert result.exit_code == 0 and "none was saved (read-only)" in result.output, result.output
    assert snapshot(st) == before


@pytest.mark.parametrize("command", [("store", "fsck", "--repair"), ("store", "log", "--adopt")])
def test_writing_options_are_refused_with_read_only(filled, command) -> None:  # noqa: ANN001
    """An option that writes, given with --read-only, is a usage error (exit 2)."""
    locator, _, _ = filled
    result = invoke(*command, "--store", locator, "--read-only")
    assert result.exit_code == 2 and "--read-only" in result.output


def test_report_and_verify_of_files_need_no_store(filled, tmp_path) -> None:  # noqa: ANN001
    """`verify FILE` and `report` read files only: they work on an exported artifact without any store."""
    locator, runs, tmp = filled
    assert invoke("runs", "export", runs[0][4:12], "--out", tmp_path / "a.json", "--store", locator,
                  "--read-only").exit_code == 0
    assert invoke("verify", tmp_path / "a.json").exit_code == 0
    report = invoke("report", tmp_path / "a.json", "--out", tmp_path / "rep", "--resamples", "100")
    assert report.exit_code == 0, report.output


def test_the_traps_catch_a_write(filled, trapped) -> None:  # noqa: ANN001
    """Without --read-only, `runs verify` records its verdict: on S3 the trap under the store catches that write."""
    locator, runs, _ = filled
    if not locator.startswith("s3://"):
        pytest.skip("the client trap is the S3 backend's")
    with pytest.raises(WriteAttempted, match="put_object"):
        invoke("runs", "verify", runs[0][4:12], "--store", locator)
