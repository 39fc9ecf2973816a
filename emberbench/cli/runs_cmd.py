"""``emberbench runs ls|show|verify|export|attest``: the run catalog of a store (see :mod:`emberbench.runs.catalog`).

A run is named by a short id: a unique prefix (at least 4 hex digits) of the
64 hex digits of its name, as ``runs ls`` prints them (the rule is
:func:`emberbench.runs.catalog.parse_run_id`, shared with ``store rm-run``).
"""

from __future__ import annotations

import contextlib
import enum
import itertools
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Optional

import typer

from ._common import fail, user_errors
from .args import parse_output_file, parse_output_file_or_none
from .cluster_cmd import AddressOption, ParallelWorkersOption
from .export_cmd import FormatOption
from .keys_cmd import KeyringOption, SigningKeyOption, keyring_from, signing_key_from
from .store_cmd import ReadOnlyOption, RunIdArgument, StoreOption, _open, may_write, refresh_catalog
from .suite_cmd import SuiteOption

PARTIAL_EXIT = 3
"""Exit status of ``runs verify`` when the run is authenticated but incomplete (as ``verify``)."""


class State(str, enum.Enum):
    """The states a run may be in (``dead``: running by its run-info, but its heartbeat is stale)."""

    running = "running"
    complete = "complete"
    failed = "failed"
    interrupted = "interrupted"
    dead = "dead"


class SortKey(str, enum.Enum):
    """What ``runs ls --sort`` orders by (emberbench.runs.catalog.SORT_KEYS)."""

    id = "id"
    started = "started"
    ended = "ended"
    model = "model"
    policy = "policy"
    suite = "suite"
    state = "state"
    done = "done"
    user = "user"


class Executor(str, enum.Enum):
    """Where ``runs verify`` replays records."""

    local = "local"
    ray = "ray"


def ls(
    store_dir: StoreOption = None,
    model: Annotated[Optional[str], typer.Option("--model", help="Only runs of this model id (exact).")] = None,  # noqa: UP007
    manifest: Annotated[Optional[str], typer.Option("--manifest", help="Only runs whose manifest hash starts with this hex.")] = None,  # noqa: UP007
    state: Annotated[Optional[State], typer.Option("--state", help="Only runs in this state.")] = None,  # noqa: UP007
    suite: Annotated[Optional[str], typer.Option("--suite", help="Only runs of this suite id (exact).")] = None,  # noqa: UP007
    policy: Annotated[Optional[str], typer.Option("--policy", help="Only runs of this policy spec (exact).")] = None,  # noqa: UP007
    user: Annotated[Optional[str], typer.Option("--user", help="Only runs started by this user (exact).")] = None,  # noqa: UP007
    tag: Annotated[Optional[list[str]], typer.Option("--tag", metavar="TAG", help="Only runs with this tag (repeatable: every tag given).")] = None,  # noqa: UP007
    since: Annotated[Optional[str], typer.Option("--since", metavar="DATE", help="Only runs started on or after DATE (2026-01-31 or 2026-01-31T12:00:00Z).")] = None,  # noqa: UP007
    until: Annotated[Optional[str], typer.Option("--until", metavar="DATE", help="Only runs started on or before DATE (a date includes the whole day).")] = None,  # noqa: UP007
    sort: Annotated[SortKey, typer.Option("--sort", help="Order by this field (ties by id).")] = SortKey.id,
    reverse: Annotated[bool, typer.Option("--reverse", help="Reverse the order.")] = False,
    limit: Annotated[Optional[int], typer.Option("--limit", min=1, help="At most N runs (damaged runs are listed anyway).")] = None,  # noqa: UP007
    scan: Annotated[bool, typer.Option("--scan", help="Read every run instead of the catalog index.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document with full ids and every run-info field.")] = False,
    read_only: ReadOnlyOption = False,
) -> None:
    """List the runs of a store, one line each: id, model, policy, suite, done/scheduled, state, start date.

    The listing comes from the catalog index (a few reads), checked against
    the ref log; without a usable index it reads every run and says so. A
    run whose run-info cannot be read is listed as ``damaged`` with the
    reason; the command then says how many in one error line and exits 1.
    A running run whose heartbeat is stale is shown (and filtered) as
    ``dead``.
    """
    from ..runs.catalog import Query, catalog_json_rows, format_row, header_line, select, short_id_length

    st = _open(store_dir, read_only)
    now = st.now()  # the store's clock: a running run's heartbeat is judged by it
    query = Query(model=model, manifest=manifest, state=None if state is None else state.value, suite=suite,
                  policy=policy, user=user, tags=tuple(tag or ()), since=since, until=until, sort=sort.value,
                  reverse=reverse, limit=limit, now=now)
    rows = _catalog_rows(st, scan)
    shown = select(rows, query)
    damaged = sum(row.info is None for row in shown)
    if as_json:
        _echo_pieces(catalog_json_rows(st, shown))
    else:
        width = short_id_length([row.run for row in rows])
        _echo_pieces(line + "\n" for line in itertools.chain(
            [header_line(width)], (format_row(row, width, now=now) for row in shown)))
    if damaged:
        raise fail(f"{damaged} run(s) listed as damaged: their run-info cannot be read (see above)")


def _echo_pieces(pieces: Iterable[str], block: int = 1024) -> None:
    """Print ``pieces`` as they come, ``block`` at a time (one write per line made 10,000 lines slow)."""
    pieces = iter(pieces)
    while chunk := "".join(itertools.islice(pieces, block)):
        typer.echo(chunk, nl=False)


def _catalog_rows(st, scan: bool) -> list:  # noqa: ANN001
    """Every run's row: from the catalog index when it can answer, else by reading every run (and saying why).

    When the store may be written, an index that was missing, unusable or
    far behind is saved again from what was read, so the next listing is fast.
    """
    from emberbench.store import RefConflictError, StoreError

    from ..runs.index import NO_INDEX, REFRESH_AFTER, build_index, query_index, save_index

    if not scan:
        answer = query_index(st)
        if answer.rows is not None:
            if answer.applied > REFRESH_AFTER and may_write(st):
                with contextlib.suppress(RefConflictError):
                    save_index(st, answer.key, answer.index)
            return answer.rows
    index = build_index(st)
    if not scan:
        first = answer.key is None and answer.reason == NO_INDEX
        if may_write(st):
            try:
                save_index(st, answer.key, index)
                saved = "; the index was rebuilt"
            except (StoreError, RefConflictError) as exc:
                saved, first = f"; the index could not be saved ({' '.join(str(exc).split())})", False
        else:
            saved, first = "; none was saved (read-only)", False
        if not first:  # a store's first listing builds its index without a word
            typer.echo(f"note: {answer.reason}: listed by reading every run{saved}", err=True)
    return [index.runs[name].row for name in sorted(index.runs)]


def reindex(store_dir: StoreOption = None) -> None:
    """Rebuild the catalog index from every run of the store (what `runs ls` reads)."""
    from ..runs.index import reindex as rebuild

    st = _open(store_dir)
    key, index = rebuild(st)
    damaged = sum(item.row.info is None for item in index.runs.values())
    typer.echo(f"catalog index {key}: {len(index.runs)} runs ({damaged} damaged), current to ref log entry "
               f"{index.position}")


def show(run_id: RunIdArgument, store_dir: StoreOption = None, read_only: ReadOnlyOption = False) -> None:
    """Print everything the store holds about one run, and what it takes to run it again."""
    from ..runs.catalog import describe, show_run
    from ..runs.reproduce import reproduction
    from ..provenance.attest import describe_stored_attestation

    st = _open(store_dir, read_only)
    details = show_run(st, run_id)
    for line in describe(details, now=st.now()):
        typer.echo(line)
    typer.echo(f"attestation: {describe_stored_attestation(st, details.row.run)}")
    for line in reproduction(st, details.row.run, details.row.info):
        typer.echo(line)


def verify(
    run_id: RunIdArgument,
    store_dir: StoreOption = None,
    executor: Annotated[Executor, typer.Option("--executor", help="local (in this process) or ray (parallel replay on Ray workers).")] = Executor.local,
    workers: ParallelWorkersOption = None,
    address: AddressOption = None,
    suite: SuiteOption = None,
    keyring: KeyringOption = None,
    read_only: ReadOnlyOption = False,
) -> None:
    """Replay-authenticate a run from the store, check its attestation, and record the verdict.

    Exit 0 ok, 3 partial, 1 failed (a forged or damaged attestation fails).
    The second line says who signed the run (checked against the keyring),
    or that it is unsigned.
    """
    from ..runs.catalog import read_row, resolve_run
    from ..runs.verify import verify_run
    from ._common import suite_named_by_manifest
    from .cluster_cmd import replay_on_ray, resolve_address

    trusted = keyring_from(keyring)
    st = _open(store_dir, read_only)
    run_id = resolve_run(st, run_id)  # an unknown or ambiguous id is refused before Ray starts
    info = read_row(st, run_id).info if suite is None else None  # the run's own suite, unless --suite says
    s = suite_named_by_manifest(suite, None if info is None else info.suite_id, where=f"run {run_id}",
                                suite_hash=None if info is None else info.suite_hash)
    record = may_write(st)
    if executor is Executor.ray or replay_on_ray(workers, address):
        from emberbench.cluster import verify_run_on_ray

        done = verify_run_on_ray(st, run_id, s, workers=workers, address=resolve_address(address), keyring=trusted,
                                 record=record)
    else:
        done = verify_run(st, run_id, s, keyring=trusted, record=record)
    typer.echo(f"{done.verdict}: run {done.run}: {done.detail} "
               f"({'recorded' if record else 'not recorded: the store is read-only'})")
    if record:
        refresh_catalog(st)
    typer.echo(f"signature: {done.signature}")
    if done.verdict == "partial":
        raise typer.Exit(PARTIAL_EXIT)
    if done.verdict != "ok":
        raise fail(f"run {done.run} failed verification: {done.detail}")


def export(
    run_id: Annotated[Optional[str], typer.Argument(metavar="ID", parser=_run_id_or_none, help="The run whose result artifact to write (not with --table): a unique prefix of its id as `runs ls` shows it.")] = None,  # noqa: UP007
    out: Annotated[Optional[Path], typer.Option("--out", parser=parse_output_file_or_none, metavar="FILE", help="File to write: the run's result artifact, or with --table the catalog.")] = None,  # noqa: UP007
    store_dir: StoreOption = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing file.")] = False,
    attestation: Annotated[Optional[Path], typer.Option("--attestation", parser=parse_output_file_or_none, metavar="FILE", help="Also write the run's attestation (its DSSE envelope, as stored) here.")] = None,  # noqa: UP007
    table: Annotated[bool, typer.Option("--table", help="Write the run catalog (every run, as `runs ls --json` has it, one row per run) as a table instead.")] = False,
    format: FormatOption = None,
    model: Annotated[Optional[str], typer.Option("--model", help="With --table: only runs of this model id.")] = None,  # noqa: UP007
    state: Annotated[Optional[State], typer.Option("--state", help="With --table: only runs in this state.")] = None,  # noqa: UP007
    read_only: ReadOnlyOption = False,
) -> None:
    """Write a run's result artifact, byte for byte as stored (each piece proven before it is written);
    with --table, the store's run catalog as a CSV, JSON-lines or Parquet table."""
    from ..runs.catalog import export_run
    from ..provenance.attest import export_attestation
    from .args import refuse_existing

    if out is None:
        raise typer.BadParameter("give the file to write", param_hint="--out")
    if table:
        if run_id is not None or attestation is not None:
            raise typer.BadParameter("--table writes the catalog of every run: give no ID and no --attestation",
                                     param_hint="--table")
        from ..api.exports import export_run_catalog
        from .export_cmd import table_format

        chosen = table_format(format, out)
        done = export_run_catalog(_open(store_dir, read_only), out, format=chosen, force=force, model=model,
                                  state=None if state is None else state.value)
        typer.echo(f"{done.path}: {done.rows} runs ({done.format})")
        return
    if run_id is None:
        raise typer.BadParameter("give the run's ID, or --table for the catalog of every run", param_hint="ID")
    if format is not None or model is not None or state is not None:
        raise typer.BadParameter("--format, --model and --state go with --table", param_hint="--table")
    refuse_existing(out, attestation, force=force)
    st = _open(store_dir, read_only)
    run, key = export_run(st, run_id, out, force=force)
    typer.echo(f"{out}: result of run {run} (sha256 {key})")
    if attestation is not None:
        envelope = export_attestation(st, run, attestation)
        typer.echo(f"{attestation}: attestation of run {run} (object {envelope})")


def _run_id_or_none(value: str | None) -> str | None:
    from .store_cmd import parse_run_id_argument

    return None if value is None else parse_run_id_argument(value)


def attest(
    run_id: RunIdArgument,
    store_dir: StoreOption = None,
    signing_key: SigningKeyOption = None,
) -> None:
    """Sign a complete run's provenance after the fact and store the attestation (attestations/<run>).

    The policy code digest is taken from the code as found now; the result
    object is checked against its key first (nothing is replayed: `runs
    verify` does that).
    """
    from ..runs.catalog import resolve_run
    from ..provenance import attest_run

    signer = signing_key_from(signing_key)
    if signer is None:
        raise typer.BadParameter("give --signing-key FILE or set $EMBERBENCH_SIGNING_KEY", param_hint="--signing-key")
    st = _open(store_dir)
    made = attest_run(st, resolve_run(st, run_id), signer)
    typer.echo(f"run {made.run}: attestation {made.key} signed by key {signer.keyid[:16]} "
               f"(policy code {made.statement.predicate.policy_code.digest[:16]}, "
               f"{made.statement.predicate.policy_code.rule})")


def register(app: typer.Typer) -> None:
    """Add the ``runs`` command group to ``app``."""
    runs_app = typer.Typer(name="runs", help="The run catalog of a store: list, show, verify, export, attest runs; rebuild the catalog index.",
                           no_args_is_help=True)
    for func in (ls, show, verify, export, attest, reindex):
        runs_app.command(func.__name__)(user_errors(func))
    app.add_typer(runs_app, name="runs")
