"""Run journals: one writer, append-only, framed entries, torn tails dropped.

A journal is the record of one run in progress. Each completed unit of work
costs one small appended entry and one fsync, instead of a rewrite of a whole
artifact. File layout::

    header   b"EBSJ", version (1 byte, = 1), 3 zero bytes
    entry    b"EJ", payload length (4 bytes, big-endian), payload,
             first 16 bytes of blake3(marker + length + payload)
    payload  msgpack [kind, data, keys]: kind 0 = entry, 1 = finish marker;
             data = the caller's map; keys = the object keys (32 raw bytes
             each) that the entry references

**References.** The store never looks inside ``data``. What an entry keeps
alive is exactly the ``keys`` the caller passes with it; gc marks those for
every journal that is not finished. A runner writes
``append({"index": i, "digest": d, ...}, keys=[d])``.

**Torn tails.** A crash can leave the last append half written. On open, the
entries are read in order up to the first one that fails its checks; if no
valid entry can be found anywhere after it, the rest is a torn tail: readers
ignore it and a writer truncates it away. If a valid entry does follow, the
damage is before the end and :class:`~store.errors.JournalCorruptError` is
raised: nothing is repaired silently.
"""

from __future__ import annotations

import os
import struct
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import blake3
import msgpack

from . import _fs, lock
from .errors import JournalCorruptError, JournalError, ObjectNotFoundError, StoreIOError
from .keys import validate_journal_name, validate_key
from .layout import JOURNAL_SUFFIX, Layout

MAGIC = b"EBSJ"
JOURNAL_VERSION = 1
HEADER = MAGIC + bytes([JOURNAL_VERSION, 0, 0, 0])
_MARKER = b"EJ"
_LEN = struct.Struct(">I")
_PREFIX = len(_MARKER) + _LEN.size
_CHECK = 16
MAX_PAYLOAD = 64 * 1024 * 1024
ENTRY, FINISH = 0, 1


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """One entry as read back: the caller's map and the keys it references."""

    data: Mapping[str, Any]
    keys: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class JournalState:
    """A consistent view of a journal at the time it was read.

    Attributes:
        name: the journal's name.
        entries: the entries, in append order (the finish marker excluded).
        finish: the finish marker, or ``None`` while the run is unfinished.
        torn_bytes: bytes of a torn tail after the last valid entry (ignored).
    """

    name: str
    entries: tuple[JournalEntry, ...]
    finish: JournalEntry | None
    torn_bytes: int

    @property
    def finished(self) -> bool:
        return self.finish is not None

    def referenced_keys(self) -> frozenset[str]:
        """Every key referenced by an entry or by the finish marker."""
        keys = {k for entry in self.entries for k in entry.keys}
        if self.finish is not None:
            keys.update(self.finish.keys)
        return frozenset(keys)


def encode_entry(kind: int, data: Mapping[str, Any], keys: Iterable[str]) -> bytes:
    """Frame one entry; ``keys`` must already be validated."""
    payload = msgpack.packb([kind, dict(data), [bytes.fromhex(k) for k in keys]], use_bin_type=True)
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"journal entry of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    head = _MARKER + _LEN.pack(len(payload))
    check = blake3.blake3(head + payload).digest()[:_CHECK]
    return head + payload + check


def _frame_at(buf: bytes, pos: int) -> tuple[bytes, int] | None:
    """The payload and end offset of a valid framed entry at ``pos``, else ``None``."""
    if buf[pos : pos + 2] != _MARKER or pos + _PREFIX > len(buf):
        return None
    (length,) = _LEN.unpack_from(buf, pos + 2)
    end = pos + _PREFIX + length + _CHECK
    if length > MAX_PAYLOAD or end > len(buf):
        return None
    body_end = end - _CHECK
    if blake3.blake3(buf[pos:body_end]).digest()[:_CHECK] != buf[body_end:end]:
        return None
    return buf[pos + _PREFIX : body_end], end


def _decode(name: str, payload: bytes, offset: int) -> tuple[int, JournalEntry]:
    try:
        kind, data, raw_keys = msgpack.unpackb(payload, raw=False)
        if kind not in (ENTRY, FINISH) or not isinstance(data, dict):
            raise ValueError("bad shape")
        keys = tuple(bytes(k).hex() for k in raw_keys)
        if any(len(k) != 64 for k in keys):
            raise ValueError("bad key")
    except (ValueError, TypeError, msgpack.UnpackException):
        # The checksum passed, so these are the bytes a writer wrote: not a
        # torn tail but a writer that does not speak this format.
        raise JournalError(name, f"entry at byte {offset} is not a valid journal payload") from None
    return kind, JournalEntry(types.MappingProxyType(data), keys)


def parse(name: str, buf: bytes) -> tuple[JournalState, int]:
    """Parse a whole journal file; return its state and the end of its valid prefix.

    Raises:
        JournalError: unknown header or version, or an entry after the finish marker.
        JournalCorruptError: a damaged entry followed by a valid one.
    """
    if len(buf) < len(HEADER):
        if HEADER.startswith(buf):
            # A crash between creating the file and writing its header.
            return JournalState(name, (), None, len(buf)), 0
        raise JournalError(name, "not a journal (bad header)")
    if buf[:4] != MAGIC:
        raise JournalError(name, "not a journal (bad magic)")
    if buf[: len(HEADER)] != HEADER:
        raise JournalError(name, f"unknown journal version {buf[4]}; this code reads {JOURNAL_VERSION}")
    entries: list[JournalEntry] = []
    finish: JournalEntry | None = None
    pos = len(HEADER)
    while pos < len(buf):
        found = _frame_at(buf, pos)
        if found is None:
            break
        payload, end = found
        kind, entry = _decode(name, payload, pos)
        if finish is not None:
            raise JournalError(name, f"entry at byte {pos} follows the finish marker")
        if kind == FINISH:
            finish = entry
        else:
            entries.append(entry)
        pos = end
    if pos < len(buf):
        probe = buf.find(_MARKER, pos + 1)
        while probe != -1:
            if _frame_at(buf, probe) is not None:
                raise JournalCorruptError(name, pos, f"a valid entry follows at byte {probe}")
            probe = buf.find(_MARKER, probe + 1)
    return JournalState(name, tuple(entries), finish, len(buf) - pos), pos


def read_journal(layout: Layout, name: str) -> JournalState:
    """Read a journal without locking it (a concurrent append looks like a torn tail).

    Raises:
        JournalError: no such journal, or it is unreadable (see :func:`parse`).
    """
    path = layout.journal_path(name)
    try:
        buf = path.read_bytes()
    except FileNotFoundError:
        raise JournalError(name, "no such journal") from None
    except OSError as exc:
        raise StoreIOError("read", str(path), exc) from exc
    return parse(name, buf)[0]


def journal_names(layout: Layout) -> list[str]:
    """Every journal name in the store, sorted."""
    names = []
    for file in os.listdir(layout.journals):
        if file.endswith(JOURNAL_SUFFIX):
            name = file[: -len(JOURNAL_SUFFIX)]
            try:
                names.append(validate_journal_name(name))
            except ValueError:
                continue
    return sorted(names)


def delete_journal(layout: Layout, name: str, *, timeout: float = 0.0) -> bool:
    """Delete a journal that no writer holds; returns whether it existed.

    Raises:
        LockError: a writer holds the journal.
    """
    path = layout.journal_path(name)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return False
    try:
        lock.acquire(fd, path, shared=False, timeout=timeout)
        os.unlink(path)
    except FileNotFoundError:
        return False
    finally:
        os.close(fd)
    _fs.fsync_dir(layout.journals)
    return True


class JournalWriter:
    """The single writer of one journal; holds its exclusive flock while open.

    Opening reads and checks the whole journal and truncates a torn tail away.
    Every append is durable (fsynced) when the call returns. After a failed
    append the writer refuses further appends: the file's tail is unknown and
    reopening is what repairs it. Use as a context manager or call
    :meth:`close`.

    Args:
        layout: the store's paths.
        name: the journal name (see :func:`store.keys.journal_name`).
        has: tells whether an object is stored; an entry may only reference
            objects that are already durable.
        create: create the journal if it does not exist.
        timeout: seconds to wait for the writer lock (default: do not wait).

    Raises:
        LockError: another writer holds the journal.
        JournalError / JournalCorruptError: the journal is not readable.
    """

    def __init__(
        self,
        layout: Layout,
        name: str,
        has: Callable[[str], bool],
        *,
        create: bool = True,
        timeout: float = 0.0,
    ) -> None:
        self.name = name
        self._path = layout.journal_path(name)
        self._folder = layout.journals
        self._has = has
        self._broken = False
        self._fd = self._open_locked(create, timeout)
        try:
            self._load()
        except BaseException:
            os.close(self._fd)
            raise

    def _open_locked(self, create: bool, timeout: float) -> int:
        flags = os.O_RDWR | getattr(os, "O_CLOEXEC", 0) | (os.O_CREAT if create else 0)
        spath = str(self._path)
        for _ in range(10):
            try:
                fd = os.open(spath, flags, 0o644)
            except FileNotFoundError:
                raise JournalError(self.name, "no such journal") from None
            except OSError as exc:
                raise StoreIOError("open", spath, exc) from exc
            try:
                lock.acquire(fd, self._path, shared=False, timeout=timeout)
                # The file may have been deleted (and recreated) while we
                # waited for the lock: only the file at the path counts.
                if os.fstat(fd).st_ino == os.stat(spath).st_ino:
                    return fd
            except FileNotFoundError:
                pass
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)
            if not create:
                raise JournalError(self.name, "no such journal")
        raise JournalError(self.name, "the journal file keeps being replaced")

    def _load(self) -> None:
        spath = str(self._path)
        size = os.fstat(self._fd).st_size
        buf = os.pread(self._fd, size, 0) if size else b""
        state, valid_end = parse(self.name, buf)
        if valid_end == 0:
            os.ftruncate(self._fd, 0)
            _fs.write_all(self._fd, HEADER, spath)
            _fs.fsync_fd(self._fd, spath)
            _fs.fsync_dir(self._folder)
            valid_end = len(HEADER)
        elif state.torn_bytes:
            try:
                os.ftruncate(self._fd, valid_end)
            except OSError as exc:
                raise StoreIOError("truncate", spath, exc) from exc
            _fs.fsync_fd(self._fd, spath)
        self._entries = list(state.entries)
        self._finish = state.finish
        self._size = valid_end
        self.dropped_bytes = state.torn_bytes

    @property
    def entries(self) -> tuple[JournalEntry, ...]:
        """Every entry written so far (read on open, plus this writer's appends)."""
        return tuple(self._entries)

    @property
    def finished(self) -> bool:
        return self._finish is not None

    def state(self) -> JournalState:
        """The journal as this writer knows it."""
        return JournalState(self.name, tuple(self._entries), self._finish, 0)

    def append(self, data: Mapping[str, Any], keys: Iterable[str] = ()) -> None:
        """Append one entry and fsync. ``keys`` are the objects it references."""
        self.append_many([(data, keys)])

    def append_many(self, items: Iterable[tuple[Mapping[str, Any], Iterable[str]]]) -> None:
        """Append several entries with one write and one fsync.

        All or none become durable as far as this call reports: it returns only
        after the fsync. A crash during the call may leave a prefix of them,
        which a later open keeps (entries are whole or dropped, never mixed).

        Raises:
            InvalidKeyError / ObjectNotFoundError: a referenced key is invalid
                or not stored; nothing is written.
            JournalError: the journal is finished, closed, or broken.
            StoreIOError: the write or fsync failed; the writer is now broken.
        """
        self._check_open()
        if self._finish is not None:
            raise JournalError(self.name, "journal is finished; nothing may be appended")
        self._write([(ENTRY, data, keys) for data, keys in items])

    def finish(self, data: Mapping[str, Any] | None = None, keys: Iterable[str] = ()) -> None:
        """Append the finish marker: from now on gc does not treat the journal as a root.

        Finish a journal only once whatever must outlive it (the run's result)
        is referenced by a ref. Idempotent if already finished.
        """
        self._check_open()
        if self._finish is not None:
            return
        self._write([(FINISH, data or {}, keys)])

    def _check_open(self) -> None:
        if self._fd < 0:
            raise JournalError(self.name, "journal is closed")
        if self._broken:
            raise JournalError(self.name, "a previous append failed; reopen the journal")

    def _write(self, items: list[tuple[int, Mapping[str, Any], Iterable[str]]]) -> None:
        prepared = []
        for kind, data, keys in items:
            checked = tuple(validate_key(k) for k in keys)
            for key in checked:
                if not self._has(key):
                    raise ObjectNotFoundError(key)
            try:
                frame = encode_entry(kind, data, checked)
            except (TypeError, ValueError) as exc:
                raise JournalError(self.name, f"entry cannot be encoded: {exc}") from None
            prepared.append((kind, JournalEntry(types.MappingProxyType(dict(data)), checked), frame))
        if not prepared:
            return
        blob = b"".join(frame for _, _, frame in prepared)
        spath = str(self._path)
        self._broken = True  # cleared only once the bytes are durable
        try:
            os.lseek(self._fd, self._size, os.SEEK_SET)
        except OSError as exc:
            raise StoreIOError("seek", spath, exc) from exc
        _fs.write_all(self._fd, blob, spath)
        _fs.fsync_fd(self._fd, spath)
        self._broken = False
        self._size += len(blob)
        for kind, entry, _ in prepared:
            if kind == FINISH:
                self._finish = entry
            else:
                self._entries.append(entry)

    def close(self) -> None:
        """Release the writer lock. Safe to call twice."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> JournalWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
