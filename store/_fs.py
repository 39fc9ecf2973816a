"""Low-level file operations shared by the store: full writes, fsyncs, temps.

Every failure surfaces as :class:`~store.errors.StoreIOError` naming the step
that failed; nothing here retries. Calls go through the ``os`` module at call
time (``os.write``, ``os.fsync``...) so tests can inject failures by
monkeypatching them.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from .errors import StoreIOError

_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
TEMP_SUFFIX = ".tmp"


def write_all(fd: int, data: bytes | memoryview, path: str, key: str | None = None) -> None:
    """Write every byte of ``data`` to ``fd``; a short write continues, an error raises.

    Raises:
        StoreIOError: with ``operation="write"``; a zero-length write counts as
            ENOSPC, because looping on it would never end.
    """
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except OSError as exc:
            raise StoreIOError("write", path, exc, key=key) from exc
        if written <= 0:
            exc = OSError(28, "No space left on device (zero-length write)")
            raise StoreIOError("write", path, exc, key=key) from exc
        view = view[written:]


def fsync_fd(fd: int, path: str, key: str | None = None) -> None:
    """fsync ``fd``, raising :class:`StoreIOError` on failure.

    An fsync error is never retried: after a failed fsync, Linux may already
    have dropped the dirty pages, so a second fsync can succeed without the
    data ever reaching the disk.
    """
    try:
        os.fsync(fd)
    except OSError as exc:
        raise StoreIOError("fsync", path, exc, key=key) from exc


def fsync_dir(folder: str | os.PathLike[str], key: str | None = None) -> None:
    """fsync a folder so that a link, rename or unlink inside it is durable."""
    path = os.fspath(folder)
    try:
        fd = os.open(path, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
    except OSError as exc:
        raise StoreIOError("open folder", path, exc, key=key) from exc
    try:
        fsync_fd(fd, path, key)
    finally:
        os.close(fd)


def temp_name(stem: str) -> str:
    """A fresh, unguessable temp file name; ``stem`` only helps a human reading tmp/."""
    return f".{stem[:24]}.{os.getpid()}.{secrets.token_hex(8)}{TEMP_SUFFIX}"


def write_temp(folder: Path, stem: str, data: bytes, key: str | None = None) -> Path:
    """Create a temp file in ``folder`` holding ``data``, fsynced and closed.

    The temp is removed again if any step fails, and the failure is raised.
    Its mode is read-only: nothing ever modifies a stored file in place.
    """
    path = folder / temp_name(stem)
    spath = os.fspath(path)
    try:
        fd = os.open(spath, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_CLOEXEC, 0o444)
    except OSError as exc:
        raise StoreIOError("create", spath, exc, key=key) from exc
    try:
        try:
            write_all(fd, data, spath, key)
            fsync_fd(fd, spath, key)
        finally:
            os.close(fd)
    except BaseException:
        remove_quietly(path)
        raise
    return path


def remove_quietly(path: Path) -> None:
    """Unlink ``path`` if it exists; a failure leaves a stray temp fsck reports."""
    try:
        os.unlink(path)
    except OSError:
        pass


def atomic_replace(target: Path, data: bytes, key: str | None = None) -> None:
    """Write ``data`` to ``target`` atomically: temp beside it, fsync, rename, fsync folder.

    Readers see the old content or the new, never a mix. Used for refs and the
    format file, which are small and rewritten whole.
    """
    folder = target.parent
    tmp = write_temp(folder, target.name, data, key)
    try:
        os.replace(tmp, target)
    except OSError as exc:
        remove_quietly(tmp)
        raise StoreIOError("rename", os.fspath(target), exc, key=key) from exc
    fsync_dir(folder, key)
