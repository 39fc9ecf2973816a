"""Writer leases of the local backend: one flock'd file per writing process, in ``tmp/``.

A local store needs no lease to exclude gc from a put in progress (``gc.lock``
does that), but gc runs beside live writers and must keep what they put and
may be about to reference. So each backend that writes holds a lease file
``tmp/writer-<host>-<pid>-<token>.lease`` with an exclusive ``flock`` from its
first write until it is closed (or garbage-collected, or its process ends):

* it is **live** while that lock is held, which gc tests with a non-blocking
  shared ``flock``. The kernel drops the lock when the holder dies, even by
  SIGKILL, in whatever PID namespace it ran: liveness never rests on a pid.
  (On NFS the lock goes through the lock manager; see docs/store.md.)
* its **since** is the file's modification time, stamped by the same clock
  as the objects' times: gc keeps every unreferenced object stamped at or
  after the ``since`` of a live lease.
* a lease file whose lock is free belongs to a dead holder; gc removes it.

The files live in ``tmp/`` (already part of every store's layout) so that a
store stays readable by code that predates them; they are not temps, and
:meth:`store.local.LocalBackend.temp_entries` leaves them out.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import socket
import stat
import weakref
from typing import Any

from . import _fs, _nofollow
from .backend import WriterLease
from .errors import StoreIOError

SUFFIX = ".lease"


def is_lease_name(name: str) -> bool:
    """Whether an entry of ``tmp/`` is a writer lease file."""
    return name.startswith("writer-") and name.endswith(SUFFIX)


class LocalLease:
    """This backend's writer lease file (taken on first use, per process)."""

    def __init__(self, root: str) -> None:
        self._root = root
        self._fd = -1
        self._name = ""
        self._pid = -1
        self._finalizer: Any = None

    @property
    def name(self) -> str:
        """The lease file held by this process ("" when none)."""
        return self._name if self._pid == os.getpid() else ""

    def ensure(self) -> None:
        """Take the lease if this process holds none yet (a forked child takes its own)."""
        if self._fd >= 0 and self._pid == os.getpid():
            return
        name = f"writer-{socket.gethostname()[:64]}-{os.getpid()}-{secrets.token_hex(4)}{SUFFIX}"
        temp = f".{name}{_fs.TEMP_SUFFIX}"
        where = f"{self._root}/tmp/{name}"
        with _nofollow.in_dir(self._root, ("tmp",)) as tfd:
            # Locked under a temp name, then renamed: a lease file is never seen unlocked while its holder
            # lives. It holds nothing (its lock is the lease) and needs no fsync: a crash ends its holder too.
            fd = _nofollow.open_file(tfd, temp, os.O_RDWR | os.O_CREAT | os.O_EXCL, where)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                os.rename(temp, name, src_dir_fd=tfd, dst_dir_fd=tfd)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=tfd)
                os.close(fd)
                raise StoreIOError("take writer lease", where, exc) from exc
        self._fd, self._name, self._pid = fd, name, os.getpid()
        self._finalizer = weakref.finalize(self, _drop, self._root, name, fd, self._pid)

    def release(self) -> None:
        """Give the lease up (remove its file, drop the lock). The next write takes a new one."""
        if self._finalizer is not None:
            self._finalizer()
        self._finalizer, self._fd, self._name, self._pid = None, -1, "", -1


def _drop(root: str, name: str, fd: int, pid: int) -> None:
    """Remove lease file ``name`` and close ``fd``; a forked child only closes its copy."""
    if pid == os.getpid():
        with contextlib.suppress(OSError, StoreIOError), _nofollow.in_dir(root, ("tmp",)) as tfd:
            os.unlink(name, dir_fd=tfd)
    with contextlib.suppress(OSError):
        os.close(fd)


def _probe(tfd: int, name: str) -> os.stat_result | None:
    """The lease file's stat if its holder is alive (its lock is held), else None (a dead or vanished lease)."""
    try:
        fd = os.open(name, os.O_RDONLY | _nofollow.O_NOFOLLOW | _nofollow.O_CLOEXEC | _nofollow.O_NONBLOCK,
                     dir_fd=tfd)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return info  # held: its writer lives
        return None
    finally:
        os.close(fd)  # drops our probe lock, if we got it


def live_leases(root: str, own: str) -> list[WriterLease]:
    """The live writer leases of ``root`` other than ``own``, in name order."""
    found = []
    with _nofollow.in_dir(root, ("tmp",)) as tfd:
        for name in sorted(os.listdir(tfd)):
            if is_lease_name(name) and name != own:
                info = _probe(tfd, name)
                if info is not None:
                    found.append(WriterLease(name, info.st_mtime))
    return found


def release_dead(root: str, own: str) -> list[str]:
    """Remove every lease file of ``root`` whose lock is free (its holder is gone); their names."""
    gone = []
    with _nofollow.in_dir(root, ("tmp",)) as tfd:
        for name in sorted(os.listdir(tfd)):
            if not is_lease_name(name) or name == own:
                continue
            info = _nofollow.lstat(tfd, name)
            if info is None or not stat.S_ISREG(info.st_mode):
                continue
            try:
                fd = os.open(name, os.O_RDONLY | _nofollow.O_NOFOLLOW | _nofollow.O_CLOEXEC | _nofollow.O_NONBLOCK,
                             dir_fd=tfd)
            except OSError:
                continue
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free: its holder is gone
                except BlockingIOError:
                    continue
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name, dir_fd=tfd)
                    gone.append(name)
            finally:
                os.close(fd)
    return gone


__all__ = ["LocalLease", "is_lease_name", "live_leases", "release_dead"]
