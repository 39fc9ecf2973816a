"""Run journals on S3: numbered segment objects, one per append.

A journal ``name`` is the objects ``journals/<name>/0000000000``,
``.../0000000001``...; segment 0 holds the journal header (and, for a
journal copied from a local store, possibly entries), every later segment
one append (one or more whole entries). Their concatenation, in order, is
byte for byte what a local journal file would hold, so both backends share
:func:`store.journal.parse`.

* **One writer**: the writer holds the journal's lease (:mod:`store.s3_lease`),
  and creates each segment with ``If-None-Match: *``: even a writer whose
  lease was lost cannot overwrite or interleave with another's segments; it
  gets a JournalError instead.
* **Compaction**: every :data:`COMPACT_EVERY` appends the writer stores the
  whole journal so far as ``journals/<name>/base-<seq>`` (the concatenation of
  segments 0..seq) and then deletes those segments, so reading a journal costs
  a few requests, not one per append. Readers use the newest base and the
  segments after it; one that finds a listed segment already deleted by a
  compaction reads again.
* **Damage is detected, never repaired**: a missing segment number (a gap),
  an empty segment, or a segment that does not hold whole valid entries,
  raises :class:`~store.errors.JournalCorruptError`. An S3 PUT is atomic, so a
  segment is never torn; a damaged last segment is corruption, not a tail.
* **Each piece says where it belongs**: every segment and base is written
  with the metadata ``journal`` (its journal's name) and ``segment`` (or
  ``base``: its number). A reader whose first piece carries them requires
  them of every piece, so a segment copied over another, moved from another
  journal, or swapped with another is caught; a journal whose first piece has
  no such metadata (written before it existed) is read as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from .errors import JournalCorruptError, JournalError, LockError, StoreIOError, StoreLayoutError
from .journal import HEADER, MAX_JOURNAL_BYTES, JournalWriter, parse, whole_entries
from .s3_client import CONFLICT, PRECONDITION, client_errors, error_code, io_error
from .s3_lease import Leases


class SegmentBackend(Protocol):
    """What segment journals use of the S3 backend; :class:`store.s3.S3Backend` provides it.

    Declared here, below the backend, so that the backend imports this module
    and this module imports nothing of the backend.
    """

    name: str
    bucket: str
    prefix: str
    client: Any
    leases: Leases

    def list_prefix(self, base: str, *, limit: int | None = None) -> Iterator[dict[str, Any]]: ...

    def get_small(self, key: str, cap: int) -> bytes | None: ...

    def get_piece(self, key: str, cap: int) -> tuple[bytes, dict[str, str]] | None: ...

    def delete_key(self, key: str, **conditions: str) -> None: ...


def _lock_args(backend: SegmentBackend) -> dict[str, Any]:
    """The Object Lock arguments of a write-once put (see :mod:`store.s3_history`); none without history."""
    history = getattr(backend, "history", None)
    return {} if history is None else history.write_once_args()


SEGMENT_DIGITS = 10
COMPACT_EVERY = 256
_READ_ATTEMPTS = 4


def segment_key(backend: SegmentBackend, name: str, seq: int) -> str:
    return f"{backend.prefix}journals/{name}/{seq:0{SEGMENT_DIGITS}d}"


def base_key(backend: SegmentBackend, name: str, seq: int) -> str:
    return f"{backend.prefix}journals/{name}/base-{seq:0{SEGMENT_DIGITS}d}"


def piece_metadata(name: str, seq: int, *, base: bool = False) -> dict[str, str]:
    """The metadata a segment (or base) ``seq`` of journal ``name`` is written with."""
    return {"journal": name, "base" if base else "segment": str(seq)}


def _check_place(name: str, label: str, expected: dict[str, str], found: dict[str, str]) -> None:
    """Refuse a piece of a sequenced journal whose metadata says it belongs elsewhere."""
    got = {k: found.get(k) for k in ("journal", "segment", "base") if found.get(k) is not None}
    if got == expected:
        return
    if not got:
        raise JournalCorruptError(name, 0, f"{label} lacks the journal and number it was written with "
                                           "(replaced by a plain upload?)")
    where = f"journal {got.get('journal', '?')}, " + (f"base {got['base']}" if "base" in got
                                                      else f"segment {got.get('segment', '?')}")
    raise JournalCorruptError(name, 0, f"{label} holds what was written as {where} (moved or swapped)")


def list_segments(backend: SegmentBackend, name: str) -> tuple[list[tuple[int, str, int]], list[tuple[int, str, int]]]:
    """``(segments, bases)``: ``(seq, key, size)`` of every segment and every base of ``name``, in order."""
    base = f"{backend.prefix}journals/{name}/"
    segments, bases = [], []
    for item in backend.list_prefix(base):
        rest = item["Key"][len(base):]
        if len(rest) == SEGMENT_DIGITS and rest.isdigit():
            segments.append((int(rest), item["Key"], item["Size"]))
        elif rest.startswith("base-") and len(rest) == SEGMENT_DIGITS + 5 and rest[5:].isdigit():
            bases.append((int(rest[5:]), item["Key"], item["Size"]))
    return sorted(segments), sorted(bases)


def read_segments(backend: SegmentBackend, name: str, cap: int = MAX_JOURNAL_BYTES) -> tuple[bytes, int]:
    """The bytes of journal ``name`` (newest base, then the segments after it) and its next segment number.

    Raises:
        JournalError: no such journal.
        JournalCorruptError: a segment is missing, or one does not hold whole entries.
        StoreLayoutError: larger than ``cap``.
    """
    for attempt in range(_READ_ATTEMPTS):
        try:
            return _read_once(backend, name, cap)
        except _Vanished:
            if attempt == _READ_ATTEMPTS - 1:
                raise JournalCorruptError(name, 0, "segments keep vanishing while being read") from None
    raise AssertionError("unreachable")  # pragma: no cover


class _Vanished(Exception):
    """A listed segment was deleted (by a compaction) before it could be read."""


def _read_once(backend: SegmentBackend, name: str, cap: int) -> tuple[bytes, int]:
    segments, bases = list_segments(backend, name)
    if not segments and not bases:
        raise JournalError(name, "no such journal")
    pieces: list[tuple[int, str, int]] = []
    first = 0
    if bases:
        top = bases[-1]
        pieces.append(top)
        first = top[0] + 1
    later = [item for item in segments if item[0] >= first]
    for expected, (seq, _, _) in enumerate(later, start=first):
        if seq != expected:
            raise JournalCorruptError(name, 0, f"segment {expected} is missing")
    pieces.extend(later)
    if sum(size for _, _, size in pieces) > cap:
        raise StoreLayoutError(f"{backend.name}/journals/{name}", f"larger than the {cap}-byte journal cap")
    with ThreadPoolExecutor(max_workers=16) as pool:
        got = list(pool.map(lambda item: backend.get_piece(item[1], cap), pieces))
    if any(piece is None for piece in got):
        raise _Vanished()
    parts = [piece[0] for piece in got if piece is not None]
    sequenced = bool(got[0] and got[0][1].get("journal"))
    offset = 0
    for index, data in enumerate(parts):
        seq = pieces[index][0]
        is_base = bool(bases) and index == 0
        label = f"base {seq}" if is_base else f"segment {seq}"
        if sequenced:
            _check_place(name, label, piece_metadata(name, seq, base=is_base), got[index][1])  # type: ignore[index]
        start = 0
        if index == 0:
            if not data.startswith(HEADER):
                parse(name, data[: len(HEADER)] if len(data) >= len(HEADER) else data)  # names a bad header
                raise JournalCorruptError(name, 0, f"{label} does not start with a whole journal header")
            start = len(HEADER)
        elif not data:
            raise JournalCorruptError(name, offset, f"{label} is empty (an append always writes an entry)")
        if not whole_entries(data, start):
            raise JournalCorruptError(name, offset, f"{label} does not hold whole valid entries")
        offset += len(data)
    return b"".join(parts), (later[-1][0] + 1) if later else first


class SegmentJournalWriter(JournalWriter):
    """The single writer of one S3 journal (see :class:`store.journal.JournalWriter`)."""

    def __init__(self, backend: SegmentBackend, name: str, has: Callable[[str], bool], *, create: bool,
                 timeout: float) -> None:
        super().__init__(name, has)
        self._backend = backend
        self._renewing = threading.Lock()  # the appending thread and a heartbeat both renew the lease
        leases = backend.leases
        try:
            self._lease = leases.take(leases._key(f"journal-{name}"), "journal", timeout)
        except LockError:
            raise LockError(f"{backend.name}/journals/{name}", "another writer holds this journal") from None
        try:
            self._load(create)
        except BaseException:
            leases.release(self._lease)
            raise

    def _load(self, create: bool) -> None:
        try:
            data, count = read_segments(self._backend, self.name)
        except JournalError as exc:
            if exc.reason != "no such journal" or not create:
                raise
            self._create_segment(0, HEADER)
            data, count = HEADER, 1
        state, _ = parse(self.name, data)
        self._adopt(state)
        self._next = count
        self._data = bytearray(data)
        segments, bases = list_segments(self._backend, self.name)
        self._based = bases[-1][0] if bases else -1
        if len([s for s in segments if s[0] > self._based]) >= COMPACT_EVERY:
            self._compact()

    def _create_segment(self, seq: int, data: bytes) -> None:
        key = segment_key(self._backend, self.name, seq)
        try:
            self._backend.client.put_object(Bucket=self._backend.bucket, Key=key, Body=data, IfNoneMatch="*",
                                            Metadata=piece_metadata(self.name, seq), **_lock_args(self._backend))
        except client_errors() as exc:
            if error_code(exc) in (PRECONDITION, CONFLICT):
                raise JournalError(self.name, f"segment {seq} was written by another writer (conflict)") from None
            raise io_error("append", f"{self._backend.name}/journals/{self.name}", exc) from exc

    def _persist(self, blob: bytes) -> None:
        # A run may go minutes between appends (slow episodes): an idle lease
        # is reclaimed if nobody took it over; segments are fenced anyway.
        self._renew()
        self._create_segment(self._next, blob)
        self._next += 1
        self._data += blob
        if self._next - 1 - self._based >= COMPACT_EVERY:
            self._compact()

    def _compact(self) -> None:
        """Store the journal so far as one base object, then delete what it covers."""
        upto = self._next - 1
        backend = self._backend
        try:
            backend.client.put_object(Bucket=backend.bucket, Key=base_key(backend, self.name, upto),
                                      Body=bytes(self._data), IfNoneMatch="*",
                                      Metadata=piece_metadata(self.name, upto, base=True), **_lock_args(backend))
        except client_errors() as exc:
            if error_code(exc) not in (PRECONDITION, CONFLICT):
                raise io_error("compact", f"{backend.name}/journals/{self.name}", exc) from exc
        segments, bases = list_segments(backend, self.name)
        covered = [key for seq, key, _ in bases if seq < upto] + [key for seq, key, _ in segments if seq <= upto]
        for key in covered:
            try:
                backend.delete_key(key)
            except StoreIOError:
                # Credentials that may append but not delete (an evaluator's role): the
                # covered segments stay, and readers skip everything a newer base covers.
                break
        self._based = upto

    def _replace(self, data: bytes) -> None:
        """Store ``data`` as a base newer than every segment, then delete what it supersedes.

        Readers take the newest base and the segments after it, so the new
        base replaces the journal in one conditional PUT; until the older
        segments are deleted they are simply ignored.
        """
        backend = self._backend
        self._renew()
        segments, bases = list_segments(backend, self.name)
        if any(seq >= self._next for seq, _, _ in segments) or any(seq >= self._next for seq, _, _ in bases):
            raise JournalError(self.name, "another writer appended to the journal (conflict)")
        top = self._next
        try:
            backend.client.put_object(Bucket=backend.bucket, Key=base_key(backend, self.name, top), Body=data,
                                      IfNoneMatch="*", Metadata=piece_metadata(self.name, top, base=True),
                                      **_lock_args(backend))
        except client_errors() as exc:
            if error_code(exc) in (PRECONDITION, CONFLICT):
                raise JournalError(self.name, f"base {top} was written by another writer (conflict)") from None
            raise io_error("rewrite", f"{backend.name}/journals/{self.name}", exc) from exc
        for seq, key, _ in [*reversed(segments), *reversed(bases)]:
            if seq < top:
                backend.delete_key(key)
        self._next, self._based, self._data = top + 1, top, bytearray(data)

    def _renew(self) -> None:
        with self._renewing:
            self._backend.leases.renew(self._lease, reclaim=True)

    def keep_alive(self) -> None:
        if self._open:
            self._renew()

    def _release(self) -> None:
        with self._renewing:
            self._backend.leases.release(self._lease)

    def _delete_held(self) -> None:
        _delete_all(self._backend, self.name)


def delete_segments(backend: SegmentBackend, name: str, timeout: float) -> bool:
    """Delete journal ``name`` (newest segment first, so a reader sees a shorter journal, not a gap)."""
    leases = backend.leases
    try:
        lease = leases.take(leases._key(f"journal-{name}"), "journal", timeout)
    except LockError:
        raise LockError(f"{backend.name}/journals/{name}", "a writer holds this journal") from None
    try:
        return _delete_all(backend, name)
    finally:
        leases.release(lease)


def _delete_all(backend: SegmentBackend, name: str) -> bool:
    """Delete every segment and base of ``name`` (the caller holds its lease); whether there was any."""
    segments, bases = list_segments(backend, name)
    for _, key, _ in [*reversed(segments), *reversed(bases)]:
        backend.delete_key(key)
    return bool(segments or bases)


def import_segments(backend: SegmentBackend, name: str, data: bytes) -> None:
    """Create journal ``name`` as one segment holding ``data`` (a copied journal: whole entries only)."""
    key = segment_key(backend, name, 0)
    try:
        backend.client.put_object(Bucket=backend.bucket, Key=key, Body=data, IfNoneMatch="*",
                                  Metadata=piece_metadata(name, 0), **_lock_args(backend))
    except client_errors() as exc:
        raise io_error("import journal", f"{backend.name}/journals/{name}", exc) from exc


__all__: list[Any] = ["SegmentBackend", "SegmentJournalWriter", "delete_segments", "import_segments", "read_segments"]
