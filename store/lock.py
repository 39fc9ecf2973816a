"""flock-based locks of the local backend: the gc lock, the refs lock, journal writer locks.

``flock`` locks belong to an open file description, so two opens of the same
file conflict even inside one process, and the kernel drops the lock when the
holder dies (including SIGKILL): a crashed writer never leaves a stale lock.
Lock files are opened read-write (NFS emulates ``flock`` with POSIX locks,
whose exclusive form needs a writable descriptor) and without following links.
On NFS, Linux emulates ``flock`` with byte-range locks through the NFS lock
manager; see docs/store.md for what that assumes.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from . import _nofollow
from .errors import LockError, StoreError

_POLL_SECONDS = 0.01


def acquire(fd: int, path: Path | str, *, shared: bool, timeout: float | None) -> None:
    """Take a flock on ``fd``.

    Args:
        fd: an open file descriptor of the lock file.
        path: the lock file, for the error message.
        shared: a shared lock (many holders) instead of an exclusive one.
        timeout: seconds to wait; ``None`` waits forever, ``0`` does not wait.

    Raises:
        LockError: the lock was not obtained within ``timeout``.
    """
    mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
    if timeout is None:
        fcntl.flock(fd, mode)
        return
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                kind = "shared" if shared else "exclusive"
                raise LockError(str(path), f"{kind} lock held elsewhere after {timeout:g} s") from None
            time.sleep(_POLL_SECONDS)


def open_lock_file(root: Path, name: str) -> int:
    """Open (creating if needed) the lock file ``root/name`` without following a link."""
    where = str(root / name)
    try:
        with _nofollow.in_dir(str(root), ()) as dfd:
            return _nofollow.open_file(dfd, name, os.O_RDWR | os.O_CREAT, where)
    except StoreError:
        raise
    except OSError as exc:
        raise LockError(where, exc.strerror or str(exc)) from exc


@contextlib.contextmanager
def locked(path: Path, *, shared: bool, timeout: float | None = None) -> Iterator[None]:
    """Hold a flock on the lock file ``path`` (a name directly in a store root) for the block."""
    fd = open_lock_file(path.parent, path.name)
    try:
        acquire(fd, path, shared=shared, timeout=timeout)
        yield
    finally:
        os.close(fd)  # closing the description releases the lock
