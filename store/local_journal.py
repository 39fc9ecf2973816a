"""Run journals of the local backend: one file per journal, appended in place.

The writer holds an exclusive ``flock`` on the journal file while open, reads
and checks the whole journal on open, truncates a torn tail away, and appends
each batch with one write and one fsync. Files are opened without following
links: a journal that is a symbolic link (say, to a file outside the store
that happens to start with a journal header) is refused, never written.
"""

from __future__ import annotations

import contextlib
import os
import stat
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


def special_kind(mode: int) -> str | None:
    """How a file of ``mode`` that is not a regular file is named in messages (None: a regular file)."""
    if stat.S_ISREG(mode):
        return None
    for test, kind in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISDIR, "a folder")):
        if test(mode):
            return kind
    return "a special file"


def special_journal_file(layout: Layout, name: str) -> str | None:
    """What stands where the journal file of ``name`` belongs if it is not a regular file (never followed)."""
    with _nofollow.in_dir(str(layout.root), ("journals",)) as jfd:
        info = _nofollow.lstat(jfd, _file(name))
    return None if info is None else special_kind(info.st_mode)


def delete_journal_file(layout: Layout, name: str, timeout: float = 0.0) -> bool:
    """Delete a journal that no writer holds; returns whether it existed.

    A link, FIFO, socket or device where the journal file belongs is no
    journal (every open refuses it, so no writer can hold it): it is removed
    as it is, never followed or opened. A folder there is refused.

    Raises:
        LockError: a writer holds the journal.
        StoreLayoutError: a folder stands where the journal file belongs.
    """
    where = str(layout.journal_path(name))
    file = _file(name)
    with _nofollow.in_dir(str(layout.root), ("journals",)) as jfd:
        info = _nofollow.lstat(jfd, file)
        if info is None:
            return False
        if not stat.S_ISREG(info.st_mode):
            if stat.S_ISDIR(info.st_mode):
                raise StoreLayoutError(where, "a folder where a journal file belongs (not removed)")
            try:
                os.unlink(file, dir_fd=jfd)
            except FileNotFoundError:
                return False
            except OSError as exc:
                raise StoreIOError("unlink", where, exc) from exc
            _fs.fsync_fd(jfd, str(layout.journals))
            return True
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

    def _replace(self, data: bytes) -> None:
        # A fsynced temp beside the journal, renamed over it while this writer
        # still holds the old file's lock: a reader opens the old file or the
        # new one; a writer waiting for the lock finds the inode changed and
        # starts over on the new file (see _open_locked).
        with _nofollow.in_dir(str(self._layout.root), ("journals",)) as jfd:
            now = _nofollow.lstat(jfd, self._file)
            if now is None or now.st_ino != os.fstat(self._fd).st_ino:
                raise JournalError(self.name, "the journal file was replaced by another process")
            temp = _fs.temp_name(self._file)
            try:
                fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _nofollow.O_NOFOLLOW | _nofollow.O_CLOEXEC,
                             0o644, dir_fd=jfd)
            except OSError as exc:
                raise StoreIOError("create", self._where, exc) from exc
            try:
                try:
                    _fs.write_all(fd, data, self._where)
                    _fs.fsync_fd(fd, self._where)
                finally:
                    os.close(fd)
                try:
                    os.replace(temp, self._file, src_dir_fd=jfd, dst_dir_fd=jfd)
                except OSError as exc:
                    raise StoreIOError("rename", self._where, exc) from exc
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=jfd)
                raise
            _fs.fsync_fd(jfd, str(self._layout.journals))

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
