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
every journal, finished or not, until the journal is deleted. A runner writes
``append({"index": i, "digest": d, ...}, keys=[d])``.

**Torn tails.** A crash can leave the last append half written. On open, the
entries are read in order up to the first one that fails its checks; if no
valid entry can be found anywhere after it, the rest is a torn tail: readers
ignore it and a writer truncates it away. If a valid entry does follow, the
damage is before the end and :class:`~store.errors.JournalCorruptError` is
raised: nothing is repaired silently. Bytes after a whole finish marker are
no torn tail either (nothing is appended after it): they are damage too.

**Backends.** A local journal is one file appended in place
(:class:`FileJournalWriter`, in :mod:`store.local`); on object storage a
journal is a series of numbered segment objects whose concatenation is the
same bytes (:mod:`store.s3`). Both share the entry format, :func:`parse` and
the writer semantics of :class:`JournalWriter`.
"""

from __future__ import annotations

import struct
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import blake3
import msgpack

from .errors import JournalCorruptError, JournalError, ObjectNotFoundError
from .keys import validate_key

MAGIC = b"EBSJ"
JOURNAL_VERSION = 1
HEADER = MAGIC + bytes([JOURNAL_VERSION, 0, 0, 0])
_MARKER = b"EJ"
_LEN = struct.Struct(">I")
_PREFIX = len(_MARKER) + _LEN.size
_CHECK = 16
MAX_PAYLOAD = 64 * 1024 * 1024
MAX_JOURNAL_BYTES = 1 << 30
"""Readers refuse a journal larger than 1 GiB (about four million episodes)."""
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


def whole_entries(buf: bytes, start: int = 0) -> bool:
    """Whether ``buf[start:]`` is a sequence of whole, valid entry frames (an S3 segment)."""
    pos = start
    while pos < len(buf):
        found = _frame_at(buf, pos)
        if found is None:
            return False
        pos = found[1]
    return True


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
        if finish is not None:
            # Nothing is ever appended after a finish marker, so these bytes are no torn append.
            raise JournalCorruptError(name, pos, f"{len(buf) - pos} bytes follow the finish marker")
    return JournalState(name, tuple(entries), finish, len(buf) - pos), pos


class JournalWriter:
    """The single writer of one journal (base of the backends' writers).

    Every append is durable when the call returns. After a failed append the
    writer refuses further appends: its tail is unknown and reopening is what
    repairs it. Use as a context manager or call :meth:`close`.

    Subclasses load the existing journal in ``__init__`` (calling
    :meth:`_adopt`) and implement :meth:`_persist` and :meth:`_release`.

    Raises (on open):
        LockError: another writer holds the journal.
        JournalError / JournalCorruptError: the journal is not readable.
    """

    def __init__(self, name: str, has: Callable[[str], bool]) -> None:
        self.name = name
        self._has = has
        self._broken = False
        self._failure: BaseException | None = None  # why the writer broke: named by every later refusal
        self._open = True
        self._entries: list[JournalEntry] = []
        self._finish: JournalEntry | None = None
        self.dropped_bytes = 0

    def _adopt(self, state: JournalState) -> None:
        self._entries = list(state.entries)
        self._finish = state.finish
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
        """Append one entry durably. ``keys`` are the objects it references."""
        self.append_many([(data, keys)])

    def append_many(self, items: Iterable[tuple[Mapping[str, Any], Iterable[str]]]) -> None:
        """Append several entries with one write.

        All or none become durable as far as this call reports: it returns only
        once they are. A crash during the call may leave a prefix of them
        (local file), which a later open keeps (entries are whole or dropped,
        never mixed).

        Raises:
            InvalidKeyError / ObjectNotFoundError: a referenced key is invalid
                or not stored; nothing is written.
            JournalError: the journal is finished, closed, or broken, or
                another writer appended meanwhile.
            StoreIOError: the write failed; the writer is now broken.
        """
        self._check_open()
        if self._finish is not None:
            raise JournalError(self.name, "journal is finished; nothing may be appended")
        self._write([(ENTRY, data, keys) for data, keys in items])

    def finish(self, data: Mapping[str, Any] | None = None, keys: Iterable[str] = ()) -> None:
        """Append the finish marker: the run is complete; later appends are refused.

        A finished journal still keeps what it references alive (gc marks it)
        until it is deleted. Idempotent if already finished.
        """
        self._check_open()
        if self._finish is not None:
            return
        self._write([(FINISH, data or {}, keys)])

    def _check_open(self) -> None:
        if not self._open:
            raise JournalError(self.name, "journal is closed")
        if self._broken:
            cause = f" ({_one_line(self._failure)})" if self._failure is not None else ""
            raise JournalError(self.name, f"a previous append failed{cause}; reopen the journal")

    def rewrite(self, items: Iterable[tuple[Mapping[str, Any], Iterable[str]]],
                finish: tuple[Mapping[str, Any], Iterable[str]] | None = None) -> None:
        """Replace the whole journal by ``items`` (and a finish marker ``(data, keys)``, if given), then close.

        A journal is otherwise append-only: this is for a repair that rebuilt
        a damaged journal from what it verified (EMBERBench's ``store fsck
        --repair``). The replacement is atomic: a reader sees the old journal
        or the new one, never a mix. Every referenced key must be stored. The
        writer is closed afterwards, whatever happens: a writer waiting for
        the journal then opens the new one.

        Raises:
            InvalidKeyError / ObjectNotFoundError: a referenced key is invalid
                or not stored; nothing is written.
            JournalError: the journal is closed or broken, or another writer
                appended to it or replaced it meanwhile.
            StoreIOError: the write failed; the old journal is left as it was.
        """
        self._check_open()
        try:
            wanted = [(ENTRY, data, keys) for data, keys in items]
            if finish is not None:
                wanted.append((FINISH, finish[0], finish[1]))
            prepared = self._prepare(wanted)
            data = HEADER + b"".join(frame for _, _, frame in prepared)
            if len(data) > MAX_JOURNAL_BYTES:
                raise JournalError(self.name, f"a rewritten journal of {len(data)} bytes exceeds the "
                                              f"{MAX_JOURNAL_BYTES}-byte cap")
            self._broken = True  # cleared only once the new journal is in place
            self._failing(self._replace, data)
            self._broken = False
            self._entries = [entry for kind, entry, _ in prepared if kind == ENTRY]
            self._finish = next((entry for kind, entry, _ in prepared if kind == FINISH), None)
        finally:
            self.close()

    def _prepare(self, items: list[tuple[int, Mapping[str, Any], Iterable[str]]]
                 ) -> list[tuple[int, JournalEntry, bytes]]:
        """Check the keys of ``items`` (valid and stored) and frame each one.

        When ``has`` can also check many keys at once (a ``missing`` method,
        as the store's has: one writer guard for the batch instead of one per
        key), the batch's keys are checked with one call.
        """
        missing = getattr(self._has, "missing", None)
        if missing is not None:
            wanted = [key for _, _, keys in items for key in keys]
            absent = set(missing([validate_key(k) for k in wanted]))
            has: Callable[[str], bool] = lambda key: key not in absent  # noqa: E731
        else:
            has = self._has
        prepared = []
        for kind, data, keys in items:
            checked = tuple(validate_key(k) for k in keys)
            for key in checked:
                if not has(key):
                    raise ObjectNotFoundError(key)
            try:
                frame = encode_entry(kind, data, checked)
            except (TypeError, ValueError) as exc:
                raise JournalError(self.name, f"entry cannot be encoded: {exc}") from None
            prepared.append((kind, JournalEntry(types.MappingProxyType(dict(data)), checked), frame))
        return prepared

    def _write(self, items: list[tuple[int, Mapping[str, Any], Iterable[str]]]) -> None:
        prepared = self._prepare(items)
        if not prepared:
            return
        blob = b"".join(frame for _, _, frame in prepared)
        self._broken = True  # cleared only once the bytes are durable
        self._failing(self._persist, blob)
        self._broken = False
        for kind, entry, _ in prepared:
            if kind == FINISH:
                self._finish = entry
            else:
                self._entries.append(entry)

    def _failing(self, write: Callable[[bytes], None], data: bytes) -> None:
        """``write(data)``, keeping the first failure, which later refusals of the broken writer name."""
        try:
            write(data)
        except BaseException as exc:
            self._failure = self._failure or exc
            raise

    def _persist(self, blob: bytes) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _replace(self, data: bytes) -> None:  # pragma: no cover - abstract
        """Atomically make ``data`` (a whole journal, header included) the journal's bytes."""
        raise NotImplementedError

    def _release(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _delete_held(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def keep_alive(self) -> None:
        """Renew the writer's hold on the journal if it is due (a heartbeat); a no-op where the hold never lapses.

        Safe to call from another thread than the one that appends.
        """

    def discard_if_empty(self) -> bool:
        """Close the writer; if the journal holds no entry and no finish marker, delete it first.

        The journal is deleted while this writer still holds it, so no other
        writer can have appended in between. Returns whether it was deleted.
        """
        if not self._open:
            return False
        try:
            if self._entries or self._finish is not None:
                return False
            self._delete_held()
            return True
        finally:
            self.close()

    def close(self) -> None:
        """Release the writer lock. Safe to call twice."""
        if self._open:
            self._open = False
            self._release()

    def __enter__(self) -> JournalWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _one_line(exc: BaseException) -> str:
    """``exc`` as ``Type: message`` on one line (the message of a store error names the store and the cause)."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
