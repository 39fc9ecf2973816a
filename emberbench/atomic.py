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
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from .errors import OutputPathError


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
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        os.fchmod(fd, _MODE)  # mkstemp creates 0600; give the file ordinary permissions
        with os.fdopen(fd, "wb") as handle:
            if isinstance(data, (bytes, bytearray, memoryview)):
                handle.write(data)
            else:
                for chunk in data:
                    handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        check_output_path(target)  # again: the target may have changed while the data was written
        os.replace(tmp_name, target)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        raise
    fsync_dir(folder)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ASCII/UTF-8 ``text`` to ``path`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))
