"""``emberbench runs ls|show|verify|export|attest``: the run catalog of a store (see :mod:`emberbench.runs.catalog`).

A run is named by a short id: a unique prefix (at least 4 hex digits) of the
64 hex digits of its name, as ``runs ls`` prints them (the rule is
:func:`emberbench.runs.catalog.parse_run_id`, shared with ``store rm-run``).
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from ._common import fail, user_errors
from .args import parse_output_file, parse_output_file_or_none
from .cluster_cmd import AddressOption, ParallelWorkersOption
from .keys_cmd import KeyringOption, SigningKeyOption, keyring_from, signing_key_from
from .store_cmd import RunIdArgument, StoreOption, _open
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


class Executor(str, enum.Enum):
    """Where ``runs verify`` replays records."""

    local = "local"
    ray = "ray"


def ls(
    store_dir: StoreOption = None,
    model: Annotated[Optional[str], typer.Option("--model", help="Only runs of this model id (exact).")] = None,  # noqa: UP007
    manifest: Annotated[Optional[str], typer.Option("--manifest", help="Only runs whose manifest hash starts with this hex.")] = None,  # noqa: UP007
    state: Annotated[Optional[State], typer.Option("--state", help="Only runs in this state.")] = None,  # noqa: UP007
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document with full ids and every run-info field.")] = False,
) -> None:
    """List the runs of a store, one line each: id, model, policy, suite, done/scheduled, state, start date.

    A run whose run-info cannot be read is listed as ``damaged`` with the
    reason, and the listing goes on; the command then says how many in one
    error line and exits 1. A running run whose heartbeat is stale is shown
    (and filtered) as ``dead``.
    """
    from ..evaluation.liveness import effective_state
    from ..evaluation.store_names import run_names
    from ..runs.catalog import catalog_json_rows, format_row, header_line, iter_catalog, short_id_length

    st = _open(store_dir)
    names = run_names(st)
    now = st.now()
    wanted = None if state is None else state.value
    live = wanted in ("running", "dead")  # both are running by their run-info: the heartbeat tells them apart
    rows = iter_catalog(st, model=model, manifest=manifest, state="running" if live else wanted, names=names)
    if live:
        rows = (row for row in rows if row.info is None or effective_state(row.info, now) == wanted)
    damaged = 0

    def counted(source):  # noqa: ANN001, ANN202 - a generator over rows
        nonlocal damaged
        for row in source:
            damaged += row.info is None
            yield row

    if as_json:
        for piece in catalog_json_rows(st, counted(rows)):
            typer.echo(piece, nl=False)
    else:
        width = short_id_length(names)
        typer.echo(header_line(width))
        for row in counted(rows):
            typer.echo(format_row(row, width, now=now))
    if damaged:
        raise fail(f"{damaged} run(s) listed as damaged: their run-info cannot be read (see above)")


def show(run_id: RunIdArgument, store_dir: StoreOption = None) -> None:
    """Print everything the store holds about one run: provenance, result ref, journal, last verification."""
    from ..runs.catalog import describe, show_run
    from ..provenance.attest import describe_stored_attestation

    st = _open(store_dir)
    details = show_run(st, run_id)
    for line in describe(details, now=st.now()):
        typer.echo(line)
    typer.echo(f"attestation: {describe_stored_attestation(st, details.row.run)}")


def verify(
    run_id: RunIdArgument,
    store_dir: StoreOption = None,
    executor: Annotated[Executor, typer.Option("--executor", help="local (in this process) or ray (parallel replay on Ray workers).")] = Executor.local,
    workers: ParallelWorkersOption = None,
    address: AddressOption = None,
    suite: SuiteOption = None,
    keyring: KeyringOption = None,
) -> None:
    """Replay-authenticate a run from the store, check its attestation, and record the verdict.

    Exit 0 ok, 3 partial, 1 failed (a forged or damaged attestation fails).
    The second line says who signed the run (checked against the keyring),
    or that it is unsigned.
    """
    from ..runs.catalog import resolve_run
    from ..runs.verify import verify_run
    from ..sim.suite import load_suite
    from .cluster_cmd import replay_on_ray, resolve_address

    trusted = keyring_from(keyring)
    st, s = _open(store_dir), load_suite(suite)
    run_id = resolve_run(st, run_id)  # an unknown or ambiguous id is refused before Ray starts
    if executor is Executor.ray or replay_on_ray(workers, address):
        from emberbench.cluster import verify_run_on_ray

        done = verify_run_on_ray(st, run_id, s, workers=workers, address=resolve_address(address), keyring=trusted)
    else:
        done = verify_run(st, run_id, s, keyring=trusted)
    typer.echo(f"{done.verdict}: run {done.run}: {done.detail} (recorded)")
    typer.echo(f"signature: {done.signature}")
    if done.verdict == "partial":
        raise typer.Exit(PARTIAL_EXIT)
    if done.verdict != "ok":
        raise fail(f"run {done.run} failed verification: {done.detail}")


def export(
    run_id: RunIdArgument,
    out: Annotated[Path, typer.Option("--out", parser=parse_output_file, metavar="FILE", help="Result artifact file to write.")],
    store_dir: StoreOption = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing file.")] = False,
    attestation: Annotated[Optional[Path], typer.Option("--attestation", parser=parse_output_file_or_none, metavar="FILE", help="Also write the run's attestation (its DSSE envelope, as stored) here.")] = None,  # noqa: UP007
) -> None:
    """Write a run's result artifact, byte for byte as stored (each piece proven before it is written)."""
    from ..runs.catalog import export_run
    from ..provenance.attest import export_attestation
    from .args import refuse_existing

    refuse_existing(out, attestation, force=force)
    st = _open(store_dir)
    run, key = export_run(st, run_id, out, force=force)
    typer.echo(f"{out}: result of run {run} (sha256 {key})")
    if attestation is not None:
        envelope = export_attestation(st, run, attestation)
        typer.echo(f"{attestation}: attestation of run {run} (object {envelope})")


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
    runs_app = typer.Typer(name="runs", help="The run catalog of a store: list, show, verify, export, attest runs.",
                           no_args_is_help=True)
    for func in (ls, show, verify, export, attest):
        runs_app.command(func.__name__)(user_errors(func))
    app.add_typer(runs_app, name="runs")
