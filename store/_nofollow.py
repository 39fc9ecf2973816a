"""Path operations inside a local store that never follow a symbolic link.

Every store path is reached from the store's root folder one component at a
time, each opened with ``O_NOFOLLOW | O_DIRECTORY`` relative to the folder
before it (``openat``), and files are opened with ``O_NOFOLLOW`` and checked
to be regular files. A link anywhere inside the store (``objects/``, a
fan-out folder, ``refs/...``, ``journals/``, a journal file, ``quarantine/``,
``tmp/``) is therefore refused with :class:`~store.errors.StoreLayoutError`,
never followed, so no read or write can leave the store through one.

The root folder itself is the caller's choice and may be reached through
links; everything below it may not.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator, Sequence

from .errors import StoreIOError, StoreLayoutError

O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIR_FLAGS = os.O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
_LINK_ERRNOS = {errno.ELOOP, errno.ENOTDIR, errno.EMLINK}


def _refuse(path: str, exc: OSError | None = None, reason: str | None = None) -> StoreLayoutError:
    if reason is None:
        reason = "a symbolic link or not a folder (links inside a store are never followed)"
    return StoreLayoutError(path, reason)


def open_dir(root: str, parts: Sequence[str], *, create: bool = False) -> int:
    """Open the folder ``root/parts...`` without following links below ``root``.

    Args:
        root: the store's root folder.
        parts: path components below it, each one name.
        create: make missing folders (mode 0755) on the way.

    Returns:
        An open directory file descriptor; the caller closes it.

    Raises:
        FileNotFoundError: a component does not exist (and ``create`` is false).
        StoreLayoutError: a component is a link or not a folder.
        StoreIOError: any other failure.
    """
    try:
        fd = os.open(root, os.O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise StoreIOError("open folder", root, exc) from exc
    where = root
    try:
        for part in parts:
            where = os.path.join(where, part)
            if create:
                try:
                    os.mkdir(part, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                raise
            except OSError as exc:
                if exc.errno in _LINK_ERRNOS:
                    raise _refuse(where, exc) from None
                raise StoreIOError("open folder", where, exc) from exc
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def child_dir(dfd: int, name: str, where: str) -> Iterator[int]:
    """Open the folder ``name`` inside the open folder ``dfd`` without following a link."""
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=dfd)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno in _LINK_ERRNOS:
            raise _refuse(where, exc) from None
        raise StoreIOError("open folder", where, exc) from exc
    try:
        yield fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def in_dir(root: str, parts: Sequence[str], *, create: bool = False) -> Iterator[int]:
    """``open_dir`` as a context manager that closes the descriptor."""
    fd = open_dir(root, parts, create=create)
    try:
        yield fd
    finally:
        os.close(fd)


def open_file(dir_fd: int, name: str, flags: int, where: str, mode: int = 0o644) -> int:
    """Open ``name`` in ``dir_fd`` without following a link; it must be a regular file.

    Reads are opened non-blocking, so a FIFO planted in the store is refused
    at once instead of blocking the reader.

    Raises:
        FileNotFoundError: no such file (and ``O_CREAT`` not given).
        StoreLayoutError: a link, a folder or a special file.
        StoreIOError: any other failure.
    """
    extra = O_NOFOLLOW | O_CLOEXEC | (O_NONBLOCK if (flags & os.O_ACCMODE) == os.O_RDONLY else 0)
    try:
        fd = os.open(name, flags | extra, mode, dir_fd=dir_fd)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno in _LINK_ERRNOS or exc.errno == errno.EISDIR:
            raise _refuse(where, exc, "a symbolic link or a folder where a file belongs") from None
        raise StoreIOError("open", where, exc) from exc
    try:
        info = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise StoreIOError("stat", where, exc) from exc
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise _refuse(where, reason="not a regular file")
    return fd


def lstat(dir_fd: int, name: str) -> os.stat_result | None:
    """``lstat`` of ``name`` in ``dir_fd``, or ``None`` if it does not exist."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def read_capped(fd: int, cap: int, where: str) -> bytes:
    """Read an open file whole, refusing one larger than ``cap`` bytes.

    Raises:
        StoreLayoutError: the file is larger than ``cap`` (a planted giant is
            not a store file).
        StoreIOError: the read failed.
    """
    chunks: list[bytes] = []
    total = 0
    while True:
        try:
            chunk = os.read(fd, min(1 << 20, cap + 1 - total))
        except OSError as exc:
            raise StoreIOError("read", where, exc) from exc
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > cap:
            raise StoreLayoutError(where, f"larger than the {cap}-byte cap for this kind of store file")


def fsync_fd(fd: int, where: str) -> None:
    """fsync a descriptor (file or folder); never retried (see ``_fs.fsync_fd``)."""
    try:
        os.fsync(fd)
    except OSError as exc:
        raise StoreIOError("fsync", where, exc) from exc
