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


ReadOnlyOption = Annotated[
    bool,
    typer.Option("--read-only", help="Open the store read-only: every read works, nothing is ever written "
                                     "(no verdict recorded, no quarantine, no lease, no index update)."),
]


def _open(store: str | None, read_only: bool = False):  # noqa: ANN202 - the store type is imported lazily
    from emberbench.store import open_store

    return open_store(resolve_store_dir(store), read_only=read_only)


def may_write(st) -> bool:  # noqa: ANN001
    """Whether the command may write to ``st``; if not, say why once on stderr (read-only, or credentials denied)."""
    reason = st.write_denied()
    if reason is None:
        return True
    if not getattr(st, "_said_read_only", False):
        typer.echo(f"note: store {st.locator} is read-only ({reason}): nothing is written", err=True)
        st._said_read_only = True
    return False


def refresh_catalog(st) -> None:  # noqa: ANN001
    """Bring an existing catalog index up to date after a command changed runs; a failure is a note, never an error."""
    from emberbench.store import StoreError

    from ..errors import EmberError
    from ..runs.index import INDEX_REF, refresh_index

    # Only an index someone built (the first `runs ls` does) is kept up; a store without one stays without.
    if INDEX_REF not in st.refs or st.write_denied() is not None:
        return
    try:
        refresh_index(st)
    except (StoreError, EmberError) as exc:
        typer.echo(f"note: the catalog index was not updated ({' '.join(str(exc).split())}); "
                   "`emberbench runs reindex` rebuilds it", err=True)


SHORT = 16
"""Hex digits of object keys and run ids in `store ls` (``--full`` prints all 64)."""
_RUN_NAME = __import__("re").compile(r"(run-[0-9a-f]{16})[0-9a-f]{48}")


def ls(
    store_dir: StoreOption = None,
    objects: Annotated[bool, typer.Option("--objects", help="Also list every object key and raw size.")] = False,
    full: Annotated[bool, typer.Option("--full", help="Print keys and run names whole (lines pass 80 columns).")] = False,
    read_only: ReadOnlyOption = False,
) -> None:
    """List refs, journals (finished or not) and, with --objects, every object.

    Keys and run ids are shortened to their first 16 hex digits so that each
    line fits 80 columns; --full prints them whole. A damaged ref, journal or
    object is listed as ``damaged`` and the listing goes on; the command then
    exits 1 naming how many were damaged.
    """
    from emberbench.store import StoreError

    def key_(key: str) -> str:
        return key if full else key[:SHORT]

    def name_(name: str) -> str:
        return name if full else _RUN_NAME.sub(r"\1", name)

    st = _open(store_dir, read_only)
    keys = list(st)
    damaged = 0
    typer.echo(f"store {st.locator}: {len(keys)} objects")
    if not full:
        typer.echo(f"keys and run ids: their first {SHORT} hex digits (--full prints them whole)")
    for name in st.refs.names():
        try:
            typer.echo(f"ref      {key_(st.refs.get(name))}  {name_(name)}")
        except StoreError as exc:
            damaged += 1
            typer.echo(f"damaged  ref {name_(name)}: {exc}")
    for name in st.journal_names():
        try:
            state = st.read_journal(name)
        except StoreError as exc:
            damaged += 1
            typer.echo(f"damaged  journal {name_(name)}: {exc}")
            continue
        status = "finished" if state.finished else "unfinished"
        typer.echo(f"journal  {name_(name)}  {len(state.entries)} entries, {status}")
    if objects:
        for key in keys:
            try:
                typer.echo(f"object   {key_(key)}  {st.size(key)}")
            except StoreError as exc:
                damaged += 1
                typer.echo(f"damaged  object {key_(key)}: {exc}")
    if damaged:
        raise fail(f"{damaged} damaged entries listed above (run `emberbench store fsck`)")


def cat(
    name: Annotated[str, typer.Argument(help="An object key (or its first 8 or more hex digits), or a ref name.")],
    store_dir: StoreOption = None,
    verify_data: Annotated[bool, typer.Option("--verify-data", help="Re-hash the content against its key.")] = False,
    read_only: ReadOnlyOption = False,
) -> None:
    """Write an object's raw bytes to stdout (checked before a byte is written)."""
    from emberbench.store import validate_key

    st = _open(store_dir, read_only)
    try:
        key = validate_key(name)
    except ValueError:
        key = _unique_key(st, name) if _HEX_PREFIX.fullmatch(name) else st.refs.get(name)
    # Each piece is handed out only once proven good (see Store.iter_verified).
    for piece in st.iter_verified(key, verify_data=verify_data):
        sys.stdout.buffer.write(piece)
    sys.stdout.buffer.flush()


_HEX_PREFIX = __import__("re").compile(r"[0-9a-f]{8,63}")


def _unique_key(st, prefix: str) -> str:  # noqa: ANN001 - the store type is imported lazily
    """The one object key that starts with ``prefix`` (as `store ls` shortens keys); else a usage error."""
    from ..errors import StoreUsageError

    found = [key for key in st if key.startswith(prefix)]
    if len(found) != 1:
        count = "no object" if not found else f"{len(found)} objects"
        raise StoreUsageError(f"{prefix} names {count} of store {st.locator}; "
                              "give a whole key or more of its digits (`store ls --full` shows them)")
    return found[0]


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
    read_only: ReadOnlyOption = False,
) -> None:
    """Check every object's frame and checksum, every run's refs and journal, the ref log and the catalog index.

    Exit 1 on damage (left unrepaired). Read-only (``--read-only``, or
    credentials that cannot write), corrupt objects are reported, not moved.
    """
    from emberbench.store import fsck as run_fsck

    from ..runs.damage import store_structure_damage

    if repair and read_only:
        raise typer.BadParameter("--repair writes to the store; it cannot be combined with --read-only",
                                 param_hint="--repair")
    st = _open(store_dir, read_only)
    quarantine = not no_quarantine and may_write(st)
    report = run_fsck(st, verify_data=verify_data, connectivity=connectivity, quarantine=quarantine)
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
    history = history_problems(st)
    ok = report.ok and not damages and not history
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
    from ..runs.history import check_history
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
    history = check_history(st).problems
    for line in history:
        typer.echo(f"still damaged  {line}")
    typer.echo(f"repair: {len(done.repaired)} repaired, {len(done.unrepaired)} not repaired")
    return again.ok and done.ok and not damages and not history


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
    read_only: ReadOnlyOption = False,
) -> None:
    """Audit every run (full replay of its stored result, its journal), the ref log and the catalog index.

    Exit 1 if a run, the ref log or the index is damaged.
    """
    from ..runs.audit import DAMAGED, OK, audit_store
    from ..sim.suite import load_suite
    from .cluster_cmd import replay_on_ray, resolve_address

    st = _open(store_dir, read_only)
    if not replay_on_ray(workers, address):
        verdicts = audit_store(st, load_suite(suite))
    else:
        from emberbench.cluster import audit_on_ray

        verdicts = audit_on_ray(st, load_suite(suite), workers=workers, address=resolve_address(address))
    for v in verdicts:
        typer.echo(f"{v.state:<8} {v.run[:16]}  {v.message}")
    counts = {state: sum(v.state == state for v in verdicts) for state in (OK, "partial", DAMAGED)}
    typer.echo(f"{len(verdicts)} runs audited: {counts[OK]} ok, {counts['partial']} partial, "
               f"{counts[DAMAGED]} damaged")
    history = history_problems(st)
    if history:
        raise fail(f"store audit: {len(history)} problem(s) with the ref log or the catalog index (see above)")
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
    if removal.applied:
        refresh_catalog(st)
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


def history_problems(st) -> list[str]:  # noqa: ANN001
    """Check the ref log against itself and the refs, and the catalog index against the refs; print each problem."""
    from ..runs.history import check_history

    found = check_history(st)
    for note in found.log.notes:
        typer.echo(f"note: {note}")
    for line in found.problems:
        typer.echo(f"damaged  {line}")
    return list(found.problems)


def log(
    ref: Annotated[Optional[str], typer.Argument(help="Only the changes of this ref (e.g. runs/run-<64 hex>); default: every ref.")] = None,  # noqa: UP007
    store_dir: StoreOption = None,
    limit: Annotated[Optional[int], typer.Option("--limit", min=1, help="Only the newest N changes.")] = None,  # noqa: UP007
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line, oldest first.")] = False,
    adopt: Annotated[bool, typer.Option("--adopt", help="Record every ref the log does not account for (no entry: made before the log or around the store; or not what its last entry says) as it is now, noted 'adopted'.")] = False,
    read_only: ReadOnlyOption = False,
) -> None:
    """Show the history of the refs: who changed which ref from which key to which, when (oldest first)."""
    import json

    from emberbench.store import RefLogError, check_ref_log, validate_ref_name

    if ref is not None:
        try:
            validate_ref_name(ref)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="REF") from None
    if adopt and read_only:
        raise typer.BadParameter("--adopt writes to the store; it cannot be combined with --read-only",
                                 param_hint="--adopt")
    st = _open(store_dir, read_only)
    if adopt:
        _adopt(st, ref, check_ref_log(st))
        return
    entries = [e for e in st.refs.log.entries()]
    bad = [e for e in entries if isinstance(e, RefLogError)]
    shown = [e for e in entries if not isinstance(e, RefLogError) and (ref is None or e.ref == ref)]
    if limit is not None:
        shown = shown[-limit:]
    for e in shown:
        if as_json:
            typer.echo(json.dumps({**e.to_dict(), "digest": e.digest}, sort_keys=True))
        else:
            change = ("created" if e.old is None else e.old[:16]) + " -> " + ("deleted" if e.new is None else e.new[:16])
            note = f" ({e.note})" if e.note else ""
            typer.echo(f"{e.seq:>6} {e.time} {e.by}  {e.ref}  {change}{note}")
    for item in bad:
        typer.echo(f"damaged  {item}", err=not as_json)
    if bad:
        raise fail(f"{len(bad)} ref log entries cannot be read (run `emberbench store fsck`)")


def _adopt(st, ref: str | None, report) -> None:  # noqa: ANN001
    """Record every ref the log does not account for (no entry, or not what its last entry says) as it is now."""
    if report.last is None:  # an empty log: every ref predates it
        todo = {name: (None, None) for name in st.refs.names()}
    else:
        todo = {d.ref: (None if d.last is None else d.last.new, d.value) for d in report.disagreements}
    adopted = 0
    for name in sorted(n for n in todo if ref is None or n == ref):
        logged, value = todo[name]
        if value is not None and value.startswith("unreadable"):
            typer.echo(f"not adopted  {name}: it holds no valid key ({value})")
            continue
        entry = st.refs.adopt(name, logged)
        if entry is not None:
            adopted += 1
            typer.echo(f"adopted  {name} -> {'deleted' if entry.new is None else entry.new} (entry {entry.seq})")
    typer.echo(f"{adopted} ref(s) adopted")
    if report.damage:
        typer.echo(f"note: the ref log itself is damaged ({len(report.damage)} problem(s), `emberbench store fsck` "
                   "lists them): adopting records refs, it does not repair the log", err=True)


def info(store_dir: StoreOption = None, read_only: ReadOnlyOption = False) -> None:
    """Say what the store is: backend, format, whether these credentials may write, its ref log, catalog index and history setup."""
    from emberbench.store import FORMAT_VERSION

    from ..runs.index import load_index

    st = _open(store_dir, read_only)
    typer.echo(f"store: {st.locator}")
    typer.echo(f"backend: {'s3' if st.locator.startswith('s3://') else 'local folder'}, format version {FORMAT_VERSION}")
    denied = st.write_denied()
    typer.echo("access: read-write" if denied is None else f"access: read-only ({denied})")
    last = st.refs.log.last_seq()
    typer.echo("ref log: empty" if last is None else f"ref log: {last + 1} entries")
    key, index, reason = load_index(st)
    if index is not None:
        typer.echo(f"catalog index: {key} ({len(index.runs)} runs, current to ref log entry {index.position})")
    else:
        typer.echo(f"catalog index: none usable ({reason})")
    for line in st.backend.describe_history():
        typer.echo(line)


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
    for func in (ls, cat, fsck, gc, audit, log, info, copy):
        store_app.command(func.__name__)(user_errors(func))
    store_app.command("rm-run")(user_errors(rm_run))
    app.add_typer(store_app, name="store")
