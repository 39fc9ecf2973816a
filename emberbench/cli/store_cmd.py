"""``emberbench store ls|cat|fsck|gc|audit|rm-run|copy``: inspect and maintain a content-addressed store.

Every command takes ``--store LOCATOR``: a folder, or ``s3://bucket/prefix``
(optionally ``?endpoint=URL`` for MinIO, Ceph, R2...). Without it,
:func:`default_store` decides: the ``EMBERBENCH_STORE`` environment variable
if set and non-empty, else ``./.emberbench/store`` relative to the working
directory. Only this CLI layer reads EMBERBENCH_STORE; the ``store`` package
never does (the S3 client reads the standard AWS variables itself). The
``store`` package is imported inside each command, so ``emberbench --help``
stays light.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Optional

import typer

from ._common import fail, user_errors
from .args import parse_grace_seconds
from .cluster_cmd import AddressOption, ParallelWorkersOption

STORE_ENV_VAR = "EMBERBENCH_STORE"
DEFAULT_STORE_DIR = Path(".emberbench") / "store"

StoreOption = Annotated[
    Optional[str],  # noqa: UP007 - typer needs Optional on Python 3.11
    typer.Option(
        "--store",
        help=(f"Store: a folder, or s3://bucket/prefix[?endpoint=URL] (default: ${STORE_ENV_VAR}, "
              f"else ./{DEFAULT_STORE_DIR}). S3 credentials come from the standard AWS variables and files."),
    ),
]


def parse_run_id_argument(value: str) -> str:
    """A run id argument, checked by the one rule of :func:`emberbench.runs.catalog.parse_run_id` (else exit 2)."""
    from ..runs.catalog import parse_run_id
    from ..errors import StoreUsageError

    try:
        parse_run_id(value)
    except StoreUsageError as exc:  # parse_run_id raises it only for a malformed id: a usage error
        raise typer.BadParameter(str(exc)) from None
    return value


RunIdArgument = Annotated[
    str,
    typer.Argument(metavar="ID", parser=parse_run_id_argument,
                   help="The run: a unique prefix (4 to 64 hex digits) of its id as `runs ls` shows it, or its "
                        "full name run-<64 hex digits>."),
]


def default_store(environ: Mapping[str, str] | None = None) -> str:
    """The store locator used when ``--store`` is not given.

    ``$EMBERBENCH_STORE`` if it is set and not empty, else
    ``./.emberbench/store`` (relative to the current directory).
    """
    env = os.environ if environ is None else environ
    value = env.get(STORE_ENV_VAR, "")
    return value if value else str(DEFAULT_STORE_DIR)


def resolve_store_dir(store: str | Path | None) -> str:
    """The locator ``store`` if given (a path or an ``s3://`` URL, kept as text), else :func:`default_store`."""
    if store is None:
        return default_store()
    text = os.fspath(store)
    if not text:
        raise typer.BadParameter("--store must not be empty")
    return text


def _open(store: str | None):  # noqa: ANN202 - the store type is imported lazily
    from emberbench.store import open_store

    return open_store(resolve_store_dir(store))


def ls(
    store_dir: StoreOption = None,
    objects: Annotated[bool, typer.Option("--objects", help="Also list every object key and raw size.")] = False,
) -> None:
    """List refs, journals (finished or not) and, with --objects, every object.

    A damaged ref, journal or object is listed as ``damaged`` and the listing
    goes on; the command then exits 1 naming how many were damaged.
    """
    from emberbench.store import StoreError

    st = _open(store_dir)
    keys = list(st)
    damaged = 0
    typer.echo(f"store {st.locator}: {len(keys)} objects")
    for name in st.refs.names():
        try:
            typer.echo(f"ref      {st.refs.get(name)}  {name}")
        except StoreError as exc:
            damaged += 1
            typer.echo(f"damaged  ref {name}: {exc}")
    for name in st.journal_names():
        try:
            state = st.read_journal(name)
        except StoreError as exc:
            damaged += 1
            typer.echo(f"damaged  journal {name}: {exc}")
            continue
        status = "finished" if state.finished else "unfinished"
        typer.echo(f"journal  {name}  {len(state.entries)} entries, {status}")
    if objects:
        for key in keys:
            try:
                typer.echo(f"object   {key}  {st.size(key)}")
            except StoreError as exc:
                damaged += 1
                typer.echo(f"damaged  object {key}: {exc}")
    if damaged:
        raise fail(f"{damaged} damaged entries listed above (run `emberbench store fsck`)")


def cat(
    name: Annotated[str, typer.Argument(help="An object key, or a ref name.")],
    store_dir: StoreOption = None,
    verify_data: Annotated[bool, typer.Option("--verify-data", help="Re-hash the content against its key.")] = False,
) -> None:
    """Write an object's raw bytes to stdout (checked before a byte is written)."""
    from emberbench.store import validate_key

    st = _open(store_dir)
    try:
        key = validate_key(name)
    except ValueError:
        key = st.refs.get(name)
    # Each piece is handed out only once proven good (see Store.iter_verified).
    for piece in st.iter_verified(key, verify_data=verify_data):
        sys.stdout.buffer.write(piece)
    sys.stdout.buffer.flush()


def fsck(
    store_dir: StoreOption = None,
    verify_data: Annotated[bool, typer.Option("--verify-data", help="Re-hash every object against its key.")] = False,
    connectivity: Annotated[
        bool, typer.Option("--connectivity", help="Check refs and unfinished journals resolve; list dangling objects.")
    ] = False,
    no_quarantine: Annotated[
        bool, typer.Option("--no-quarantine", help="Report corrupt objects but leave them in place.")
    ] = False,
    repair: Annotated[
        bool, typer.Option("--repair", help="Then regenerate lost records and results of every run by playing "
                                            "their episodes again (needs each run's policy to be loadable).")
    ] = False,
    suite: Annotated[Optional[Path], typer.Option("--suite", help="With --repair: the runs' suite folder; default: the public suite.")] = None,  # noqa: UP007
) -> None:
    """Check every object's frame and checksum, and every run's refs and journal (more by level).

    Exit 1 on damage (left unrepaired).
    """
    from emberbench.store import fsck as run_fsck

    from ..runs.damage import store_structure_damage

    st = _open(store_dir)
    report = run_fsck(st, verify_data=verify_data, connectivity=connectivity, quarantine=not no_quarantine)
    typer.echo(f"checked {report.objects_checked} objects ({', '.join(report.levels)})")
    for bad in report.corrupt:
        where = f" -> {bad.quarantined_to}" if bad.quarantined_to else " (left in place)"
        typer.echo(f"corrupt  {bad.key}: {bad.reason}{where}")
    for line in report.stray_files:
        typer.echo(f"stray    {line}")
    for what, reason in report.bad_roots:
        typer.echo(f"unreadable {what}: {reason}")
    for root, key in report.missing:
        typer.echo(f"missing  {key} referenced by {root}")
    for name, size in report.torn_journals:
        typer.echo(f"note: journal {name} has a torn tail of {size} bytes (dropped on next open)")
    for line in report.temp_files:
        typer.echo(f"note: temp file {line} (left by an interrupted write; gc removes old ones)")
    if connectivity:
        typer.echo(f"{len(report.dangling)} dangling objects (unreferenced; gc collects them after the grace period)")
    if report.quarantine_files:
        typer.echo(f"{report.quarantine_files} files in quarantine/")
    damages = store_structure_damage(st, present=_intact_keys(st, report))
    for damage in damages:
        typer.echo(f"damaged  run {damage.run}: {damage}")
    ok = report.ok and not damages
    if repair:
        ok = _repair(st, suite, verify_data=verify_data, connectivity=connectivity)
    if not ok:
        raise fail("fsck found problems (see above)")
    typer.echo("ok")


def _intact_keys(st, report) -> frozenset[str]:  # noqa: ANN001
    """The keys the store holds that fsck did not find corrupt (a run referencing any other lost it)."""
    corrupt = {bad.key for bad in report.corrupt}
    return frozenset(key for key in st if key not in corrupt)


def _repair(st, suite: Path | None, *, verify_data: bool, connectivity: bool) -> bool:  # noqa: ANN001
    """Repair every run, print what was and was not repaired, check again; True if the store is now sound."""
    from emberbench.store import fsck as run_fsck

    from ..runs.damage import store_structure_damage
    from ..runs.repair import repair_store
    from ..sim.suite import load_suite

    done = repair_store(st, load_suite(suite))
    for line in done.repaired:
        typer.echo(f"repaired {line}")
    for line in done.unrepaired:
        typer.echo(f"NOT repaired: {line}")
    again = run_fsck(st, verify_data=verify_data, connectivity=connectivity, quarantine=False)
    for root, key in again.missing:
        typer.echo(f"still missing  {key} referenced by {root}")
    for what, reason in again.bad_roots:
        typer.echo(f"still unreadable {what}: {reason}")
    damages = store_structure_damage(st, present=_intact_keys(st, again))
    for damage in damages:
        typer.echo(f"still damaged  run {damage.run}: {damage}")
    typer.echo(f"repair: {len(done.repaired)} repaired, {len(done.unrepaired)} run(s) not repaired")
    return again.ok and done.ok and not damages


def _keep_rule(value: str) -> str:
    """A ``--keep`` rule, checked when the command line is read (a malformed one is a usage error)."""
    from ..errors import StoreUsageError
    from ..runs.retention import parse_keep

    try:
        parse_keep([value])
    except StoreUsageError as exc:
        raise typer.BadParameter(str(exc)) from None
    return value


def gc(
    store_dir: StoreOption = None,
    grace: Annotated[
        Optional[float],  # noqa: UP007
        typer.Option("--grace", parser=parse_grace_seconds, metavar="SECONDS",
                     help="Keep unreferenced objects younger than SECONDS (default: one day)."),
    ] = None,
    apply: Annotated[bool, typer.Option("--apply", help="Delete for real (default: dry run).")] = False,
    keep: Annotated[
        Optional[list[str]],  # noqa: UP007
        typer.Option("--keep", metavar="RULE", parser=_keep_rule,
                     help="Remove the runs no rule keeps, then collect their objects: last=N (per model), "
                          "younger=D (e.g. 30d), tagged, tag=NAME. Repeat to combine; running runs are kept."),
    ] = None,
) -> None:
    """Delete unreferenced objects older than the grace period, beside running runs (dry run unless --apply).

    With --keep rules, first remove the runs no rule keeps (as `store rm-run`), so that their objects go too.
    """
    from emberbench.store import DEFAULT_GRACE_SECONDS
    from emberbench.store import gc as run_gc

    from ..runs.retention import dropped_roots, parse_keep, plan_retention

    from ..errors import StoreUsageError

    try:
        rules = parse_keep(list(keep or []))
    except StoreUsageError as exc:  # a rule given twice: a usage error like a malformed one
        raise typer.BadParameter(str(exc), param_hint="--keep") from None
    st = _open(store_dir)
    ignore: tuple[list[str], list[str]] = ([], [])
    if rules.any:
        decisions = plan_retention(st, rules)
        removed = _apply_retention(st, decisions) if apply else [d.run for d in decisions if not d.kept]
        for decision in decisions:
            if decision.kept:
                typer.echo(f"keep     {decision.run}  {decision.reason}")
            else:
                verb = "remove  " if not apply else "removed " if decision.run in removed else "kept    "
                typer.echo(f"{verb} {decision.run}  {decision.reason}")
        typer.echo(f"retention ({rules.describe()}): {len(decisions) - len(removed)} run(s) kept, {len(removed)} "
                   f"{'removed' if apply else 'to remove'}")
        if not apply:
            ignore = dropped_roots(st, decisions)
    report = run_gc(st, grace_seconds=DEFAULT_GRACE_SECONDS if grace is None else grace, apply=apply,
                    ignore_journals=ignore[0], ignore_refs=ignore[1])
    for line in gc_summary(report):
        typer.echo(line)


def _apply_retention(st, decisions) -> list[str]:  # noqa: ANN001
    """Remove the runs retention does not keep (a run in progress stays); the runs removed."""
    from ..errors import OutputLockedError
    from ..runs.repair import remove_run

    removed = []
    for decision in decisions:
        if decision.kept:
            continue
        try:
            remove_run(st, decision.run, apply=True)
            removed.append(decision.run)
        except OutputLockedError:
            typer.echo(f"note: run {decision.run} is in progress (its journal is locked): kept", err=True)
    return removed


def gc_summary(report) -> list[str]:  # noqa: ANN001 - a store.GcReport
    """What gc saw and did, every object accounted for (the parts of the first line add up to its total)."""
    verb = "would delete" if report.dry_run else "deleted"
    writers = len(report.live_writers)
    lines = [f"{report.objects} objects: {report.marked} referenced, {report.protected} kept for "
             f"{writers} live writer(s), {report.young} unreferenced within the {report.grace_seconds:g} s grace "
             f"period, {len(report.candidates)} unreferenced and older"]
    if report.dry_run:
        lines.append(f"{verb} {len(report.candidates)} ({report.freed_bytes} bytes)")
    else:
        lines.append(f"{verb} {len(report.deleted)} ({report.freed_bytes} bytes), {len(report.spared)} spared "
                     f"(referenced, refreshed or protected since the first look), {len(report.vanished)} already "
                     "gone")
    if report.stale_temps:
        lines.append(f"{verb} {len(report.stale_temps)} stale temp files")
    if report.released_leases:
        lines.append(f"released {len(report.released_leases)} lease(s) of writers that are gone")
    if report.dry_run:
        lines.append("dry run: nothing deleted (use --apply)")
    return lines


PARTIAL_EXIT = 3
"""``store audit`` exit status when no run is damaged but some are partial (and --allow-partial is not given)."""


def audit(
    store_dir: StoreOption = None,
    suite: Annotated[Optional[Path], typer.Option("--suite", help="Suite folder; default: the public suite.")] = None,
    workers: ParallelWorkersOption = None,
    address: AddressOption = None,
    allow_partial: Annotated[
        bool, typer.Option("--allow-partial", help="Exit 0 when runs are unfinished or incomplete but none is damaged.")
    ] = False,
) -> None:
    """Audit every run: re-verify its stored result (full replay), check its journal. Exit 1 if one is damaged."""
    from ..runs.audit import DAMAGED, OK, audit_store
    from ..sim.suite import load_suite
    from .cluster_cmd import replay_on_ray, resolve_address

    if not replay_on_ray(workers, address):
        verdicts = audit_store(_open(store_dir), load_suite(suite))
    else:
        from emberbench.cluster import audit_on_ray

        verdicts = audit_on_ray(_open(store_dir), load_suite(suite), workers=workers,
                                address=resolve_address(address))
    for v in verdicts:
        typer.echo(f"{v.state:<8} {v.run[:16]}  {v.message}")
    counts = {state: sum(v.state == state for v in verdicts) for state in (OK, "partial", DAMAGED)}
    typer.echo(f"{len(verdicts)} runs audited: {counts[OK]} ok, {counts['partial']} partial, "
               f"{counts[DAMAGED]} damaged")
    if counts[DAMAGED]:
        damaged = [v.run[:16] for v in verdicts if v.state == DAMAGED]
        shown = ", ".join(damaged[:3]) + (f" and {len(damaged) - 3} more" if len(damaged) > 3 else "")
        raise fail(f"store audit: {counts[DAMAGED]} of {len(verdicts)} runs damaged: {shown} (see above)")
    if counts["partial"] and not allow_partial:
        raise typer.Exit(PARTIAL_EXIT)


def rm_run(
    run: RunIdArgument,
    store_dir: StoreOption = None,
    apply: Annotated[bool, typer.Option("--apply", help="Delete for real (default: dry run).")] = False,
) -> None:
    """Delete one run: its journal and its results/ and runs/ refs (dry run unless --apply); gc frees its objects."""
    from ..runs.catalog import resolve_run
    from ..runs.repair import remove_run

    st = _open(store_dir)
    removal = remove_run(st, resolve_run(st, run), apply=apply)
    what = (["journal"] if removal.journal else []) + [f"ref {ref}" for ref in removal.refs]
    info = removal.info
    about = "" if info is None else (f" (model {info.model_id!r}, policy {info.policy!r}, "
                                     f"{info.episodes_done}/{info.episodes_scheduled} episodes, {info.state})")
    verb = "deleted" if removal.applied else "would delete"
    typer.echo(f"run {removal.run}{about}: {verb} {', '.join(what) or 'nothing'}")
    if removal.applied:
        typer.echo("its objects are now unreferenced: `emberbench store gc` collects them after the grace period")
    else:
        typer.echo("dry run: nothing deleted (use --apply)")


def copy(
    source: Annotated[str, typer.Argument(metavar="SRC", help="The store to copy from: a folder or s3://bucket/prefix.")],
    target: Annotated[str, typer.Argument(metavar="DST", help="The store to copy into (made if missing or empty; "
                                                              "a non-empty folder or prefix must be a store).")],
) -> None:
    """Copy the runs finished when the copy starts (whole, each checked first) and the other refs to DST.

    Runs still writing, or stopped before their end, are skipped and named;
    so is a damaged run (fsck's checks), or one DST holds otherwise. Exit 1
    if anything but unfinished runs was skipped.
    """
    from emberbench.store import open_store

    from ..runs.copy import UNFINISHED, copy_runs

    src = open_store(resolve_store_dir(source))
    dst = open_store(resolve_store_dir(target), create=True)
    if dst.created:
        typer.echo(f"note: new empty store at {dst.locator}", err=True)

    def said(run: str, what: str) -> None:
        word, _, reason = what.partition(": ")
        typer.echo(f"{word:<8} {run}" + (f": {reason}" if reason else ""))

    report = copy_runs(src, dst, progress=said)
    typer.echo(f"{len(report.copied)} run(s) copied, {len(report.present)} already there, {len(report.skipped)} "
               f"skipped; {report.refs} other ref(s); {report.objects} object(s) written to {dst.locator}")
    src.close()
    dst.close()
    if not report.complete:
        bad = [what for what, reason in report.skipped if not reason.startswith(UNFINISHED)]
        raise fail(f"store copy: {len(bad)} run(s) or ref(s) not copied for a reason other than being unfinished "
                   f"(first: {bad[0]}; see above)")


def register(app: typer.Typer) -> None:
    """Add the ``store`` command group to ``app``."""
    store_app = typer.Typer(
        name="store", help="Inspect and maintain a content-addressed store.", no_args_is_help=True
    )
    for func in (ls, cat, fsck, gc, audit, copy):
        store_app.command(func.__name__)(user_errors(func))
    store_app.command("rm-run")(user_errors(rm_run))
    app.add_typer(store_app, name="store")
