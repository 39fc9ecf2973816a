"""The run catalog: the runs of a store, listed, looked up by short id, shown and exported.

A run is named by its journal (``run-`` and 64 hex digits, see
:func:`emberbench.store.journal_name`); its provenance is the run-info object
its ``runs/<name>`` ref points at (:mod:`emberbench.evaluation.run_info`), its complete
result artifact the object its ``results/<name>`` ref points at. The catalog
only reads: it never changes a run (verification, which records its verdict,
lives in :mod:`emberbench.runs.verify`).

* :func:`iter_catalog` streams one :class:`CatalogRow` per run, reading one
  run-info at a time (memory holds the run names, not their run-infos); a run
  whose run-info cannot be read is a row with ``damage`` set, and the listing
  goes on.
* Short ids are unique prefixes of the 64 hex digits, as in git: at least
  :data:`MIN_PREFIX` digits to look a run up (:func:`parse_run_id` is the one
  rule every command that takes a run id applies, :func:`resolve_run` the lookup), and
  :func:`short_id_length` digits (at least :data:`DISPLAY_PREFIX`) in listings.
* :func:`format_row` lays a row out in at most 80 terminal columns;
  :func:`catalog_json_rows` is the ``--json`` document, streamed.
* :func:`export_run` writes a run's result artifact, byte for byte, through the
  output policy.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import OutputPathError, RunInfoError, StoreUsageError
from ..evaluation.run_info import RUN_INFO_REF_PREFIX, STATES, RunInfo, read_run_info
from ..evaluation.store_names import run_names
from ..evaluation.liveness import DEAD, effective_state
from ..io.versions import RUN_CATALOG_VERSION
from ..tables.table import Table, TableView, columns

RESULT_REF_PREFIX = "results/"
RUN_PREFIX = "run-"
MIN_PREFIX = 4
"""The fewest hex digits a short id may have when it names a run."""
DISPLAY_PREFIX = 8
"""The fewest hex digits a listing shows (more when that is needed to tell two runs apart)."""
LINE_WIDTH = 80
_HEX_RE = re.compile(r"[0-9a-f]+")


@dataclass(frozen=True, slots=True)
class CatalogRow:
    """One run of a store: its run-info, or why that could not be read.

    Attributes:
        run: the run's journal name (``run-`` + 64 hex digits).
        info: its run-info, or None when ``damage`` says why it is unreadable.
        damage: None, or a one-line reason (missing, corrupt, invalid run-info).
    """

    run: str
    info: RunInfo | None
    damage: str | None

    @property
    def hex_id(self) -> str:
        """The 64 hex digits of the run's name."""
        return self.run[len(RUN_PREFIX):]


@dataclass(frozen=True, slots=True)
class RunDetails:
    """Everything the store says about one run (``runs show``).

    Attributes:
        row: the run and its run-info (or damage).
        result_ref: the ref of its complete result (``results/<run>``).
        result_key: the key that ref holds, or None when there is none.
        journal: a one-line account of its journal (entries, finished or not), or None if it has none.
    """

    row: CatalogRow
    result_ref: str
    result_key: str | None
    journal: str | None


def read_row(store: Any, run: str) -> CatalogRow:
    """The catalog row of ``run``: its run-info, or the reason it cannot be read (never raises for damage)."""
    from emberbench.store import StoreError, StoreIOError

    try:
        info = read_run_info(store, run)
    except StoreIOError:
        raise  # the store cannot be reached: not a verdict on this run
    except (RunInfoError, StoreError) as exc:
        return CatalogRow(run, None, " ".join(str(exc).split()))
    if info is None:
        return CatalogRow(run, None, f"no run-info ({RUN_INFO_REF_PREFIX}{run} does not exist)")
    if info.run != run:
        return CatalogRow(run, None, f"its run-info names another run ({info.run})")
    return CatalogRow(run, info, None)


SORT_KEYS = ("id", "started", "ended", "model", "policy", "suite", "state", "done", "user")
"""What ``runs ls --sort`` may order by (each ties broken by id)."""
_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_TIME_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")


@dataclass(frozen=True, slots=True)
class Query:
    """Which runs ``runs ls`` lists, in which order, how many.

    Every filter given must match (tags: the run has every tag named). A
    damaged run cannot be matched and is always listed. ``since``/``until``
    bound the start time, inclusive: a date (``2026-01-31``) or a UTC time
    (``2026-01-31T12:00:00Z``); a date as ``until`` includes that whole day.
    """

    model: str | None = None
    manifest: str | None = None
    state: str | None = None
    suite: str | None = None
    policy: str | None = None
    user: str | None = None
    tags: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None
    sort: str = "id"
    reverse: bool = False
    limit: int | None = None
    now: float | None = None
    """The store's clock (seconds since the epoch): a running run whose heartbeat is stale then is ``dead``
    (:func:`~emberbench.evaluation.liveness.effective_state`); None judges by the run-info's state alone."""

    def __post_init__(self) -> None:
        if self.state is not None and self.state not in (*STATES, DEAD):
            raise StoreUsageError(f"state must be one of {', '.join((*STATES, DEAD))}, got {self.state!r}")
        if self.manifest is not None and not _HEX_RE.fullmatch(self.manifest):
            raise StoreUsageError(f"--manifest must be (a prefix of) a lowercase hex manifest hash, "
                                  f"got {self.manifest!r}")
        if self.sort not in SORT_KEYS:
            raise StoreUsageError(f"--sort must be one of {', '.join(SORT_KEYS)}, got {self.sort!r}")
        if self.limit is not None and (isinstance(self.limit, bool) or self.limit < 1):
            raise StoreUsageError(f"--limit must be at least 1, got {self.limit!r}")
        for name in ("since", "until"):
            value = getattr(self, name)
            if value is not None and not (_DATE_RE.fullmatch(value) or _TIME_RE.fullmatch(value)):
                raise StoreUsageError(f"--{name} must be a date like 2026-01-31 or a UTC time like "
                                      f"2026-01-31T12:00:00Z, got {value!r:.40}")

    @property
    def filtered(self) -> bool:
        """Whether any filter is set (else every row is kept, without looking at it)."""
        return any(value is not None for value in (self.model, self.manifest, self.state, self.suite, self.policy,
                                                    self.user, self.since, self.until)) or bool(self.tags)

    def _state(self, info: RunInfo) -> str:
        return info.state if self.now is None else effective_state(info, self.now)

    def matches(self, info: RunInfo) -> bool:
        """Whether a (readable) run passes every filter."""
        since = None if self.since is None else (self.since + "T00:00:00Z" if len(self.since) == 10 else self.since)
        until = None if self.until is None else (self.until + "T23:59:59Z" if len(self.until) == 10 else self.until)
        return not ((self.model is not None and info.model_id != self.model)
                    or (self.manifest is not None and not info.manifest_hash.startswith(self.manifest))
                    or (self.state is not None and self._state(info) != self.state)
                    or (self.suite is not None and info.suite_id != self.suite)
                    or (self.policy is not None and info.policy != self.policy)
                    or (self.user is not None and info.user != self.user)
                    or any(tag not in info.tags for tag in self.tags)
                    or (since is not None and info.started < since)
                    or (until is not None and info.started > until))


def _run_name(row: CatalogRow) -> str:
    return row.run


def _sort_value(row: CatalogRow, key: str) -> tuple[Any, ...]:
    info = row.info
    if key == "id":
        return (0, "", row.run)
    if info is None:
        return (1, "", row.run)
    value: Any = {"started": info.started, "ended": info.ended or "", "model": info.model_id,
                  "policy": info.policy, "suite": info.suite_id, "state": info.state,
                  "done": info.episodes_done, "user": info.user}[key]
    return (0, value, row.run)


def select(rows: Iterable[CatalogRow], query: Query) -> list[CatalogRow]:
    """The rows ``query`` keeps, in its order, at most ``limit`` readable ones.

    Damaged rows are always kept (no filter or limit hides damage): in id
    order among the others when sorting by id, else after them.
    """
    if query.filtered:
        kept = [row for row in rows if row.info is None or query.matches(row.info)]
    else:
        kept = list(rows)
    if query.sort == "id":
        kept.sort(key=_run_name, reverse=query.reverse)  # damaged or not, by id alone
    else:
        kept.sort(key=lambda r: _sort_value(r, query.sort), reverse=query.reverse)
    if query.sort != "id":
        kept = [r for r in kept if r.info is not None] + [r for r in kept if r.info is None]
    if query.limit is None:
        return kept
    out, counted = [], 0
    for row in kept:
        if row.info is None:
            out.append(row)
        elif counted < query.limit:
            out.append(row)
            counted += 1
    return out


def iter_catalog(store: Any, *, model: str | None = None, manifest: str | None = None,
                 state: str | None = None, names: list[str] | None = None) -> Iterator[CatalogRow]:
    """One row per run, in name order, keeping those that match every filter given.

    Args:
        store: the store.
        model: keep runs of exactly this model id.
        manifest: keep runs whose manifest hash starts with this (lowercase hex).
        state: keep runs in this state (one of :data:`emberbench.evaluation.run_info.STATES`).
        names: the store's :func:`run_names`, if the caller has them already.

    A damaged row cannot be matched against the filters; it is always kept,
    so that no filter hides damage.

    Raises:
        StoreUsageError: a filter is malformed.
        StoreIOError: the store cannot be read (no row is invented for that).
    """
    if state is not None and state not in STATES:
        raise StoreUsageError(f"state must be one of {', '.join(STATES)}, got {state!r}")
    if manifest is not None and not _HEX_RE.fullmatch(manifest):
        raise StoreUsageError(f"--manifest must be (a prefix of) a lowercase hex manifest hash, got {manifest!r}")
    for run in run_names(store) if names is None else names:
        row = read_row(store, run)
        info = row.info
        if info is not None and (
                (model is not None and info.model_id != model)
                or (manifest is not None and not info.manifest_hash.startswith(manifest))
                or (state is not None and info.state != state)):
            continue
        yield row


# -- short ids ----------------------------------------------------------------------------


def short_id_length(runs: Iterable[str], minimum: int = DISPLAY_PREFIX) -> int:
    """The fewest hex digits (at least ``minimum``) that tell every run of ``runs`` apart."""
    ids = sorted(run[len(RUN_PREFIX):] for run in runs)
    length = minimum
    for a, b in zip(ids, ids[1:]):
        if a[:length] == b[:length]:  # else they differ within the digits shown already
            length = max(length, len(os.path.commonprefix([a, b])) + 1)
    return min(length, 64)


def parse_run_id(text: str) -> str:
    """The hex digits of a run id as a user gives it: the one rule for every command that takes a run id.

    A run id is ``run-`` (optional) followed by :data:`MIN_PREFIX` to 64
    lowercase hex digits: a prefix of the run's name (``run-<64 hex>``), so
    a full name is a run id too. Nothing shorter is taken, not even to name
    the only run of a store.

    Raises:
        StoreUsageError: ``text`` is empty, too short, too long or not lowercase hex.
    """
    if not isinstance(text, str):
        raise StoreUsageError(f"a run id is text, got {type(text).__name__}")
    digits = text[len(RUN_PREFIX):] if text.startswith(RUN_PREFIX) else text
    if not digits:
        raise StoreUsageError(f"a run id needs at least {MIN_PREFIX} hex digits, got {text!r:.80}")
    if not _HEX_RE.fullmatch(digits) or len(digits) > 64:
        raise StoreUsageError(f"a run id is {MIN_PREFIX} to 64 lowercase hex digits (a prefix of the run's 64), "
                              f"got {text!r:.80}")
    if len(digits) < MIN_PREFIX:
        raise StoreUsageError(f"a run id needs at least {MIN_PREFIX} hex digits, got {text!r}")
    return digits


def resolve_run(store: Any, short_id: str) -> str:
    """The run whose hex digits start with ``short_id`` (checked by :func:`parse_run_id`).

    Raises:
        StoreUsageError: ``short_id`` is not a run id (see :func:`parse_run_id`), matches no run, or matches
            several (the message lists them).
    """
    from ..evaluation.store_names import store_name

    digits = parse_run_id(short_id)
    names = run_names(store)
    matches = [name for name in names if name.startswith(RUN_PREFIX + digits)]
    if not matches:
        raise StoreUsageError(f"no run in store {store_name(store)} has an id starting with {digits}")
    if len(matches) > 1:
        width = max(short_id_length(matches, len(digits) + 1), len(digits) + 1)
        shown = ", ".join(m[len(RUN_PREFIX):len(RUN_PREFIX) + width] for m in matches[:6])
        more = f" and {len(matches) - 6} more" if len(matches) > 6 else ""
        raise StoreUsageError(f"run id {digits} is ambiguous: it starts {len(matches)} runs ({shown}{more}); "
                              "give more digits")
    return matches[0]


# -- showing ------------------------------------------------------------------------------


def show_run(store: Any, short_id: str) -> RunDetails:
    """Everything about the run ``short_id`` names: run-info (or its damage), result ref, journal."""
    from emberbench.store import RefError, StoreError

    run = resolve_run(store, short_id)
    row = read_row(store, run)
    ref = f"{RESULT_REF_PREFIX}{run}"
    try:
        key: str | None = store.refs.get(ref)
    except RefError as exc:
        key = None if exc.reason == "no such ref" else f"unreadable: {exc}"
    journal = None
    if run in store.journal_names():
        try:
            state = store.read_journal(run)
            journal = (f"{run}: {len(state.entries)} entries (a header and {max(0, len(state.entries) - 1)} "
                       f"episodes), {'finished' if state.finished else 'not finished'}")
        except StoreError as exc:
            journal = f"{run}: unreadable: {' '.join(str(exc).split())}"
    return RunDetails(row, ref, key, journal)


def result_key(store: Any, run: str) -> str:
    """The key of the complete result artifact of ``run``: its ``results/`` ref, else its run-info's result.

    Raises:
        StoreUsageError: the run has no complete result in the store.
    """
    from emberbench.store import RefError

    try:
        return store.refs.get(f"{RESULT_REF_PREFIX}{run}")
    except RefError as exc:
        if exc.reason != "no such ref":
            raise
    row = read_row(store, run)
    if row.info is not None and row.info.result is not None:
        return row.info.result
    about = "" if row.info is None else f" (it is {row.info.state}, {row.info.episodes_done}/" \
                                        f"{row.info.episodes_scheduled} episodes)"
    raise StoreUsageError(f"run {run[len(RUN_PREFIX):len(RUN_PREFIX) + DISPLAY_PREFIX]} has no complete result "
                          f"in the store{about}")


def export_run(store: Any, short_id: str, out: str | os.PathLike[str], *, force: bool = False) -> tuple[str, str]:
    """Write the result artifact of the run ``short_id`` names to ``out``, byte for byte.

    The bytes stream from the store (each piece proven against the object's
    checksum and its SHA-256 key before it is written) into an atomic write
    through the output policy; memory stays at about one piece.

    Returns:
        ``(run, key)``: the run's name and the artifact's key (its SHA-256).

    Raises:
        OutputPathError: ``out`` exists and ``force`` is not set, or is not a regular file.
        StoreUsageError: no such run, or it has no complete result.
        IntegrityError / ObjectNotFoundError: the stored artifact fails a check (``out`` is left untouched).
    """
    from ..io.atomic import atomic_write_bytes, check_output_path

    run = resolve_run(store, short_id)
    key = result_key(store, run)
    target = check_output_path(out)
    if os.path.lexists(target) and not force:
        raise OutputPathError(f"{target} exists; use --force to replace it")
    atomic_write_bytes(target, store.iter_verified(key, verify_data=True))
    return run, key


# -- layout -------------------------------------------------------------------------------


def _width(text: str) -> int:
    """Terminal columns of ``text`` (wide East Asian characters take two, combining marks none)."""
    if text.isascii():
        return len(text)  # printable ASCII: one column each (a listing is mostly this)
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
               for c in text)


def fit(text: str, columns: int, *, keep_end: bool = False) -> str:
    """``text`` cut to at most ``columns`` terminal columns (``~`` marks a cut), padded with spaces.

    ``keep_end`` keeps the end of a long text instead of its start (suite ids
    differ in their ends: ``...-v1-public``).
    """
    if text.isascii() and text.isprintable():
        if len(text) <= columns:
            return text.ljust(columns)
        return "~" + text[len(text) - columns + 1:] if keep_end else text[:columns - 1] + "~"
    if _width(text) > columns:
        kept, used = [], 0
        for c in (reversed(text) if keep_end else text):
            w = _width(c)
            if used + w > columns - 1:
                break
            kept.append(c)
            used += w
        text = "~" + "".join(reversed(kept)) if keep_end else "".join(kept) + "~"
    return text + " " * (columns - _width(text))


def _count(n: int) -> str:
    return str(n) if n < 10_000 else f"{n // 1000}k" if n < 10_000_000 else f"{n // 1_000_000}M"


COLUMNS = (("ID", 0), ("MODEL", 14), ("POLICY", 10), ("SUITE", 12), ("DONE", 9), ("STATE", 11), ("STARTED", 10))
"""Header and width of each column (the id's width is the short id length)."""


def header_line(id_length: int) -> str:
    """The header of a listing whose short ids have ``id_length`` digits."""
    return _join([name for name, _ in COLUMNS], id_length)


def format_row(row: CatalogRow, id_length: int, *, now: float | None = None) -> str:
    """One run in at most :data:`LINE_WIDTH` columns when ``id_length`` is 8; a damaged run says so.

    With ``now`` (the store's clock), a running run whose heartbeat is stale
    shows as ``dead`` (:func:`emberbench.evaluation.liveness.effective_state`).
    """
    short = row.hex_id[:id_length]
    if row.info is None:
        return fit(f"{short} damaged: {row.damage}", max(LINE_WIDTH, id_length + 10)).rstrip()
    i = row.info
    done = f"{_count(i.episodes_done)}/{_count(i.episodes_scheduled)}"
    state = i.state if now is None else effective_state(i, now)
    return _join([short, i.model_id, i.policy, short_suite_id(i.suite_id), done, state, i.started[:10]], id_length)


SHIPPED_SUITE_PREFIX = "emberbench-"
"""The prefix every shipped suite id shares; the listing leaves it out (``v1-public``)."""


def short_suite_id(suite_id: str) -> str:
    """A suite id as the listing shows it: without the shipped suites' common prefix (``v1-public``)."""
    return suite_id.removeprefix(SHIPPED_SUITE_PREFIX) or suite_id


def _join(cells: list[str], id_length: int) -> str:
    widths = [id_length] + [width for _, width in COLUMNS[1:]]
    text = "".join(cells)
    if text.isascii() and text.isprintable() and all(map(_fits, cells, widths)):
        # The common case, and the same line as below: every cell padded to its column, none cut.
        return " ".join(map(str.ljust, cells, widths)).rstrip()
    return " ".join(fit(cell, width, keep_end=name == "SUITE")
                    for cell, width, (name, _) in zip(cells, widths, COLUMNS)).rstrip()


def _fits(cell: str, width: int) -> bool:
    return len(cell) <= width


CATALOG_COLUMNS = columns(
    "run", "id", "model_id", "policy", "state", ("episodes_done", "int"), ("episodes_scheduled", "int"), "suite_id",
    "suite_version", "suite_hash", "manifest_hash", "started", "ended", "result", "verified", "verified_at", "host",
    "user", "emberbench_version", "damage",
)
"""The columns of the run catalog as a table (``runs export --table``; ``to_pandas()``): one run per row,
its run-info's fields flattened (``verified`` is the last verification's verdict), or only ``run``, ``id``
and ``damage`` for a run whose run-info cannot be read."""


def catalog_row(row: CatalogRow) -> tuple[Any, ...]:
    """One run as a row of :data:`CATALOG_COLUMNS`."""
    i = row.info
    if i is None:
        return (row.run, row.hex_id, *([None] * (len(CATALOG_COLUMNS) - 3)), row.damage)
    check = i.verification
    return (row.run, row.hex_id, i.model_id, i.policy, i.state, i.episodes_done, i.episodes_scheduled, i.suite_id,
            i.suite_version, i.suite_hash, i.manifest_hash, i.started, i.ended, i.result,
            None if check is None else check.verdict, None if check is None else check.at, i.host, i.user,
            i.emberbench_version, None)


class CatalogTable(TableView):
    """The runs of a store as a table (:data:`CATALOG_COLUMNS`), read when it is made."""

    __slots__ = ("table",)

    def __init__(self, rows: Iterable[CatalogRow], store: str) -> None:
        self.table = Table(CATALOG_COLUMNS, tuple(catalog_row(r) for r in rows), title=f"runs of store {store}",
                           note="one row per run; a run whose run-info cannot be read has only its damage")

    def to_table(self) -> Table:
        return self.table

    def shown(self) -> Table:
        """What ``runs ls`` shows (short ids, suites without the shipped prefix, done/scheduled, dates)."""
        picked = self.table.select(*SHOWN_CATALOG)
        rows = tuple((r[0][:DISPLAY_PREFIX], r[1], r[2], None if r[3] is None else short_suite_id(r[3]),
                      None if r[4] is None else f"{r[4]}/{r[5]}", r[6], None if r[7] is None else r[7][:10])
                     for r in picked.rows)
        return Table(columns(*(name.lower() for name, _ in COLUMNS)), rows, title=picked.title, note=picked.note)

    def _repr_html_(self) -> str:
        return self.shown()._repr_html_()

    def __rich__(self) -> Any:
        return self.shown().__rich__()


SHOWN_CATALOG = ("id", "model_id", "policy", "suite_id", "episodes_done", "episodes_scheduled", "state", "started")
"""The columns the catalog shows in a notebook or terminal (``to_pandas()`` has them all, and whole)."""


def row_to_dict(row: CatalogRow) -> dict[str, Any]:
    """A row as one element of the ``runs ls --json`` document (full ids, the whole run-info)."""
    return {"run": row.run, "id": row.hex_id, "info": None if row.info is None else row.info.to_dict(),
            "damage": row.damage}


def catalog_json_rows(store: Any, rows: Iterable[CatalogRow]) -> Iterator[str]:
    """The ``runs ls --json`` document in pieces, one row at a time (format :data:`RUN_CATALOG_VERSION`)."""
    yield ('{"run_catalog_version":' + json.dumps(RUN_CATALOG_VERSION) + ',"store":'
           + json.dumps(store.locator, ensure_ascii=False) + ',"runs":[')
    first = True
    for row in rows:
        yield ("" if first else ",") + "\n" + json.dumps(row_to_dict(row), ensure_ascii=False, sort_keys=True,
                                                         separators=(",", ":"))
        first = False
    yield "\n]}\n"


def describe(details: RunDetails, *, now: float | None = None) -> list[str]:
    """``runs show``: one ``name: value`` line per fact (with ``now``, the store's clock: a liveness line)."""
    from ..evaluation.liveness import describe_liveness

    row, info = details.row, details.row.info
    lines = [f"run: {row.run}", f"id: {row.hex_id}"]
    if info is None:
        lines.append(f"damaged: {row.damage}")
    else:
        for field in ("model_id", "policy", "state", "episodes_done", "episodes_scheduled", "manifest_hash",
                      "suite_id", "suite_version", "suite_hash", "started", "ended", "heartbeat", "host", "user",
                      "emberbench_version", "python_version", "ray_version", "result"):
            value = getattr(info, field)
            lines.append(f"{field}: {'-' if value is None else value}")
        lines.append("nodes: -" if info.nodes is None else
                     "nodes: " + ", ".join(f"{name} {count}" for name, count in info.nodes))
        lines.append(f"tags: {', '.join(info.tags) or '-'}")
        if info.model_usage is not None:
            lines.append(f"model usage: {info.model_usage.describe()}")
        if now is not None:
            lines.append(f"liveness: {describe_liveness(info, now)}")
        check = info.verification
        lines.append("verification: never" if check is None else
                     f"verification: {check.verdict} at {check.at} by {check.by}"
                     + (f": {check.detail}" if check.detail else ""))
    lines.append(f"result ref: {details.result_ref} -> {details.result_key or '(none)'}")
    lines.append(f"journal: {details.journal or '(none)'}")
    return lines


__all__ = [
    "DISPLAY_PREFIX",
    "MIN_PREFIX",
    "SORT_KEYS",
    "CatalogRow",
    "Query",
    "RunDetails",
    "catalog_json_rows",
    "describe",
    "export_run",
    "fit",
    "format_row",
    "header_line",
    "iter_catalog",
    "parse_run_id",
    "read_row",
    "resolve_run",
    "result_key",
    "select",
    "short_id_length",
    "show_run",
]
