"""The ``store`` CLI group: ls, cat, fsck, gc, and errors as one line."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from conftest import age, raw_journal, raw_object, write_raw, write_raw_journal, write_raw_object
from typer.testing import CliRunner

from emberbench.cli import store_cmd
from emberbench.store import Store


@pytest.fixture
def app() -> typer.Typer:
    """A throwaway app with only the store group registered."""
    root = typer.Typer()
    store_cmd.register(root)

    @root.callback()
    def _main() -> None:
        """Test root."""

    return root


def _run(app: typer.Typer, *args: str):
    return CliRunner().invoke(app, list(args))


def test_default_store() -> None:
    """EMBERBENCH_STORE wins when set and non-empty (an S3 URL kept intact); else ./.emberbench/store."""
    assert store_cmd.default_store({"EMBERBENCH_STORE": "/data/s"}) == "/data/s"
    assert store_cmd.default_store({"EMBERBENCH_STORE": "s3://bucket/runs"}) == "s3://bucket/runs"
    assert store_cmd.default_store({"EMBERBENCH_STORE": ""}) == str(Path(".emberbench/store"))
    assert store_cmd.default_store({}) == str(Path(".emberbench/store"))


def test_ls_and_cat(app: typer.Typer, store: Store) -> None:
    """ls lists refs, journals and objects; cat prints an object by key or by ref."""
    key = store.put(b"hello bytes")
    store.refs.set("results/one", key)
    with store.open_journal("run-x") as journal:
        journal.append({"i": 0}, keys=[key])
    out = _run(app, "store", "ls", "--store", store.locator, "--objects")
    assert out.exit_code == 0
    assert f"ref      {key[:16]}  results/one" in out.output
    assert "run-x  1 entries, unfinished" in out.output
    assert f"object   {key[:16]}  11" in out.output
    for name in (key, key[:16], "results/one"):
        out = _run(app, "store", "cat", name, "--store", store.locator, "--verify-data")
        assert out.exit_code == 0 and out.stdout_bytes == b"hello bytes"


def test_ls_fits_80_columns_and_full_prints_whole_keys(app: typer.Typer, local_store: Store) -> None:
    """Issue 27 (defect 8): `store ls` lines were 151 columns (a key and a run name of 64 hex digits each); now
    keys and run ids show their first 16 digits, every line but the store's own fits 80 columns, `--full`
    prints them whole, and `store cat` takes the short key as `ls` shows it."""
    store = local_store
    key = store.put(b"a result")
    run = "run-" + "ab" * 32
    store.refs.set(f"results/{run}", key)
    with store.open_journal(run) as journal:
        journal.append({"i": 0}, keys=[key])
    out = _run(app, "store", "ls", "--store", store.locator, "--objects")
    assert out.exit_code == 0, out.output
    assert all(len(line) <= 80 for line in out.output.splitlines()[1:]), out.output
    assert f"ref      {key[:16]}  results/run-{'ab' * 8}\n" in out.output and key not in out.output
    full = _run(app, "store", "ls", "--store", store.locator, "--full")
    assert f"ref      {key}  results/{run}" in full.output and f"journal  {run}  1 entries" in full.output
    assert _run(app, "store", "cat", key[:16], "--store", store.locator).stdout_bytes == b"a result"


def test_env_default(app: typer.Typer, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without --store, the store named by EMBERBENCH_STORE is used."""
    monkeypatch.setenv("EMBERBENCH_STORE", store.locator)
    out = _run(app, "store", "ls")
    assert out.exit_code == 0 and store.locator in out.output


def test_fsck_exit_status(app: typer.Typer, store: Store) -> None:
    """fsck exits 0 on a clean store and 1, naming the key, on a corrupt one."""
    key = store.put(b"data")
    assert _run(app, "store", "fsck", "--store", store.locator, "--connectivity").exit_code == 0
    write_raw_object(store, key, raw_object(store, key)[:-1])
    out = _run(app, "store", "fsck", "--store", store.locator, "--no-quarantine")
    assert out.exit_code == 1 and f"corrupt  {key}" in out.output and "(left in place)" in out.output


def test_gc_dry_run_then_apply(app: typer.Typer, local_store: Store) -> None:
    """gc only reports by default; --apply deletes."""
    store = local_store
    key = store.put(b"garbage")
    age(store, key, 7200)
    out = _run(app, "store", "gc", "--store", store.locator, "--grace", "60")
    assert out.exit_code == 0 and "would delete 1" in out.output and store.has(key)
    out = _run(app, "store", "gc", "--store", store.locator, "--grace", "60", "--apply")
    assert out.exit_code == 0 and "deleted 1" in out.output and not store.has(key)


def test_s3_url_is_not_a_folder(app: typer.Typer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression (issue 14): --store s3://... was taken as a local folder 's3:'; now it is S3 or a one-line error."""
    monkeypatch.chdir(tmp_path)
    out = _run(app, "store", "ls", "--store", "s3://Bad_Bucket/x")
    assert out.exit_code == 1 and "invalid bucket name" in out.output and out.output.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("ls",), "is not a store"),
        (("cat", "nope"), "no such ref"),
        (("cat", "0" * 64), "is not in the store"),
    ],
)
def test_errors_are_one_line(app: typer.Typer, store: Store, tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    """Store errors become a single 'error:' line and exit status 1, never a traceback."""
    where = str(tmp_path / "elsewhere") if args == ("ls",) else store.locator
    out = _run(app, "store", *args, "--store", where)
    assert out.exit_code == 1
    assert message in out.output and out.output.startswith("error: ") and out.output.count("\n") == 1


def test_s3_store_commands(app: typer.Typer, s3_locator: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """--store and EMBERBENCH_STORE take an s3:// locator for ls, cat, fsck and gc (issue 14)."""
    from emberbench.store import open_store

    st = open_store(s3_locator, create=True)
    key = st.put(b"remote bytes")
    st.refs.set("results/one", key)
    st.close()
    out = _run(app, "store", "ls", "--store", s3_locator, "--objects")
    assert out.exit_code == 0 and f"ref      {key[:16]}  results/one" in out.output
    assert "store s3://emberbench-test/" in out.output and "testing" not in out.output
    out = _run(app, "store", "cat", "results/one", "--store", s3_locator)
    assert out.exit_code == 0 and out.stdout_bytes == b"remote bytes"
    monkeypatch.setenv("EMBERBENCH_STORE", s3_locator)
    assert _run(app, "store", "fsck", "--connectivity", "--verify-data").exit_code == 0
    out = _run(app, "store", "gc", "--grace", "0", "--apply")
    assert out.exit_code == 0 and "deleted 0" in out.output


def test_ls_carries_on_past_damage(app: typer.Typer, store: Store) -> None:
    """Regression (issue 11): ls lists every entry, marks each damaged ref, journal and object, and exits 1."""
    good, bad = store.put(b"good"), store.put(b"bad object")
    store.refs.set("a-good", good)
    write_raw(store, "refs/b-bad", b"garbage")
    with store.open_journal("j-bad") as journal:
        journal.append_many([({"i": 0}, []), ({"i": 1}, [])])
    raw = bytearray(raw_journal(store, "j-bad"))
    raw[12] ^= 0xFF
    write_raw_journal(store, "j-bad", bytes(raw))
    with store.open_journal("j-good") as journal:
        journal.append({"i": 0}, keys=[good])
    write_raw_object(store, bad, b"EBSX" + raw_object(store, bad)[4:])
    out = _run(app, "store", "ls", "--store", store.locator, "--objects")
    assert out.exit_code == 1
    assert f"ref      {good[:16]}  a-good" in out.output and "damaged  ref b-bad" in out.output
    assert "damaged  journal j-bad" in out.output and "j-good  1 entries, unfinished" in out.output
    assert f"damaged  object {bad[:16]}" in out.output and f"object   {good[:16]}  4" in out.output
    assert out.output.rstrip().splitlines()[-1].startswith("error: 3 damaged entries")


def test_fsck_reports_every_damaged_root(app: typer.Typer, store: Store) -> None:
    """fsck names each unreadable ref and journal and still checks the rest."""
    key = store.put(b"x")
    store.refs.set("ok", key)
    write_raw(store, "refs/broken", b"nope")
    write_raw(store, "refs/broken2", b"nope")
    out = _run(app, "store", "fsck", "--store", store.locator, "--connectivity")
    assert out.exit_code == 1
    assert "unreadable ref broken:" in out.output and "unreadable ref broken2:" in out.output
