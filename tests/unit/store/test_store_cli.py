"""The ``store`` CLI group: ls, cat, fsck, gc, and errors as one line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import typer
from conftest import age
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


def test_default_store_dir() -> None:
    """EMBERBENCH_STORE wins when set and non-empty; else ./.emberbench/store."""
    assert store_cmd.default_store_dir({"EMBERBENCH_STORE": "/data/s"}) == Path("/data/s")
    assert store_cmd.default_store_dir({"EMBERBENCH_STORE": ""}) == Path(".emberbench/store")
    assert store_cmd.default_store_dir({}) == Path(".emberbench/store")


def test_ls_and_cat(app: typer.Typer, store: Store) -> None:
    """ls lists refs, journals and objects; cat prints an object by key or by ref."""
    key = store.put(b"hello bytes")
    store.refs.set("results/one", key)
    with store.open_journal("run-x") as journal:
        journal.append({"i": 0}, keys=[key])
    out = _run(app, "store", "ls", "--store", str(store.root), "--objects")
    assert out.exit_code == 0
    assert f"ref      {key}  results/one" in out.output
    assert "run-x  1 entries, unfinished" in out.output
    assert f"object   {key}  11" in out.output
    for name in (key, "results/one"):
        out = _run(app, "store", "cat", name, "--store", str(store.root), "--verify-data")
        assert out.exit_code == 0 and out.stdout_bytes == b"hello bytes"


def test_env_default(app: typer.Typer, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without --store, the store named by EMBERBENCH_STORE is used."""
    monkeypatch.setenv("EMBERBENCH_STORE", str(store.root))
    out = _run(app, "store", "ls")
    assert out.exit_code == 0 and str(store.root) in out.output


def test_fsck_exit_status(app: typer.Typer, store: Store) -> None:
    """fsck exits 0 on a clean store and 1, naming the key, on a corrupt one."""
    key = store.put(b"data")
    assert _run(app, "store", "fsck", "--store", str(store.root), "--connectivity").exit_code == 0
    path = store.layout.object_path(key)
    os.chmod(path, 0o644)
    path.write_bytes(path.read_bytes()[:-1])
    out = _run(app, "store", "fsck", "--store", str(store.root), "--no-quarantine")
    assert out.exit_code == 1 and f"corrupt  {key}" in out.output and "(left in place)" in out.output


def test_gc_dry_run_then_apply(app: typer.Typer, store: Store) -> None:
    """gc only reports by default; --apply deletes."""
    key = store.put(b"garbage")
    age(store, key, 7200)
    out = _run(app, "store", "gc", "--store", str(store.root), "--grace", "60")
    assert out.exit_code == 0 and "would delete 1" in out.output and store.has(key)
    out = _run(app, "store", "gc", "--store", str(store.root), "--grace", "60", "--apply")
    assert out.exit_code == 0 and "deleted 1" in out.output and not store.has(key)


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
    where = str(tmp_path / "elsewhere") if args == ("ls",) else str(store.root)
    out = _run(app, "store", *args, "--store", where)
    assert out.exit_code == 1
    assert message in out.output and out.output.startswith("error: ") and out.output.count("\n") == 1
