"""flock-based locks: the gc lock and journal writer locks.

``flock`` locks belong to an open file description, so two opens of the same
file conflict even inside one process, and the kernel drops the lock when the
holder dies (including SIGKILL): a crashed writer never leaves a stale lock.
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

from .errors import LockError

_POLL_SECONDS = 0.01


def acquire(fd: int, path: Path, *, shared: bool, timeout: float | None) -> None:
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


@contextlib.contextmanager
def locked(path: Path, *, shared: bool, timeout: float | None = None) -> Iterator[None]:
    """Hold a flock on ``path`` (which must exist) for the ``with`` block."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise LockError(str(path), exc.strerror or str(exc)) from exc
    try:
        acquire(fd, path, shared=shared, timeout=timeout)
        yield
    finally:
        os.close(fd)  # closing the description releases the lock
