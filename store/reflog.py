"""The ref log: every change of a ref, kept as one write-once entry in an append-only, hash-chained log.

A ref is mutable by nature (a run's ``runs/`` ref moves at every checkpoint),
so its history lives beside it: each change made through :class:`store.refs.Refs`
(set, compare-and-swap, update, delete) appends one entry to the store's ref
log, ``reflog/<seq>`` with ``seq`` twelve decimal digits counted from 0.
An entry is never rewritten or deleted by the store:

* **Created only where nothing is**: a local entry is linked into place from
  a fsynced temp (``link`` fails on an existing name), an S3 entry is put
  with ``If-None-Match: *``. Two writers racing for one number: one wins,
  the other reads the winner and takes the next number.
* **Chained**: each entry holds the SHA-256 of the bytes of the entry before
  it (``prev``), so an entry replaced or removed inside the log breaks the
  chain at its successor, and :func:`check_ref_log` names it.
* **Attributable**: old and new key, the writer's clock (UTC, to the
  second), ``user@host`` of the process, and the run the ref belongs to
  (its last name component when that is a run name, ``run-`` and 64 hex
  digits).

An entry is appended right after the ref changed (never before: a lost
compare-and-swap changes nothing and logs nothing). A process that dies in
between leaves a change without its entry, which :func:`check_ref_log`
reports as an unlogged change, as it does a ref written around the store
(a plain PUT with the bucket's credentials). Two writers of one ref can log
their changes in the opposite order of the changes themselves (S3 has no
lock across the two requests); the check accepts such an adjacent pair.

Entries are canonical JSON, one object and a newline, at most
:data:`ENTRY_CAP` bytes::

    {"by": "ana@node-3", "new": "<key>|null", "note": null, "old": "<key>|null",
     "prev": "<sha256 of entry seq-1>|null", "ref": "runs/run-...", "reflog": 1,
     "run": "run-...|null", "seq": 17, "time": "2026-01-31T12:00:00Z"}
"""

from __future__ import annotations

import getpass
import hashlib
import json
import re
import socket
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from .errors import InvalidKeyError, InvalidNameError, RefLogError
from .keys import validate_key, validate_ref_name

REFLOG_VERSION = 1
SEQ_DIGITS = 12
MAX_SEQ = 10**SEQ_DIGITS - 1
ENTRY_CAP = 4096
"""Readers refuse a ref log entry larger than this."""
NOTE_CAP = 200
_RUN_RE = re.compile(r"run-[0-9a-f]{64}")
_TIME_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
_KEYS = frozenset({"reflog", "seq", "ref", "old", "new", "time", "by", "run", "prev", "note"})
_APPEND_ROUNDS = 10_000


def seq_name(seq: int) -> str:
    """The name of entry ``seq`` inside ``reflog/``."""
    if not isinstance(seq, int) or isinstance(seq, bool) or not 0 <= seq <= MAX_SEQ:
        raise RefLogError(-1, f"sequence number {seq!r} is out of range")
    return f"{seq:0{SEQ_DIGITS}d}"


def parse_seq_name(name: str) -> int | None:
    """The sequence number a name under ``reflog/`` stands for, or None if it is not an entry name."""
    if len(name) == SEQ_DIGITS and name.isascii() and name.isdigit():
        return int(name)
    return None


def run_of(ref: str) -> str | None:
    """The run a ref belongs to: its last name component when that is ``run-`` and 64 hex digits."""
    last = ref.rsplit("/", 1)[-1]
    return last if _RUN_RE.fullmatch(last) else None


_ACTOR: list[str] = []


def actor() -> str:
    """``user@host`` of this process (computed once; printable, at most 256 characters)."""
    if not _ACTOR:
        try:
            user = getpass.getuser() or "unknown"
        except (KeyError, OSError):
            user = "unknown"
        host = socket.gethostname() or "unknown"
        text = "".join(c if c.isprintable() else "?" for c in f"{user}@{host}")
        _ACTOR.append(text[:256])
    return _ACTOR[0]


@dataclass(frozen=True, slots=True)
class RefLogEntry:
    """One change of one ref.

    Attributes:
        seq: its position in the log (0, 1, 2...).
        ref: the ref that changed.
        old, new: the key it held before and after (None: absent, i.e. created or deleted).
        time: when, on the writer's clock (``YYYY-MM-DDTHH:MM:SSZ``).
        by: ``user@host`` of the writing process.
        run: the run the ref belongs to, or None.
        prev: SHA-256 of the bytes of entry ``seq - 1`` (None for entry 0).
        note: why, when the change was not an ordinary write (``"adopted"``...), else None.
        digest: SHA-256 of this entry's bytes (what the next entry's ``prev`` holds).
    """

    seq: int
    ref: str
    old: str | None
    new: str | None
    time: str
    by: str
    run: str | None
    prev: str | None
    note: str | None = None
    digest: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The entry as stored (without ``digest``, which is computed from the bytes)."""
        return {"reflog": REFLOG_VERSION, "seq": self.seq, "ref": self.ref, "old": self.old, "new": self.new,
                "time": self.time, "by": self.by, "run": self.run, "prev": self.prev, "note": self.note}


def encode_entry(entry: RefLogEntry) -> bytes:
    """The stored bytes of ``entry``: canonical JSON (sorted keys, ASCII) and a newline."""
    data = (json.dumps(entry.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=True) + "\n").encode()
    if len(data) > ENTRY_CAP:
        raise RefLogError(entry.seq, f"entry of {len(data)} bytes exceeds the {ENTRY_CAP}-byte cap")
    return data


def parse_entry(seq: int, data: bytes) -> RefLogEntry:
    """Parse and check the bytes stored as entry ``seq``.

    Raises:
        RefLogError: too large, not the JSON of an entry, an unknown version,
            an unknown or missing field, a bad value, or another sequence number.
    """
    if len(data) > ENTRY_CAP:
        raise RefLogError(seq, f"larger than the {ENTRY_CAP}-byte cap")
    try:
        doc = json.loads(data.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        raise RefLogError(seq, "not a JSON entry") from None
    if not isinstance(doc, dict):
        raise RefLogError(seq, "not a JSON object")
    if doc.get("reflog") != REFLOG_VERSION:
        raise RefLogError(seq, f"version {doc.get('reflog')!r} is not supported (this code reads {REFLOG_VERSION})")
    if set(doc) != _KEYS:
        raise RefLogError(seq, f"unknown field(s) {sorted(set(doc) - _KEYS)}, missing {sorted(_KEYS - set(doc))}")
    if doc["seq"] != seq or isinstance(doc["seq"], bool):
        raise RefLogError(seq, f"it says it is entry {doc['seq']!r}")
    try:
        ref = validate_ref_name(doc["ref"])
        old = None if doc["old"] is None else validate_key(doc["old"])
        new = None if doc["new"] is None else validate_key(doc["new"])
        prev = None if doc["prev"] is None else validate_key(doc["prev"])
    except (InvalidKeyError, InvalidNameError) as exc:
        raise RefLogError(seq, str(exc)) from None
    if not isinstance(doc["time"], str) or _TIME_RE.fullmatch(doc["time"]) is None:
        raise RefLogError(seq, f"time {doc['time']!r:.40} is not a UTC time like 2026-01-31T12:00:00Z")
    by, run, note = doc["by"], doc["run"], doc["note"]
    if not isinstance(by, str) or not by or len(by) > 256 or not by.isprintable():
        raise RefLogError(seq, "'by' must be 1-256 printable characters")
    if run is not None and (not isinstance(run, str) or _RUN_RE.fullmatch(run) is None):
        raise RefLogError(seq, f"run {run!r:.80} is not a run name")
    if note is not None and (not isinstance(note, str) or len(note) > NOTE_CAP or not note.isprintable()):
        raise RefLogError(seq, f"note must be at most {NOTE_CAP} printable characters")
    if (seq == 0) != (prev is None):
        raise RefLogError(seq, "only entry 0 has no predecessor")
    return RefLogEntry(seq, ref, old, new, doc["time"], by, run, prev, note, hashlib.sha256(data).hexdigest())


class RefLog:
    """The ref log of one store: appending (for :class:`store.refs.Refs`) and reading.

    A writer remembers where the log ended after its own last append, so an
    append costs one conditional create (plus a read per entry another
    writer appended meanwhile); a fresh process finds the end with a
    galloping search, a few listings.
    """

    def __init__(self, backend: Any) -> None:
        self._backend = backend
        self._lock = threading.Lock()
        self._next: int | None = None
        self._prev: str | None = None

    # -- writing -------------------------------------------------------------------

    def append(self, ref: str, old: str | None, new: str | None, *, note: str | None = None) -> RefLogEntry:
        """Append the change of ``ref`` from ``old`` to ``new``; returns the entry written.

        Raises:
            ReadOnlyStoreError: the store cannot be written.
            StoreIOError: the entry could not be written (the ref has changed
                anyway: :func:`check_ref_log` will report the unlogged change).
        """
        with self._lock:
            if self._next is None:
                self._next, self._prev = self._find_end()
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            for _ in range(_APPEND_ROUNDS):
                entry = RefLogEntry(self._next, ref, old, new, stamp, actor(), run_of(ref), self._prev, note)
                data = encode_entry(entry)
                if self._backend.create_log_entry(self._next, data):
                    digest = hashlib.sha256(data).hexdigest()
                    self._next, self._prev = self._next + 1, digest
                    return RefLogEntry(*[getattr(entry, f) for f in _FIELDS[:-1]], digest)
                # Another writer took this number: follow it.
                theirs = self._backend.read_log_entry(self._next, ENTRY_CAP)
                if theirs is None:
                    continue  # vanished in between (damage): try the number again
                self._prev = hashlib.sha256(theirs).hexdigest()
                self._next += 1
            raise RefLogError(-1, "could not find the end of the log (it keeps growing)")  # pragma: no cover

    def _find_end(self) -> tuple[int, str | None]:
        """``(next seq, digest of the last entry)``: the end of the log as far as it is dense."""
        last = self._backend.last_log_seq()
        if last is None:
            return 0, None
        data = self._backend.read_log_entry(last, ENTRY_CAP)
        return last + 1, None if data is None else hashlib.sha256(data).hexdigest()

    # -- reading -------------------------------------------------------------------

    def seqs(self, start: int = 0, limit: int | None = None) -> list[int]:
        """The sequence numbers stored from ``start`` on (ascending), at most ``limit`` of them."""
        return self._backend.log_seqs(start, limit)

    def read(self, seq: int) -> RefLogEntry:
        """Entry ``seq``.

        Raises:
            RefLogError: no such entry, or it is malformed.
        """
        data = self._backend.read_log_entry(seq, ENTRY_CAP)
        if data is None:
            raise RefLogError(seq, "no such entry")
        return parse_entry(seq, data)

    def read_many(self, seqs: Iterable[int], *, ahead: int = 16) -> Iterator[RefLogEntry | RefLogError]:
        """Each entry of ``seqs`` in order (a RefLogError in place of one that cannot be read)."""
        def one(seq: int) -> RefLogEntry | RefLogError:
            try:
                return self.read(seq)
            except RefLogError as exc:
                return exc

        wanted = list(seqs)
        if len(wanted) <= 1 or not getattr(self._backend, "remote", False):
            yield from (one(seq) for seq in wanted)
            return
        with ThreadPoolExecutor(max_workers=ahead) as pool:
            for start in range(0, len(wanted), 256):
                yield from pool.map(one, wanted[start:start + 256])

    def entries(self, start: int = 0) -> Iterator[RefLogEntry | RefLogError]:
        """Every entry from ``start`` on, in order."""
        return self.read_many(self.seqs(start))

    def last_seq(self) -> int | None:
        """The highest sequence number stored, or None for an empty log."""
        return self._backend.last_log_seq()

    def entry_digest(self, seq: int) -> str | None:
        """SHA-256 of the bytes stored as entry ``seq``, well formed or not (None: no such entry).

        This is what the next entry's ``prev`` names, and what a reader that
        remembers a position in the log (the catalog index) compares with.
        """
        data = self._backend.read_log_entry(seq, ENTRY_CAP)
        return None if data is None else hashlib.sha256(data).hexdigest()


_FIELDS = ("seq", "ref", "old", "new", "time", "by", "run", "prev", "note", "digest")


@dataclass(frozen=True, slots=True)
class RefDisagreement:
    """A ref whose value is not where its logged changes lead (changed, created or deleted around the log).

    Attributes:
        ref: the ref.
        value: the key it holds now (None: it does not exist; ``"unreadable (...)"``: no valid key).
        last: its last readable ref log entry (None: the log has none for it).
        line: the problem, in one line.
    """

    ref: str
    value: str | None
    last: RefLogEntry | None
    line: str


@dataclass(frozen=True, slots=True)
class RefLogReport:
    """What :func:`check_ref_log` found.

    Attributes:
        entries: entries read.
        last: the highest sequence number (None: empty log).
        problems: one line each: first the damage of the log itself
            (``damage``), then each ref that disagrees with it
            (``disagreements``).
        notes: harmless findings.
        damage: the log's own problems, one line each: a gap, a malformed
            entry, a broken chain, a stray name under ``reflog/``. They are
            never repaired (the log is write-once): each stays until the
            entry's original bytes are put back.
        disagreements: refs whose value is not what their last entry says.
            While ``damage`` is not empty they may only reflect it (an
            unreadable entry is no one's word).
    """

    entries: int
    last: int | None
    problems: tuple[str, ...]
    notes: tuple[str, ...]
    damage: tuple[str, ...] = ()
    disagreements: tuple[RefDisagreement, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems


def check_ref_log(store: Any) -> RefLogReport:
    """Check the ref log against itself and against the refs as they are now.

    Reads every entry (in parallel on S3) and every ref. Refs the store
    changes while this runs may be reported; run it again to tell a race
    from damage.
    """
    from .errors import RefError, StoreError

    backend, log = store.backend, store.refs.log
    problems: list[str] = []
    seqs = log.seqs()
    for stray in backend.log_stray_entries():
        problems.append(f"{stray}: not a ref log entry name (the store never writes one; remove it)")
    last_by_ref: dict[str, list[RefLogEntry]] = {}
    previous: RefLogEntry | None = None
    expected = 0
    count = 0
    for item in log.read_many(seqs):
        if isinstance(item, RefLogError):
            problems.append(str(item))
            previous = None
            expected = item.seq + 1 if item.seq >= 0 else expected
            continue
        count += 1
        if item.seq != expected:
            missing = f"entry {expected}" if item.seq == expected + 1 else f"entries {expected}-{item.seq - 1}"
            problems.append(f"ref log: {missing} missing (deleted?)")
        elif previous is not None and item.prev != previous.digest:
            problems.append(f"ref log entry {item.seq}: does not follow entry {previous.seq} (it names "
                            f"{str(item.prev)[:16]}..., entry {previous.seq} hashes to {previous.digest[:16]}...): "
                            f"entry {previous.seq} or entry {item.seq} was replaced")
        previous, expected = item, item.seq + 1
        last_by_ref.setdefault(item.ref, []).append(item)
    current: dict[str, str | None] = {}
    for name in store.refs.names():
        try:
            current[name] = store.refs.get(name)
        except RefError as exc:
            if exc.reason != "no such ref":
                current[name] = f"unreadable ({exc.reason})"
        except StoreError as exc:
            current[name] = f"unreadable ({exc})"
    notes: list[str] = []
    unlogged = 0
    disagreements: list[RefDisagreement] = []
    for name in sorted(set(current) | set(last_by_ref)):
        value = current.get(name)
        history = last_by_ref.get(name)
        if history is None:
            unlogged += 1
            if seqs:
                disagreements.append(RefDisagreement(name, value, None, (
                    f"ref {name}: holds {_short(value)} but the ref log has no entry for it "
                    "(written around the store, or made before the log existed: "
                    "`emberbench store log --adopt` records it)")))
            continue
        if not _matches(history, value):
            logged = history[-1].new
            disagreements.append(RefDisagreement(name, value, history[-1], (
                f"ref {name}: holds {_short(value)} but its last ref log entry "
                f"({history[-1].seq}, by {history[-1].by} at {history[-1].time}) says "
                f"{_short(logged)}: changed without a log entry (`emberbench store fsck --repair` puts back "
                "what it can verify; `emberbench store log --adopt` records the ref as it is)")))
    if not seqs and unlogged:
        notes.append(f"the ref log is empty: {unlogged} ref(s) predate it (`emberbench store log --adopt` "
                     "records their current values)")
    lines = [d.line for d in disagreements]
    return RefLogReport(count, seqs[-1] if seqs else None, (*problems, *lines), tuple(notes), tuple(problems),
                        tuple(disagreements))


def _matches(history: list[RefLogEntry], value: str | None) -> bool:
    """Whether ``value`` is where the ref's logged changes lead (an adjacent pair logged out of order accepted)."""
    if history[-1].new == value:
        return True
    if len(history) >= 2:
        a, b = history[-2], history[-1]
        # a was logged first but happened second: b.old -> b.new, then a.old (== b.new) -> a.new.
        return a.new == value and a.old == b.new
    return False


def _short(value: str | None) -> str:
    if value is None:
        return "nothing (deleted)"
    return value if value.startswith("unreadable") else value[:16] + "..."


__all__ = ["ENTRY_CAP", "REFLOG_VERSION", "RefDisagreement", "RefLog", "RefLogEntry", "RefLogReport", "actor",
           "check_ref_log", "encode_entry", "parse_entry", "parse_seq_name", "run_of", "seq_name"]
