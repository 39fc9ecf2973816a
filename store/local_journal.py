"""Run journals of the local backend: one file per journal, appended in place.

The writer holds an exclusive ``flock`` on the journal file while open, reads
and checks the whole journal on open, truncates a torn tail away, and appends
each batch with one write and one fsync. Files are opened without following
links: a journal that is a symbolic link (say, to a file outside the store
that happens to start with a journal header) is refused, never written.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from . import _fs, _nofollow, lock
from .errors import JournalError, StoreIOError, StoreLayoutError
from .journal import HEADER, MAX_JOURNAL_BYTES, JournalWriter, parse
from .keys import validate_journal_name
from .layout import JOURNAL_SUFFIX, Layout


def _file(name: str) -> str:
    return validate_journal_name(name) + JOURNAL_SUFFIX


def read_journal_file(layout: Layout, name: str, cap: int = MAX_JOURNAL_BYTES) -> bytes:
    """The bytes of a journal file, read without a lock and without following links.

    Raises:
        JournalError: no such journal.
        StoreLayoutError: the journal is a link or a special file, or larger than ``cap``.
    """
    where = str(layout.journal_path(name))
    try:
        with _nofollow.in_dir(str(layout.root), ("journals",)) as jfd:
            fd = _nofollow.open_file(jfd, _file(name), os.O_RDONLY, where)
    except FileNotFoundError:
        raise JournalError(name, "no such journal") from None
    try:
        return _nofollow.read_capped(fd, cap, where)
    finally:
        os.close(fd)


def delete_journal_file(layout: Layout, name: str, timeout: float = 0.0) -> bool:
    """Delete a journal that no writer holds; returns whether it existed.

    Raises:
        LockError: a writer holds the journal.
    """
    where = str(layout.journal_path(name))
    file = _file(name)
    with _nofollow.in_dir(str(layout.root), ("journals",)) as jfd:
        try:
            fd = _nofollow.open_file(jfd, file, os.O_RDWR, where)
        except FileNotFoundError:
            return False
        try:
            lock.acquire(fd, where, shared=False, timeout=timeout)
            try:
                os.unlink(file, dir_fd=jfd)
            except FileNotFoundError:
                return False
        finally:
            os.close(fd)
        _fs.fsync_fd(jfd, str(layout.journals))
    return True


class FileJournalWriter(JournalWriter):
    """The single writer of one local journal file (see :class:`store.journal.JournalWriter`).

    Args:
        layout: the store's paths.
        name: the journal name (see :func:`store.keys.journal_name`).
        has: tells whether an object is stored; an entry may only reference
            objects that are already durable.
        create: create the journal if it does not exist.
        timeout: seconds to wait for the writer lock (default: do not wait).
    """

    def __init__(self, layout: Layout, name: str, has: Callable[[str], bool], *, create: bool = True,
                 timeout: float = 0.0) -> None:
        super().__init__(name, has)
        self._layout = layout
        self._file = _file(name)
        self._where = str(layout.journal_path(name))
        self._fd = self._open_locked(create, timeout)
        try:
            self._load()
        except BaseException:
            os.close(self._fd)
            raise

    def _open_locked(self, create: bool, timeout: float) -> int:
        flags = os.O_RDWR | (os.O_CREAT if create else 0)
        with _nofollow.in_dir(str(self._layout.root), ("journals",)) as jfd:
            for _ in range(10):
                try:
                    fd = _nofollow.open_file(jfd, self._file, flags, self._where)
                except FileNotFoundError:
                    raise JournalError(self.name, "no such journal") from None
                try:
                    lock.acquire(fd, self._where, shared=False, timeout=timeout)
                    # The file may have been deleted (and recreated) while we
                    # waited for the lock: only the file at the path counts.
                    now = _nofollow.lstat(jfd, self._file)
                    if now is not None and os.fstat(fd).st_ino == now.st_ino:
                        return fd
                except BaseException:
                    os.close(fd)
                    raise
                os.close(fd)
                if not create:
                    raise JournalError(self.name, "no such journal")
        raise JournalError(self.name, "the journal file keeps being replaced")

    def _load(self) -> None:
        size = os.fstat(self._fd).st_size
        if size > MAX_JOURNAL_BYTES:
            raise StoreLayoutError(self._where, f"larger than the {MAX_JOURNAL_BYTES}-byte journal cap")
        buf = os.pread(self._fd, size, 0) if size else b""
        state, valid_end = parse(self.name, buf)
        if valid_end == 0:
            os.ftruncate(self._fd, 0)
            _fs.write_all(self._fd, HEADER, self._where)
            _fs.fsync_fd(self._fd, self._where)
            _fs.fsync_dir(self._layout.journals)
            valid_end = len(HEADER)
        elif state.torn_bytes:
            try:
                os.ftruncate(self._fd, valid_end)
            except OSError as exc:
                raise StoreIOError("truncate", self._where, exc) from exc
            _fs.fsync_fd(self._fd, self._where)
        self._adopt(state)
        self._size = valid_end

    def _persist(self, blob: bytes) -> None:
        try:
            os.lseek(self._fd, self._size, os.SEEK_SET)
        except OSError as exc:
            raise StoreIOError("seek", self._where, exc) from exc
        _fs.write_all(self._fd, blob, self._where)
        _fs.fsync_fd(self._fd, self._where)
        self._size += len(blob)

    def _release(self) -> None:
        os.close(self._fd)
        self._fd = -1

    def _delete_held(self) -> None:
        # Still under our lock: a writer waiting for it finds the path gone
        # (or a new file) and starts over (see _open_locked).
        with _nofollow.in_dir(str(self._layout.root), ("journals",)) as jfd:
            now = _nofollow.lstat(jfd, self._file)
            if now is not None and now.st_ino == os.fstat(self._fd).st_ino:
                try:
                    os.unlink(self._file, dir_fd=jfd)
                except FileNotFoundError:
                    return
                _fs.fsync_fd(jfd, str(self._layout.journals))
