"""The catalog index: one object that lists every run, so that ``runs ls`` costs a few reads, not two per run.

The index (format :data:`CATALOG_INDEX_VERSION`, zlib-framed canonical JSON)
is a store object named by the ref :data:`INDEX_REF`. It holds, per run, the
key of the run-info it was read from and that run-info (or why it could not
be read), and the **position in the store's ref log** it is current to: the
sequence number of the last log entry it covers and that entry's SHA-256.

It is never trusted blindly. :func:`query_index` (``runs ls``) checks that
the ref log still holds that entry with that digest, then reads the log
entries after it (the *tail*) and re-reads the runs whose ``runs/`` or
``results/`` ref they changed, so the answer is as current as the refs. An
index that is missing, damaged, of another version, or more than
:data:`TAIL_LIMIT` changes behind is not used: the caller lists by reading
every run instead, and says why.

The index is updated by compare-and-swap on :data:`INDEX_REF`
(:func:`refresh_index`: the old index plus its tail; :func:`build_index`:
everything again, ``runs reindex``), so two updaters never lose each
other's runs; the loser starts again from the winner's index.

What the index does not see: a change made around the store (a ref written
with plain PUTs, a run-info object replaced) makes no ref log entry; ``store
fsck`` and ``store audit`` report such refs, and ``runs reindex`` reads
everything again. A run that has a journal but no ``runs/`` or ``results/``
ref (a run that failed before its first run-info) is listed by a full
listing (``runs ls --scan``), not by the index.
"""

from __future__ import annotations

import contextlib
import gc
import json
import re
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ..errors import StoreUsageError
from ..evaluation.run_info import RUN_INFO_REF_PREFIX, trusted_run_info
from ..evaluation.store_names import RESULT_REF_PREFIX, is_run_name, run_names
from ..io.versions import CATALOG_INDEX_VERSION
from .catalog import CatalogRow, read_row

INDEX_REF = "catalog/index"
TAIL_LIMIT = 512
"""At most this many ref log entries after the index's position are applied; more: the index is not used."""
REFRESH_AFTER = 64
"""``runs ls`` writes a refreshed index (when it may write) once it applied more tail entries than this."""
MAX_INDEX_BYTES = 256 << 20
"""Readers refuse a larger index (about 250,000 runs)."""
NO_INDEX = "there is no catalog index yet"
_KEYS = frozenset({"catalog_index_version", "log_position", "log_entry", "runs"})
_ROW_KEYS = frozenset({"run", "key", "info", "damage"})


class IndexUnusable(Exception):
    """The index cannot answer; ``reason`` says why in one line (internal: callers fall back)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class IndexedRun:
    """One run as the index holds it: the run-info key read (None if none) and the row."""

    key: str | None
    row: CatalogRow


@dataclass(frozen=True, slots=True)
class CatalogIndex:
    """A parsed index.

    Attributes:
        position: the last ref log entry it covers (-1: the log was empty).
        entry: that entry's SHA-256 (None when ``position`` is -1).
        runs: every run it lists, by name.
    """

    position: int
    entry: str | None
    runs: dict[str, IndexedRun]

    def to_bytes(self) -> bytes:
        """Canonical JSON (sorted keys, runs in name order)."""
        rows = []
        for name in sorted(self.runs):
            item = self.runs[name]
            info = item.row.info
            rows.append({"run": name, "key": item.key, "info": None if info is None else info.to_dict(),
                         "damage": item.row.damage})
        doc = {"catalog_index_version": CATALOG_INDEX_VERSION, "log_position": self.position,
               "log_entry": self.entry, "runs": rows}
        return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def parse_index(data: bytes) -> CatalogIndex:
    """Parse index bytes; IndexUnusable names the first problem (version, shape, a bad row).

    The garbage collector waits until the parse is done: what it builds
    (tens of thousands of containers for 10,000 runs) is either kept or freed
    by reference counting, never cyclic garbage, so the collections their
    allocation triggers, each walking the young objects and some the whole
    heap, find nothing; in the ``runs ls`` process they were about a third
    of the parse.
    """
    with _collections_put_off():
        return _parse_index(data)


@contextlib.contextmanager
def _collections_put_off() -> Iterator[None]:
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _parse_index(data: bytes) -> CatalogIndex:
    from ..errors import RunInfoError

    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, ValueError):
        raise IndexUnusable("the index is not JSON") from None
    if not isinstance(doc, dict):
        raise IndexUnusable("the index is not a JSON object")
    if doc.get("catalog_index_version") != CATALOG_INDEX_VERSION:
        raise IndexUnusable(f"catalog_index_version {doc.get('catalog_index_version')!r:.20} is not supported "
                            f"(this code reads {CATALOG_INDEX_VERSION!r})")
    if set(doc) != _KEYS:
        raise IndexUnusable("the index has unknown or missing fields")
    position, entry, rows = doc["log_position"], doc["log_entry"], doc["runs"]
    if not isinstance(position, int) or isinstance(position, bool) or position < -1:
        raise IndexUnusable("log_position must be an integer >= -1")
    if (position == -1) != (entry is None) or (entry is not None and not _is_key(entry)):
        raise IndexUnusable("log_entry must be the SHA-256 of the entry at log_position")
    if not isinstance(rows, list):
        raise IndexUnusable("runs must be a list")
    runs: dict[str, IndexedRun] = {}
    previous = ""
    for row in rows:
        if not isinstance(row, dict) or set(row) != _ROW_KEYS:
            raise IndexUnusable("a run of the index has unknown or missing fields")
        name, key, info, damage = row["run"], row["key"], row["info"], row["damage"]
        if not isinstance(name, str) or not is_run_name(name) or name <= previous:
            raise IndexUnusable(f"runs must be run names in ascending order ({str(name)[:20]!r})")
        previous = name
        if key is not None and not _is_key(key):
            raise IndexUnusable(f"run {name}: key is not a SHA-256")
        if (info is None) == (damage is None):
            raise IndexUnusable(f"run {name}: exactly one of info and damage must be set")
        if info is not None:
            try:
                parsed = trusted_run_info(info)
            except (RunInfoError, TypeError) as exc:
                raise IndexUnusable(f"run {name}: {exc}") from None
            if parsed.run != name or key is None:
                raise IndexUnusable(f"run {name}: its run-info names another run, or it has no key")
            runs[name] = IndexedRun(key, CatalogRow(name, parsed, None))
        else:
            if not isinstance(damage, str) or not damage:
                raise IndexUnusable(f"run {name}: damage must be a reason")
            runs[name] = IndexedRun(key, CatalogRow(name, None, damage))
    return CatalogIndex(position, entry, runs)


_KEY_RE = re.compile(r"[0-9a-f]{64}")


def _is_key(value: object) -> bool:
    return isinstance(value, str) and _KEY_RE.fullmatch(value) is not None


# -- reading runs ---------------------------------------------------------------------------


def _read_runs(store: Any, names: Iterable[str], known: dict[str, str | None] | None = None
               ) -> dict[str, IndexedRun]:
    """Each run's run-info key and row, read from the store (in parallel on a remote store).

    ``known`` maps runs to the key their ``runs/`` ref was last logged to
    hold (None: deleted): their ref is not read again.
    """
    from emberbench.store import RefError

    def one(name: str) -> tuple[str, IndexedRun]:
        if known is not None and name in known:
            key = known[name]
            return name, IndexedRun(key, _row_at(store, name, key))
        try:
            found: str | None = store.refs.get(RUN_INFO_REF_PREFIX + name)
        except RefError:
            found = None
        return name, IndexedRun(found, read_row(store, name))

    wanted = sorted(set(names))
    if not getattr(store.backend, "remote", False) or len(wanted) < 2:
        return dict(map(one, wanted))
    with ThreadPoolExecutor(max_workers=16) as pool:
        return dict(pool.map(one, wanted))


def _row_at(store: Any, name: str, key: str | None) -> CatalogRow:
    """The row of run ``name`` whose run-info the ref log says is ``key`` (None: its ref was deleted)."""
    from emberbench.store import StoreError, StoreIOError

    from ..errors import RunInfoError
    from ..evaluation.run_info import parse_stored

    if key is None:
        return read_row(store, name)  # no run-info: the row says why (or the run is gone)
    try:
        info = parse_stored(store, key, f"ref {RUN_INFO_REF_PREFIX}{name}")
    except StoreIOError:
        raise
    except (RunInfoError, StoreError) as exc:
        return CatalogRow(name, None, " ".join(str(exc).split()))
    if info.run != name:
        return CatalogRow(name, None, f"its run-info names another run ({info.run})")
    return CatalogRow(name, info, None)


def _log_position(store: Any) -> tuple[int, str | None]:
    """The last entry of the ref log and the digest of its bytes (-1, None for an empty log).

    The digest is taken of the bytes as stored, so an index can be built
    even when that entry is damaged (the ref log check reports it); the
    index is then current to it, and its tail starts after it.
    """
    from emberbench.store import RefLogError

    log = store.refs.log
    for _ in range(3):  # an entry removed between the listing and the read: look again
        last = log.last_seq()
        if last is None:
            return -1, None
        digest = log.entry_digest(last)
        if digest is not None:
            return last, digest
    raise RefLogError(last, "no such entry (removed while the log was read)")


# -- building and refreshing ---------------------------------------------------------------


def build_index(store: Any) -> CatalogIndex:
    """Read every run of the store (``runs reindex``); the position is taken first, so nothing is missed."""
    position, entry = _log_position(store)
    return CatalogIndex(position, entry, _read_runs(store, run_names(store)))


def load_index(store: Any) -> tuple[str | None, CatalogIndex | None, str | None]:
    """``(key, index, reason)``: the stored index and its key, or why there is none usable."""
    from emberbench.store import ObjectTooLargeError, RefError, StoreError, StoreIOError

    try:
        key = store.refs.get(INDEX_REF)
    except RefError as exc:
        if exc.reason == "no such ref":
            return None, None, NO_INDEX
        return None, None, f"the catalog index ref is damaged ({exc.reason})"
    try:
        data = store.get(key, max_length=MAX_INDEX_BYTES)  # one read: the cap is checked from its header
    except StoreIOError:
        raise
    except ObjectTooLargeError:
        return key, None, f"the catalog index is larger than {MAX_INDEX_BYTES} bytes"
    except StoreError as exc:
        return key, None, f"the catalog index object is damaged ({' '.join(str(exc).split())})"
    try:
        return key, parse_index(data), None
    except IndexUnusable as exc:
        return key, None, f"the catalog index is damaged ({exc.reason})"


def _tail(store: Any, index: CatalogIndex, key: str | None = None) -> list[Any]:
    """The ref log entries after the index's position (IndexUnusable if the log moved under it or they are too many)."""
    from emberbench.store import RefLogError

    log = store.refs.log
    if index.position >= 0:
        # The bytes as stored, well formed or not: the index names them, not their meaning.
        at = log.entry_digest(index.position)
        if at is None:
            raise IndexUnusable(f"the ref log no longer holds the entry the index was built at "
                                f"(entry {index.position} is missing)")
        if at != index.entry:
            raise IndexUnusable(f"ref log entry {index.position} is not the one the index was built at "
                                "(the log was replaced)")
    seqs = log.seqs(index.position + 1, TAIL_LIMIT + 1)
    if len(seqs) > TAIL_LIMIT:
        raise IndexUnusable(f"the catalog index is more than {TAIL_LIMIT} changes behind the ref log")
    entries = []
    for item in log.read_many(seqs):
        if isinstance(item, RefLogError):
            raise IndexUnusable(f"the ref log after the index cannot be read ({item})")
        entries.append(item)
    if key is not None:
        # The index's own ref change is logged after its position: the last one must name this index,
        # else the ref was pointed at it around the store (and its content is nobody's word).
        own = [e for e in entries if e.ref == INDEX_REF]
        if not own or own[-1].new != key:
            raise IndexUnusable("the catalog index ref was changed without a ref log entry")
    return entries


def apply_tail(store: Any, index: CatalogIndex, key: str | None = None) -> tuple[CatalogIndex, int]:
    """The index brought up to the end of the ref log, and how many entries that took.

    ``key`` is the stored index's key, when ``index`` was loaded from the
    store: its ref change must then be in the tail, naming it.

    Raises:
        IndexUnusable: see :func:`_tail`.
    """
    entries = _tail(store, index, key)
    if not entries:
        return index, 0
    # The last logged value of each touched runs/ ref is its value now (a change around the log is
    # fsck's to report); a results/ ref matters only for a run the index does not list yet.
    known = {e.run: e.new for e in entries if e.run is not None and e.ref == RUN_INFO_REF_PREFIX + e.run}
    touched = set(known) | {e.run for e in entries if e.run is not None and e.ref == RESULT_REF_PREFIX + e.run
                            and e.run not in index.runs}
    runs = dict(index.runs)
    for name, item in _read_runs(store, touched, known).items():
        if item.key is None and item.row.info is None and _gone(store, name):
            runs.pop(name, None)  # deleted (store rm-run): no ref and no journal left
        else:
            runs[name] = item
    last = entries[-1]
    return CatalogIndex(last.seq, last.digest, runs), len(entries)


def _gone(store: Any, name: str) -> bool:
    return (RESULT_REF_PREFIX + name) not in store.refs and name not in store.journal_names()


def save_index(store: Any, old_key: str | None, index: CatalogIndex) -> str:
    """Put ``index`` and move :data:`INDEX_REF` from ``old_key`` to it (RefConflictError if another updater won)."""
    from emberbench.store import Codec

    key = store.put(index.to_bytes(), codec=Codec.ZLIB)
    store.refs.compare_and_swap(INDEX_REF, old_key, key)
    return key


def refresh_index(store: Any, *, attempts: int = 4) -> tuple[str, CatalogIndex, bool]:
    """Bring the stored index up to date (its tail applied, or rebuilt when it cannot be used).

    Returns:
        ``(key, index, rebuilt)``.

    Raises:
        ReadOnlyStoreError: the store cannot be written.
        RefConflictError: other updaters kept winning.
    """
    from emberbench.store import RefConflictError

    for attempt in range(attempts):
        key, index, _ = load_index(store)
        rebuilt = index is None
        if index is not None:
            try:
                index, _ = apply_tail(store, index, key)
            except IndexUnusable:
                rebuilt, index = True, None
        if index is None:
            index = build_index(store)
        try:
            return save_index(store, key, index), index, rebuilt
        except RefConflictError:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass(frozen=True, slots=True)
class IndexAnswer:
    """What :func:`query_index` found: rows to list, or why the index cannot answer.

    Attributes:
        rows: every run, in name order (None: list by reading every run; see ``reason``).
        reason: why the index was not used (None when it was).
        applied: ref log entries applied on top of the stored index.
        index: the index brought up to date (None when unusable), and ``key``: the stored one's key.
    """

    rows: list[CatalogRow] | None
    reason: str | None
    applied: int
    index: CatalogIndex | None
    key: str | None


def query_index(store: Any) -> IndexAnswer:
    """The runs as the index, checked against the ref log and brought up to date in memory, lists them."""
    key, index, reason = load_index(store)
    if index is None:
        return IndexAnswer(None, reason, 0, None, key)
    try:
        current, applied = apply_tail(store, index, key)
    except IndexUnusable as exc:
        return IndexAnswer(None, exc.reason, 0, None, key)
    rows = [current.runs[name].row for name in sorted(current.runs)]
    return IndexAnswer(rows, None, applied, current, key)


def check_index(store: Any) -> list[str]:
    """``store fsck`` / ``store audit``: problems of the catalog index, one line each (none without an index).

    The index, brought up to date with the ref log, must name for every run
    the run-info key its ``runs/`` ref holds now; a difference means a ref
    or a run-info was changed without a ref log entry, or the index was
    edited. ``runs reindex`` rebuilds it.
    """
    from emberbench.store import RefError

    key, index, reason = load_index(store)
    if index is None:
        return [] if key is None and reason == NO_INDEX else [f"{INDEX_REF}: {reason} (`emberbench runs reindex` "
                                                              "rebuilds it)"]
    try:
        current, _ = apply_tail(store, index, key)
    except IndexUnusable as exc:
        return [f"{INDEX_REF}: {exc.reason} (`emberbench runs reindex` rebuilds it)"]
    problems = []
    names = {ref[len(RUN_INFO_REF_PREFIX):] for ref in store.refs.names()
             if ref.startswith(RUN_INFO_REF_PREFIX) and is_run_name(ref[len(RUN_INFO_REF_PREFIX):])}
    for name in sorted(names | {n for n, item in current.runs.items() if item.key is not None}):
        try:
            actual: str | None = store.refs.get(RUN_INFO_REF_PREFIX + name)
        except RefError:
            actual = None
        item = current.runs.get(name)
        listed = None if item is None else item.key
        if listed != actual:
            problems.append(f"{INDEX_REF}: run {name[:20]}... is listed with run-info {str(listed)[:16]}, its ref "
                            f"holds {str(actual)[:16]} (changed without a ref log entry, or the index was edited; "
                            "`emberbench runs reindex` rebuilds it)")
    return problems


def reindex(store: Any) -> tuple[str, CatalogIndex]:
    """Rebuild the index from every run (``runs reindex``) and store it; returns its key and the index."""
    from emberbench.store import RefConflictError

    for attempt in range(4):
        key, _, _ = load_index(store)
        index = build_index(store)
        try:
            return save_index(store, key, index), index
        except RefConflictError:
            if attempt == 3:
                raise
    raise StoreUsageError("the catalog index keeps changing under runs reindex")  # pragma: no cover


__all__ = ["INDEX_REF", "TAIL_LIMIT", "CatalogIndex", "IndexAnswer", "IndexedRun", "apply_tail", "build_index",
           "check_index", "load_index", "parse_index", "query_index", "refresh_index", "reindex", "save_index"]
