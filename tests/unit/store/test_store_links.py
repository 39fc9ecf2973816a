"""A local store never follows a link and never adopts a folder that is not a store (issue 12, defect 5 and 8)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from emberbench.store import (
    StoreError,
    StoreFormatError,
    StoreLayoutError,
    Store,
    fsck,
    journal_name,
    key_of,
    open_store,
)
from emberbench.store.journal import HEADER

DATA = b"record bytes"
KEY = key_of(DATA)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _plant(store: Store, rel: str, outside: Path) -> None:
    """Replace the store entry ``rel`` with a link to ``outside`` (a folder holding a copy of it)."""
    target = store.root / rel
    if target.is_dir():
        shutil.copytree(target, outside, dirs_exist_ok=True)
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside, target)


def _put(st: Store) -> None:
    st.put(DATA)


def _ref(st: Store) -> None:
    st.refs.set("results/run", st.put(DATA))


def _journal(st: Store) -> None:
    with st.open_journal("run-x") as journal:
        journal.append({"index": 0})


def _quarantine(st: Store) -> None:
    key = st.put(DATA)
    path = st.layout.object_path(key)
    os.chmod(path, 0o644)
    path.write_bytes(b"damaged")
    report = fsck(st)
    assert report.corrupt and report.corrupt[0].quarantined_to is None


CASES: list[tuple[str, Callable[[Store], None], bool]] = [
    # (entry replaced by a link, operation that must refuse it, refused already at open)
    ("objects", _put, True),
    (f"objects/{KEY[:2]}", _put, True),
    ("tmp", _put, True),
    ("refs/results", _ref, False),
    ("refs", _ref, True),
    ("journals", _journal, True),
    ("quarantine", _quarantine, True),
]


@pytest.mark.parametrize(("rel", "operation", "at_open"), CASES, ids=[c[0] for c in CASES])
def test_linked_entry_is_refused_never_followed(tmp_path: Path, rel: str, operation: Callable[[Store], None],
                                                at_open: bool) -> None:
    """A link planted in the store makes the operation fail with one line; nothing outside changes."""
    store = open_store(tmp_path / "store", create=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious").write_bytes(b"do not touch")
    if rel == "refs/results":
        (store.root / "refs" / "results").mkdir()
    _plant(store, rel, outside)
    before = _snapshot(outside)
    if rel == "quarantine":
        with pytest.raises(StoreLayoutError, match="quarantine"):
            operation(store)
    else:
        with pytest.raises(StoreLayoutError) as info:
            operation(store)
        assert "\n" not in str(info.value) and "link" in str(info.value)
    assert _snapshot(outside) == before
    if at_open:
        with pytest.raises(StoreLayoutError):
            open_store(tmp_path / "store")


def test_journal_link_is_never_overwritten(tmp_path: Path) -> None:
    """Regression: a journal that links to an outside file starting with a journal header is refused, not rewritten;
    deleting the journal removes the link itself (issue 22, defect 7), never what it points to."""
    store = open_store(tmp_path / "store", create=True)
    victim = tmp_path / "victim.bin"
    victim.write_bytes(HEADER + b"x" * 420)
    name = journal_name("manifest", "model")
    os.symlink(victim, store.layout.journal_path(name))
    with pytest.raises(StoreLayoutError):
        store.open_journal(name)
    with pytest.raises(StoreLayoutError):
        store.read_journal(name)
    assert not fsck(store).ok
    assert store.special_journal(name) == "a symbolic link"
    assert store.delete_journal(name) is True
    assert not os.path.lexists(store.layout.journal_path(name)) and store.journal_names() == []
    assert victim.read_bytes() == HEADER + b"x" * 420
    assert fsck(store).ok


@pytest.mark.parametrize("kind", ["fifo", "socket", "folder"])
def test_a_special_file_where_a_journal_belongs_is_deleted_unopened(tmp_path: Path, kind: str) -> None:
    """Issue 22 (defect 7): a FIFO or socket where a journal belongs is removed by delete_journal without being
    opened (a FIFO with no writer would block a reader); a folder there is refused and left."""
    import socket

    store = open_store(tmp_path / "store", create=True)
    name = journal_name("manifest", "model")
    path = store.layout.journal_path(name)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        sock, cwd = socket.socket(socket.AF_UNIX), os.getcwd()
        os.chdir(path.parent)
        try:
            sock.bind(path.name)
        finally:
            os.chdir(cwd)
            sock.close()
    else:
        path.mkdir()
    if kind == "folder":
        assert store.special_journal(name) == "a folder"
        with pytest.raises(StoreLayoutError, match="folder"):
            store.delete_journal(name)
        assert path.is_dir()
        return
    assert store.special_journal(name) == ("a FIFO" if kind == "fifo" else "a socket")
    assert store.delete_journal(name) is True and not os.path.lexists(path)
    assert store.special_journal(name) is None and store.delete_journal(name) is False


def test_fifo_object_does_not_block(tmp_path: Path) -> None:
    """A FIFO planted as an object is refused at once instead of blocking the reader."""
    store = open_store(tmp_path / "store", create=True)
    os.mkfifo(store.layout.object_path(KEY))
    with pytest.raises(StoreLayoutError, match="not a regular file"):
        store.get(KEY)
    assert fsck(store).stray_files == (f"objects/{KEY[:2]}/{KEY[2:]}",)


def test_foreign_entry_refused(tmp_path: Path) -> None:
    """A store whose top level holds an entry that is not part of the layout is refused with one line."""
    store = open_store(tmp_path / "store", create=True)
    (store.root / "notes.txt").write_text("hello")
    with pytest.raises(StoreLayoutError, match="notes.txt"):
        open_store(store.root)


def test_non_empty_folder_is_not_turned_into_a_store(tmp_path: Path) -> None:
    """Regression: --store on a non-empty folder that is not a store is refused, and the folder is unchanged."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "thesis.tex").write_text("chapter 1")
    with pytest.raises(StoreFormatError, match="non-empty folder"):
        open_store(folder, create=True)
    assert sorted(os.listdir(folder)) == ["thesis.tex"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert open_store(empty, create=True).put(DATA) == KEY


def test_missing_format_is_an_error_not_recreated(tmp_path: Path) -> None:
    """Regression: a deleted format file is reported, and not silently recreated, even with create."""
    store = open_store(tmp_path / "store", create=True)
    store.put(DATA)
    os.unlink(store.root / "format")
    for create in (False, True):
        with pytest.raises(StoreFormatError, match="format file is missing"):
            open_store(store.root, create=create)
    assert not (store.root / "format").exists()


@pytest.mark.parametrize("entry", ["format", f"refs/r"])
def test_oversized_small_files_are_capped(tmp_path: Path, entry: str) -> None:
    """The format file and refs are read with a cap: a planted giant is refused, not loaded."""
    store = open_store(tmp_path / "store", create=True)
    path = store.root / entry
    if path.exists():
        os.chmod(path, 0o644)
    path.write_bytes(b"0" * 100_000)
    with pytest.raises(StoreError, match="cap"):
        if entry == "format":
            open_store(store.root)
        else:
            store.refs.get("r")
