"""The output policy: writers create or replace regular files only, and never follow a link."""

from __future__ import annotations

import errno
import os
import socket
import stat
from pathlib import Path

import pytest

from emberbench.io import atomic
from emberbench.io.atomic import atomic_write_bytes, check_output_path
from emberbench.errors import OutputPathError


def _socket(path: Path) -> None:
    sock, cwd = socket.socket(socket.AF_UNIX), os.getcwd()
    os.chdir(path.parent)
    try:
        sock.bind(path.name)
    finally:
        os.chdir(cwd)
        sock.close()


def _char_device(path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))


def _link_to_file(path: Path) -> None:
    (path.parent / "target.json").write_bytes(b"precious")
    path.symlink_to(path.parent / "target.json")


@pytest.mark.parametrize("make, what", [
    (lambda p: os.mkfifo(p), "a FIFO"),
    (_char_device, "a character device"),
    (_socket, "a socket"),
    (lambda p: p.mkdir(), "a folder"),
    (_link_to_file, "a symbolic link"),
    (lambda p: p.symlink_to(p.parent / "elsewhere"), "a symbolic link"),
])
def test_writer_never_replaces_a_special_file(tmp_path: Path, make, what: str) -> None:  # noqa: ANN001
    """Issue 12 (defect 1): the atomic writer refuses any existing target that is not a regular file (a link
    included, whatever it points to), leaves it and its target as they were, and leaves no temporary file."""
    target = tmp_path / "out.json"
    make(target)
    before = {p.name: os.lstat(p) for p in tmp_path.iterdir()}
    with pytest.raises(OutputPathError, match=f"out.json is {what}; EMBERBench writes only regular files"):
        atomic_write_bytes(target, b"{}")
    after = {p.name: os.lstat(p) for p in tmp_path.iterdir()}
    assert {k: (v.st_mode, v.st_ino, v.st_mtime_ns) for k, v in after.items()} == \
           {k: (v.st_mode, v.st_ino, v.st_mtime_ns) for k, v in before.items()}
    if what == "a symbolic link" and (tmp_path / "target.json").exists():
        assert (tmp_path / "target.json").read_bytes() == b"precious"


def test_writer_replaces_a_regular_file_and_creates_a_new_one(tmp_path: Path) -> None:
    """A regular file is replaced atomically; a new path is created."""
    target = tmp_path / "out.json"
    target.write_bytes(b"old")
    atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"new"
    atomic_write_bytes(tmp_path / "fresh.json", [b"a", b"b"])
    assert (tmp_path / "fresh.json").read_bytes() == b"ab"


@pytest.mark.parametrize(("where", "message"), [
    ("missing/out.json", "the output folder .*missing does not exist"),
    ("file.txt/out.json", "file.txt is not a folder"),
])
def test_output_folder_must_exist(tmp_path: Path, where: str, message: str) -> None:
    """A missing folder, or a file where the folder should be, is one clear error before anything is written."""
    (tmp_path / "file.txt").write_bytes(b"x")
    with pytest.raises(OutputPathError, match=message):
        check_output_path(tmp_path / where)


def test_target_swapped_for_a_fifo_during_the_write_is_not_replaced(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """The policy is checked again just before the rename: a FIFO that appeared meanwhile survives."""
    target = tmp_path / "out.json"
    real_fsync = os.fsync

    def fsync_then_swap(fd: int) -> None:
        real_fsync(fd)
        if not target.exists():
            os.mkfifo(target)

    monkeypatch.setattr(atomic.os, "fsync", fsync_then_swap)
    with pytest.raises(OutputPathError, match="is a FIFO"):
        atomic_write_bytes(target, b"{}")
    assert stat.S_ISFIFO(os.lstat(target).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


@pytest.mark.parametrize("where", ["write", "fsync"])
@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT])
def test_a_full_disk_names_the_file_it_could_not_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       where: str, code: int) -> None:
    """Issue 22 (defect 8): a full disk (or quota) said `No space left on device` and nothing else; the error
    now carries the target's path (the CLI prints it), keeps its errno and type, and no temporary file stays."""
    def full(*args: object) -> None:
        raise OSError(code, os.strerror(code))  # as the kernel says it: no file name

    monkeypatch.setattr(atomic.os, where, full)
    target = tmp_path / "out.json"
    with pytest.raises(OSError) as caught:
        atomic_write_bytes(target, [b"{", b"}"])
    assert caught.value.errno == code and caught.value.filename == str(target)
    assert str(target) in str(caught.value) and os.strerror(code) in str(caught.value)
    assert list(tmp_path.iterdir()) == []


def test_large_and_small_chunks_are_written_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks are gathered into writes of about a MiB, a large one goes alone, a short write goes on."""
    real_write, sizes = os.write, []

    def short(fd: int, data: memoryview) -> int:
        sizes.append(len(data))
        return real_write(fd, data[:max(1, len(data) // 2)])

    monkeypatch.setattr(atomic.os, "write", short)
    chunks = [b"a" * 10] * 1000 + [b"b" * (3 << 20)] + [b"c"] * 5
    atomic_write_bytes(tmp_path / "out.bin", chunks)
    assert (tmp_path / "out.bin").read_bytes() == b"".join(chunks)
    assert max(sizes) == 3 << 20 and len(sizes) < 100


def test_an_error_of_the_data_source_is_not_blamed_on_the_target(tmp_path: Path) -> None:
    """An OSError raised while producing the chunks (reading an input) propagates as it was: it names the input,
    not the file being written."""
    def chunks():  # noqa: ANN202
        yield b"{"
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", "input.json")

    with pytest.raises(FileNotFoundError) as caught:
        atomic_write_bytes(tmp_path / "out.json", chunks())
    assert caught.value.filename == "input.json" and list(tmp_path.iterdir()) == []
