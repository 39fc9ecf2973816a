"""``emberbench store copy SRC DST``: copy a consistent snapshot of a store's finished runs to another store.

A run is copied whole or not at all. What is copied is the state at the
start: the runs whose journals were finished when the copy began (a run
still writing, or one that stopped before its end, is skipped and named),
each with every object its journal references, its result, run-info and
attestation, and the refs that name them; then every other ref of the store
(a served model's response cache, say) with its object. Journals that are
not runs are not copied. Per run, in this order:

1. its structure is checked as ``store fsck`` checks it
   (:func:`emberbench.runs.damage.structure_damage`); a damaged run is
   skipped with the reason, never copied;
2. every object it references is copied after it passed its check in the
   source (content re-hashed), frame for frame;
3. its journal is written as the bytes of its valid entries (a torn tail is
   never copied: on S3 it would read as damage);
4. its refs are created, each only where it does not exist yet.

If any step fails, what the copy wrote of that run (journal and refs) is
removed again and the run is reported; its objects stay, unreferenced, for
gc. A process killed between steps 3 and 4 leaves one run that ``store
fsck`` reports and the next copy of the same source completes. A run the
destination already holds identically is counted as there; one it holds
otherwise is skipped (never overwritten). The destination is created if it
is missing or empty, and refused if it holds anything that is not a store.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..evaluation.run_damage import run_refs
from ..evaluation.store_names import run_names


@dataclass(slots=True)
class StoreCopy:
    """What a copy did.

    Attributes:
        copied: the runs copied.
        present: the runs the destination already held, identical.
        skipped: ``(run, reason)`` for each run not copied.
        refs: other refs copied (or already there, identical).
        objects: objects the destination did not hold before.
    """

    copied: list[str] = field(default_factory=list)
    present: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    refs: int = 0
    objects: int = 0

    @property
    def complete(self) -> bool:
        """Nothing was skipped but runs that had not finished (the snapshot's rule, not a failure)."""
        return all(reason.startswith(UNFINISHED) for _, reason in self.skipped)


UNFINISHED = "unfinished when the copy began"


def _line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:400]


def finished_runs(store: Any) -> tuple[list[str], list[tuple[str, str]]]:
    """The runs of ``store`` whose journals are finished now, and ``(run, reason)`` for the others."""
    from emberbench.store import StoreError, StoreIOError

    finished, others = [], []
    journals = frozenset(store.journal_names())
    for run in run_names(store):
        if run not in journals:
            others.append((run, "it has no journal"))
            continue
        try:
            state = store.read_journal(run)
        except StoreIOError:
            raise
        except StoreError as exc:
            others.append((run, f"its journal cannot be read: {_line(exc)}"))
            continue
        if state.finished:
            finished.append(run)
        else:
            others.append((run, f"{UNFINISHED} (running, or stopped before its end)"))
    return finished, others


def copy_runs(source: Any, target: Any, *, progress: Callable[[str, str], None] | None = None) -> StoreCopy:
    """Copy the finished runs of ``source`` and its other refs into ``target`` (see the module docstring).

    ``progress(run, what)`` is told about each run as it is done (``copied``,
    ``present`` or ``skipped: reason``).

    Raises:
        StoreIOError: a store cannot be reached (what was copied so far stays, whole run by whole run).
    """
    from emberbench.store import StoreError, StoreIOError

    done = StoreCopy()
    runs, others = finished_runs(source)
    done.skipped.extend(others)
    belongs = set()
    for run in run_names(source):
        belongs.update(_run_ref_names(run))
    for run in runs:
        try:
            outcome = _copy_run(source, target, run, done)
        except StoreIOError:
            raise
        except StoreError as exc:
            outcome = f"skipped: {_line(exc)}"
            done.skipped.append((run, _line(exc)))
        if progress is not None:
            progress(run, outcome)
    for run, reason in others:
        if progress is not None:
            progress(run, f"skipped: {reason}")
    for ref in source.refs.names():
        if ref in belongs:
            continue
        try:
            _copy_ref(source, target, ref, done)
            done.refs += 1
        except StoreIOError:
            raise
        except StoreError as exc:
            done.skipped.append((f"ref {ref}", _line(exc)))
    return done


def _run_ref_names(run: str) -> tuple[str, ...]:
    from ..provenance.attest import attestation_ref

    info_ref, result_ref = run_refs(run)
    return result_ref, info_ref, attestation_ref(run)


def _copy_run(source: Any, target: Any, run: str, done: StoreCopy) -> str:
    """Copy one finished run whole; what happened, in a word or a reason (also recorded in ``done``)."""
    from emberbench.store import RefError, StoreError
    from emberbench.store.copy import copy_object, journal_snapshot

    from .damage import structure_damage

    damage = structure_damage(source, run)
    if damage is not None:
        done.skipped.append((run, f"damaged: {damage}"))
        return f"skipped: damaged: {damage}"
    data, state = journal_snapshot(source, run)
    refs = {}
    for ref in _run_ref_names(run):
        try:
            refs[ref] = source.refs.get(ref)
        except RefError as exc:
            if exc.reason != "no such ref":
                raise
    there = _held_by(target, run, refs)
    if there == "identical":
        done.present.append(run)
        return "present"
    if there is not None:
        done.skipped.append((run, there))
        return f"skipped: {there}"
    for key in sorted(set(state.referenced_keys()) | set(refs.values())):
        done.objects += copy_object(source, target, key)
    written: list[str] = []
    try:
        target.backend.import_journal(run, data)
        written.append("journal")
        for ref, key in refs.items():
            target.refs.compare_and_swap(ref, None, key)
            written.append(ref)
    except StoreError:
        _undo(target, run, written)
        raise
    done.copied.append(run)
    return "copied"


def _held_by(target: Any, run: str, refs: dict[str, str]) -> str | None:
    """None when ``target`` holds nothing of ``run``; ``identical`` when it holds the same; else why not to copy."""
    from emberbench.store import RefError, StoreError
    from emberbench.store.copy import journal_snapshot

    has_journal = run in target.journal_names()
    held = {}
    for ref in _run_ref_names(run):
        try:
            held[ref] = target.refs.get(ref)
        except RefError as exc:
            if exc.reason != "no such ref":
                return f"the destination holds a damaged ref {ref}"
    if not has_journal and not held:
        return None
    info_ref = run_refs(run)[0]
    if held.get(info_ref) != refs.get(info_ref) and _same_run_info(target, held.get(info_ref), refs.get(info_ref)):
        held[info_ref] = refs[info_ref]  # the same run-info, verified there since: still this run
    if held != refs:
        return "the destination holds another version of this run (its refs differ); nothing was overwritten"
    try:
        journal_snapshot(target, run)
    except StoreError as exc:
        return f"the destination holds this run with a journal that cannot be read ({_line(exc)})"
    return "identical"


def _same_run_info(target: Any, held: str | None, copied: str | None) -> bool:
    """Whether run-info objects ``held`` (in ``target``) and ``copied`` differ only in their last verification."""
    from ..evaluation.run_info import _readable

    if held is None or copied is None or not target.has(copied):
        return False
    mine, theirs = _readable(target, held), _readable(target, copied)
    return mine is not None and theirs is not None and \
        mine.replace(verification=None) == theirs.replace(verification=None)


def _undo(target: Any, run: str, written: list[str]) -> None:
    """Remove what a failed copy of ``run`` wrote (refs, then the journal); objects stay for gc."""
    from emberbench.store import StoreError

    for what in reversed(written):
        try:
            if what == "journal":
                target.delete_journal(run)
            else:
                target.refs.delete(what)
        except StoreError:
            pass  # the report names the run; fsck names what is left


def _copy_ref(source: Any, target: Any, ref: str, done: StoreCopy) -> None:
    """Copy a ref that belongs to no run, with its object; an identical one is left, another is refused."""
    from emberbench.store import RefConflictError, RefError
    from emberbench.store.copy import copy_object

    key = source.refs.get(ref)
    done.objects += copy_object(source, target, key)
    try:
        target.refs.compare_and_swap(ref, None, key)
    except RefConflictError:
        try:
            if target.refs.get(ref) == key:
                return
        except RefError:
            pass
        raise RefError(ref, "the destination holds another value; nothing was overwritten") from None


__all__ = ["UNFINISHED", "StoreCopy", "copy_runs", "finished_runs"]
