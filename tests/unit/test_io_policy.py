"""The input and output policies: regular files only, size caps, a nesting cap."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from emberbench.atomic import atomic_write_bytes
from emberbench.canonical import parse_json_strict
from emberbench.errors import CanonicalFormError, InputFileError, OutputPathError
from emberbench.input_policy import InputKind, check_json_depth, read_input


@pytest.mark.parametrize("make, what", [
    (lambda p: os.mkfifo(p), "a FIFO"),
    (lambda p: p.mkdir(), "a folder"),
])
def test_reader_refuses_special_files_without_blocking(tmp_path: Path, make, what: str) -> None:
    """A FIFO or folder is refused at once, naming the file and what it is."""
    target = tmp_path / "in.json"
    make(target)
    with pytest.raises(InputFileError, match=f"in.json: JSON document must be a regular file, not {what}"):
        read_input(target, InputKind("JSON document", 100))


def test_reader_refuses_a_file_over_its_cap(tmp_path: Path) -> None:
    """A file larger than its kind's cap is refused before it is read."""
    target = tmp_path / "big.json"
    target.write_bytes(b"x" * 101)
    with pytest.raises(InputFileError, match="exceeds the cap of 100 bytes"):
        read_input(target, InputKind("JSON document", 100))
    target.write_bytes(b"x" * 100)
    assert read_input(target, InputKind("JSON document", 100)) == b"x" * 100


@pytest.mark.parametrize("text, ok", [
    ("[" * 64 + "]" * 64, True),
    ("[" * 65 + "]" * 65, False),
    ('{"a":' * 65 + "1" + "}" * 65, False),
    ('["' + "[" * 200 + '"]', True),  # brackets inside a string do not nest
    ('["\\\\",' + "[" * 70 + "]" * 70 + "]", False),  # an escaped backslash ends no string
    ('["\\"' + "[" * 70 + '"]', True),  # an escaped quote does not end the string
    ("[{}" * 40 + "]" * 40, True),
])
def test_nesting_cap(text: str, ok: bool) -> None:
    """The depth check counts real nesting only, exactly at the cap of 64."""
    if ok:
        check_json_depth(text, where="t")
    else:
        with pytest.raises(CanonicalFormError, match="nests deeper than 64 levels"):
            check_json_depth(text, where="t")


def test_depth_bomb_is_one_clean_error() -> None:
    """JSON nested 100,000 deep gives the nesting error, never a RecursionError."""
    with pytest.raises(CanonicalFormError, match="deep.json: JSON nests deeper"):
        parse_json_strict("[" * 100_000 + "]" * 100_000, where="deep.json")


@pytest.mark.parametrize("make, what", [
    (lambda p: os.mkfifo(p), "a FIFO"),
    (lambda p: p.symlink_to(p.parent / "elsewhere"), "a symbolic link"),
    (lambda p: p.mkdir(), "a folder"),
])
def test_writer_never_replaces_a_special_file(tmp_path: Path, make, what: str) -> None:
    """The atomic writer refuses any existing target that is not a regular file, and leaves it as it was."""
    target = tmp_path / "out.json"
    make(target)
    before = os.lstat(target)
    with pytest.raises(OutputPathError, match=f"out.json is {what}; EMBERBench writes only regular files"):
        atomic_write_bytes(target, b"{}")
    after = os.lstat(target)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_writer_replaces_a_regular_file(tmp_path: Path) -> None:
    """A regular file is replaced atomically."""
    target = tmp_path / "out.json"
    target.write_bytes(b"old")
    atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"new"
