"""The one output policy and the one atomic file writer.

Output policy (docs/formats.md, "Output policy"): a writer only ever creates
or replaces a *regular* file.

* An existing target that is anything else is refused before anything is
  written (:func:`check_output_path`): a FIFO or a device is not written
  through, a folder or socket is not replaced, so no command can turn
  ``/dev/null`` into a file or block on a FIFO.
* A symbolic link as the target is refused, never followed: whatever it
  points to stays as it is. (Links in the folders above the target are
  followed, like any path.)
* The target's folder must exist.

A write goes to a temporary file ``.<name>.<random>.tmp`` in the target's own
folder, is flushed and fsynced, renamed over the target with ``os.replace``,
and the folder is fsynced so the rename itself is durable. A crash leaves the
old file or the new one, never a mix; at worst a stray ``.tmp`` file remains,
which no reader ever opens. The check is repeated just before the rename, so
only a swap in the instant between the two can slip through (a rename cannot
be made conditional on what it replaces).

A failure to write (a full disk, a quota, an I/O error) is raised as the
``OSError`` it was, with the target's path as its file name: the kernel's
``No space left on device`` names no file, and the command's one error
line then says which output could not be written.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import OutputPathError


def _default_mode() -> int:
    """Permission bits a plain ``open(path, "w")`` would give (0666 minus the umask)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


_MODE = _default_mode()


def fsync_dir(folder: str | os.PathLike[str]) -> None:
    """fsync a folder so that a rename or link inside it is durable."""
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def check_output_path(path: str | os.PathLike[str]) -> Path:
    """Apply the output policy to ``path``: nothing there, or a regular file (never a link); the folder exists.

    Raises:
        OutputPathError: something other than a regular file is there, or
            the folder is missing or not a folder.
    """
    target = Path(path)
    try:
        mode = os.lstat(target).st_mode
    except (FileNotFoundError, NotADirectoryError):
        _check_folder(target)
        return target
    except OSError as exc:
        raise OutputPathError(f"{target}: cannot check the output path: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        from .input_policy import describe_path

        raise OutputPathError(f"{target} is {describe_path(target)}; EMBERBench writes only regular files "
                              "and never replaces anything else")
    return target


def _check_folder(target: Path) -> None:
    folder = target.parent
    try:
        mode = os.stat(folder).st_mode
    except FileNotFoundError:
        raise OutputPathError(f"{target}: the output folder {folder} does not exist") from None
    except NotADirectoryError:
        raise OutputPathError(f"{target}: a part of {folder} is not a folder") from None
    except OSError as exc:
        raise OutputPathError(f"{target}: cannot check the output folder: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(mode):
        raise OutputPathError(f"{target}: {folder} is not a folder")


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes | Iterable[bytes]) -> None:
    """Write ``data`` (bytes, or an iterable of byte chunks) to ``path`` atomically.

    The target must pass :func:`check_output_path`. The temporary file is
    removed if anything fails before the rename; the original error propagates.
    """
    target = check_output_path(path)
    folder = target.parent if str(target.parent) else Path(".")
    with _naming(target):
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        try:
            with _naming(target):
                os.fchmod(fd, _MODE)  # mkstemp creates 0600; give the file ordinary permissions
            _write_chunks(fd, (data,) if isinstance(data, (bytes, bytearray, memoryview)) else data, target)
            with _naming(target):
                os.fsync(fd)
        finally:
            with _naming(target):
                os.close(fd)
        check_output_path(target)  # again: the target may have changed while the data was written
        with _naming(target):
            os.replace(tmp_name, target)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        raise
    with _naming(target):
        fsync_dir(folder)


_BUFFER = 1 << 20


def _write_chunks(fd: int, chunks: Iterable[bytes], target: Path) -> None:
    """Write ``chunks`` to ``fd`` in writes of about :data:`_BUFFER` bytes (small chunks are gathered).

    Unbuffered by Python, so that nothing is left to flush (and to fail
    again, unnamed) when the file is closed. An error of the source (the
    iterable) propagates as it is: it is not the target's.
    """
    pending = bytearray()
    for chunk in chunks:
        if pending and len(pending) + len(chunk) > _BUFFER:
            _write_all(fd, pending, target)
            pending.clear()
        if len(chunk) >= _BUFFER:
            _write_all(fd, chunk, target)
        else:
            pending += chunk
    _write_all(fd, pending, target)


def _write_all(fd: int, data: bytes | bytearray | memoryview, target: Path) -> None:
    """Every byte of ``data`` to ``fd``; a short write goes on, a write of nothing is a full disk."""
    view = memoryview(data)
    while view:
        with _naming(target):
            written = os.write(fd, view)
            if written <= 0:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]


@contextmanager
def _naming(target: Path) -> Iterator[None]:
    """Make an OSError of writing ``target`` name it: a full disk (ENOSPC, EDQUOT) says nothing of the file.

    The error keeps its errno (and so its type: ``OSError(errno, ...)``
    picks the subclass); its file name becomes the target, never the
    temporary file the user has not heard of.
    """
    try:
        yield
    except OSError as exc:
        if exc.filename == os.fspath(target) or exc.errno is None:
            raise
        raise OSError(exc.errno, exc.strerror or str(exc), os.fspath(target)) from exc


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ASCII/UTF-8 ``text`` to ``path`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))
