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
from ..io.versions import RUN_CATALOG_VERSION

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
        common = len(os.path.commonprefix([a, b]))
        length = max(length, common + 1)
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
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
               for c in text)


def fit(text: str, columns: int, *, keep_end: bool = False) -> str:
    """``text`` cut to at most ``columns`` terminal columns (``~`` marks a cut), padded with spaces.

    ``keep_end`` keeps the end of a long text instead of its start (suite ids
    differ in their ends: ``...-v1-public``).
    """
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


def format_row(row: CatalogRow, id_length: int) -> str:
    """One run in at most :data:`LINE_WIDTH` columns when ``id_length`` is 8; a damaged run says so."""
    short = row.hex_id[:id_length]
    if row.info is None:
        return fit(f"{short} damaged: {row.damage}", max(LINE_WIDTH, id_length + 10)).rstrip()
    i = row.info
    done = f"{_count(i.episodes_done)}/{_count(i.episodes_scheduled)}"
    return _join([short, i.model_id, i.policy, i.suite_id, done, i.state, i.started[:10]], id_length)


def _join(cells: list[str], id_length: int) -> str:
    widths = [id_length] + [width for _, width in COLUMNS[1:]]
    return " ".join(fit(cell, width, keep_end=name == "SUITE")
                    for cell, width, (name, _) in zip(cells, widths, COLUMNS)).rstrip()


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


def describe(details: RunDetails) -> list[str]:
    """``runs show``: one ``name: value`` line per fact."""
    row, info = details.row, details.row.info
    lines = [f"run: {row.run}", f"id: {row.hex_id}"]
    if info is None:
        lines.append(f"damaged: {row.damage}")
    else:
        for field in ("model_id", "policy", "state", "episodes_done", "episodes_scheduled", "manifest_hash",
                      "suite_id", "suite_version", "suite_hash", "started", "ended", "host", "user",
                      "emberbench_version", "python_version", "ray_version", "result"):
            value = getattr(info, field)
            lines.append(f"{field}: {'-' if value is None else value}")
        if info.model_usage is not None:
            lines.append(f"model usage: {info.model_usage.describe()}")
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
    "CatalogRow",
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
    "short_id_length",
    "show_run",
]
