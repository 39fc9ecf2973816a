"""The store's history beside its runs: the ref log and the catalog index, checked and repaired alike.

``store fsck`` and ``store audit`` both report :func:`check_history`: the ref
log checked against itself and against the refs (:func:`store.check_ref_log`)
and the catalog index checked against the log and the ``runs/`` refs
(:func:`emberbench.runs.index.check_index`), so the two commands name the
same damage in the same lines.

``store fsck --repair`` treats the two as what they are:

* **The catalog index is derived data.** When it cannot be used (its object
  missing or damaged, not an index, built on a log that changed, its ref
  moved or deleted around the log) or lists a run-info its ref no longer
  holds, :func:`repair_history` rebuilds it from every run, as ``runs
  reindex`` does. ``runs ls`` never lists from such an index meanwhile: it
  reads every run and says why.
* **The ref log is write-once history.** An entry missing, malformed or off
  the chain is never rewritten (that would erase the evidence it is there
  to keep): it is reported in one line that names the entry and says how to
  put its original bytes back.
* **A ref changed around the log** is put back where the history says when
  something can prove it: a run's ``results/`` and ``runs/`` refs by the
  run's repair (from its verified result), an ``attestations/`` ref at its
  last logged value (:func:`restore_attestation_ref`), the index's ref by
  the rebuild. Any other is reported; ``store log --adopt`` records it as it
  is once someone has checked it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .index import INDEX_REF, check_index, reindex


@dataclass(frozen=True, slots=True)
class HistoryCheck:
    """What :func:`check_history` found: the ref log's report and the catalog index's problems."""

    log: Any  # store.reflog.RefLogReport
    index: tuple[str, ...]

    @property
    def problems(self) -> tuple[str, ...]:
        """Every problem, one line each: the ref log's, then the index's."""
        return (*self.log.problems, *self.index)


def check_history(store: Any) -> HistoryCheck:
    """The ref log and the catalog index of ``store``, checked (what ``store fsck`` and ``store audit`` report)."""
    from emberbench.store import check_ref_log

    return HistoryCheck(check_ref_log(store), tuple(check_index(store)))


def restore_attestation_ref(store: Any, run: str, log: Any) -> str | None:
    """Point ``attestations/<run>`` back at its last logged attestation when the ref was changed around the log.

    Only from a log without damage of its own (an unreadable entry is no
    one's word), only when the ref now holds nothing, no valid key, or an
    attestation that does not bind the run, and only to an attestation
    object that is stored intact and attests this run. Whether it binds the
    run's result and run-info is checked afterwards with the rest of the run.

    Args:
        store: the store.
        run: the run's name.
        log: the :class:`store.reflog.RefLogReport` of the store.

    Returns:
        The line saying what was done, or None when nothing was.
    """
    from ..provenance.attest import attestation_ref
    from .damage import attestation_damage

    if log.damage:
        return None
    ref = attestation_ref(run)
    found = next((d for d in log.disagreements if d.ref == ref), None)
    if found is None or found.last is None or found.last.new is None:
        return None
    sound = found.value is not None and not found.value.startswith("unreadable")
    if sound and attestation_damage(store, run) is None:
        return None  # a sound attestation the log does not know: reported, not undone
    key = found.last.new
    if not _attests(store, run, key):
        return None
    store.refs.set(ref, key)
    return (f"run {run}: ref {ref} put back at {key}, its last value in the ref log (entry {found.last.seq}), "
            f"from {found.value or 'nothing'}")


def _attests(store: Any, run: str, key: str) -> bool:
    """Whether object ``key`` is stored intact and is an attestation (envelope and statement) about ``run``."""
    from emberbench.store import StoreError

    from ..errors import EmberError
    from ..provenance.attest import MAX_ATTESTATION_BYTES, verify_envelope

    try:
        data = store.get(key, verify_data=True, max_length=MAX_ATTESTATION_BYTES)  # one read, the cap from its header
        statement = verify_envelope(data, None, where=f"attestation {key}").statement
    except (StoreError, EmberError):  # too large (ObjectTooLargeError) among them
        return False
    return statement.predicate.run_info.get("run") == run


def repair_history(store: Any, unrepaired_runs: Iterable[str] = ()) -> tuple[list[str], list[str]]:
    """Rebuild the catalog index if it needs it, then report what stays wrong with the ref log.

    Run this after the runs were repaired (their refs are then where their
    repair put them, each change logged).

    Args:
        store: the store.
        unrepaired_runs: runs whose repair failed and was reported: a ref of
            theirs that disagrees with the log is part of that report.

    Returns:
        ``(repaired, unrepaired)``: one line each.
    """
    from emberbench.store import StoreError, check_ref_log
    from emberbench.store.reflog import run_of

    from ..errors import EmberError

    repaired: list[str] = []
    unrepaired: list[str] = []
    log = check_ref_log(store)
    if check_index(store) or any(d.ref == INDEX_REF for d in log.disagreements):
        try:
            key, index = reindex(store)
            repaired.append(f"catalog index rebuilt from every run ({len(index.runs)} runs, current to ref log "
                            f"entry {index.position}): {key}")
        except (StoreError, EmberError) as exc:
            unrepaired.append(f"catalog index: {' '.join(str(exc).split())}; `emberbench runs reindex` rebuilds it")
        log = check_ref_log(store)
    if log.damage:
        first, more = log.damage[0], len(log.problems) - 1
        also = f" (and {more} more problem(s) the ref log check lists)" if more else ""
        if first.startswith("ref log"):
            unrepaired.append(f"{first}{also}: the ref log is write-once history, so repair never rewrites it; put "
                              "the entry's original bytes back (an earlier version of it on a versioned bucket, or a "
                              "backup of the folder), else it stays reported as the record of the damage")
        else:
            unrepaired.append(f"{first}{also}")
        return repaired, unrepaired
    skip = frozenset(unrepaired_runs)
    unrepaired += [d.line for d in log.disagreements if run_of(d.ref) not in skip]
    return repaired, unrepaired


__all__ = ["HistoryCheck", "check_history", "repair_history", "restore_attestation_ref"]
