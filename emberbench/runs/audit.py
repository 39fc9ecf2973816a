"""Auditing a store run by run: every stored result re-verified with full replay, journals checked against it.

A *run* in a store is a journal ``run-<hash>`` and, once it finished, the
result artifact stored under the ref ``results/run-<hash>``. :func:`audit_store`
gives one :class:`AuditVerdict` per run, in run-name order, and never stops at
a damaged run:

* ``ok``: the stored result passes every check of a verification (streamed,
  each record replayed once) and holds every scheduled episode, and its
  journal, if still there, is finished, names this result and journaled
  exactly its episodes and records;
* ``partial``: a run that has not finished (its journal lists the episodes
  done so far and every record they reference is stored), or a stored result
  that verifies but lacks scheduled episodes;
* ``damaged``: anything else: a result that fails a check, an object, ref or
  journal that cannot be read, records a journal needs that are gone, a
  journal and a result that disagree. The structural checks come first and
  are the ones ``store fsck`` makes (:mod:`emberbench.evaluation.run_damage`): a ref that
  holds no valid key (the run-info's ``runs/`` ref too), a journal entry that
  is not an episode of the manifest, a finished journal that lacks an episode.

Stored result objects are read through the store piece by piece (frame and
checksum checked, content re-hashed against the key) into a temporary file,
which is verified as a stream: no object is ever held whole.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import EmberError
from ..records.replay import Authenticator, Replayer
from ..results.stream import StreamedEpisode, verify_artifact
from ..evaluation.store_names import is_run_name
from ..sim.suite import Suite

RESULT_REF_PREFIX = "results/"
OK, PARTIAL, DAMAGED = "ok", "partial", "damaged"


@dataclass(frozen=True, slots=True)
class AuditVerdict:
    """The verdict on one run of a store.

    Attributes:
        run: the run's name (its journal name).
        state: ``ok``, ``partial`` or ``damaged``.
        message: what was found, in one line.
        ref: the result ref (``results/<run>``), or "" when there is none.
        key: the stored result's key, or "" when there is none.
    """

    run: str
    state: str
    message: str
    ref: str = ""
    key: str = ""

    @property
    def ok(self) -> bool:
        """True for a complete, authenticated run."""
        return self.state == OK


class _Damage(Exception):
    """Internal: a run is damaged (the message says how)."""


@dataclass(frozen=True, slots=True, eq=False)
class _Journal:
    """What the audit needs of a run journal: the journaled episodes as sorted arrays, and how it ended.

    ``digests`` holds one row of 32 raw bytes per episode, in ``indices`` order.
    """

    indices: np.ndarray
    digests: np.ndarray
    finished: bool
    result: str | None

    @classmethod
    def read(cls, store: Any, run: str) -> _Journal:
        return cls.of(store.read_journal(run))

    @classmethod
    def of(cls, state: Any) -> _Journal:
        """The audit's view of a journal already read."""
        indices, digests = [], []
        for entry in state.entries:
            data = entry.data
            if isinstance(data, Mapping) and "index" in data:
                indices.append(int(data["index"]))
                digests.append(bytes.fromhex(str(data["digest"])))
        finish = state.finish.data if state.finish is not None else None
        result = finish.get("result") if isinstance(finish, Mapping) else None
        order = np.argsort(np.array(indices, dtype=np.int64), kind="stable")
        # 32 raw bytes per row (a bytes dtype would drop trailing zero bytes).
        rows = np.frombuffer(b"".join(digests), dtype=np.uint8).reshape(len(digests), 32)
        return cls(np.array(indices, dtype=np.int64)[order], rows[order],
                   state.finish is not None, None if result is None else str(result))

    def digest(self, row: int) -> str:
        """The record digest journaled at ``row`` (hex)."""
        return self.digests[row].tobytes().hex()


def _check_referenced(store: Any, run: str, state: Any) -> None:
    """Every object the journal references (the manifest, each record, the result) is stored and intact.

    A finished run's records are also inside its result, but the store must
    still hold them: a rerun, a resume and ``store gc`` rely on the journal.
    Each object's frame and checksum are checked (as ``store fsck`` does),
    sixteen at a time.
    """
    from concurrent.futures import ThreadPoolExecutor

    from emberbench.store import IntegrityError, ObjectNotFoundError

    def problem(key: str) -> str | None:
        try:
            store.check(key)
        except ObjectNotFoundError:
            return f"{key} is missing"
        except IntegrityError as exc:
            return f"{key} is corrupt ({exc.reason})"
        return None

    keys = sorted(state.referenced_keys())
    with ThreadPoolExecutor(max_workers=16) as pool:
        found = [p for p in pool.map(problem, keys) if p is not None]
    if found:
        raise _Damage(f"journal {run}: {len(found)} of the {len(keys)} objects it references are lost (first "
                      f"{found[0]}); `emberbench store fsck --repair` regenerates them")


def _audit_unfinished(store: Any, run: str, journal: _Journal) -> AuditVerdict:
    lost = store.missing(sorted({journal.digest(row) for row in range(len(journal.indices))}))
    if lost:
        raise _Damage(f"journal {run} is unfinished and {len(lost)} of the records it references are missing "
                      f"(first {lost[0]})")
    episodes = len(set(journal.indices.tolist()))
    return AuditVerdict(run, PARTIAL, f"unfinished: {episodes} episodes journaled, no stored result")


def _audit_result(store: Any, suite: Suite, run: str, ref: str, key: str, journal: _Journal | None,
                  replayer: Replayer | Authenticator | None) -> AuditVerdict:
    where = f"result {key[:12]}"
    disagree: list[str] = []
    seen = 0

    def check(e: StreamedEpisode) -> None:
        nonlocal seen
        if journal is not None and not disagree:
            if (seen >= len(journal.indices) or journal.indices[seen] != e.index
                    or journal.digest(seen) != e.record_digest):
                disagree.append(f"episode {e.index}")
        seen += 1

    # The object goes to a temporary file piece by piece, each piece only once proven good
    # (frame, checksum, content re-hashed against the key); the file is then verified as a stream.
    with tempfile.TemporaryDirectory(prefix="emberbench-audit-") as folder:
        path = Path(folder) / "result.json"
        store.get_to_file(key, path, verify_data=True)
        done = verify_artifact(path, suite, sink=check, replayer=replayer, where=where)
    if journal is not None:
        if not journal.finished:
            raise _Damage(f"{where}: verifies, but journal {run} is not finished")
        if journal.result not in (None, key):
            raise _Damage(f"{where}: journal {run} finished with result {journal.result[:12]}, not this one")
        if disagree or len(journal.indices) != len(done.indices):
            what = disagree[0] if disagree else f"{len(journal.indices)} journaled vs {len(done.indices)} stored"
            raise _Damage(f"{where}: the stored result and journal {run} disagree ({what})")
    summary = (f"model {done.model_id!r}: {len(done.indices)}/{len(done.manifest.episodes)} episodes "
               f"authenticated (result {key[:12]})")
    return AuditVerdict(run, OK if done.complete else PARTIAL, summary if done.complete else f"partial: {summary}",
                        ref, key)


def audit_run(store: Any, suite: Suite, run: str, *, authenticator: Replayer | Authenticator | None = None,
              journals: frozenset[str] | None = None) -> AuditVerdict:
    """The verdict on one run (see the module docstring); never raises for a damaged run.

    ``journals`` (the store's journal names) saves listing them again.
    """
    from emberbench.store import StoreError

    from ..evaluation.run_damage import read_state
    from ..evaluation.store_names import is_run_name
    from .damage import structure_damage

    ref, key = f"{RESULT_REF_PREFIX}{run}", ""
    try:
        known = journals if journals is not None else frozenset(store.journal_names())
        if is_run_name(run):
            # The structural checks `store fsck` makes too (refs, journal, run-info, attestation), so the two agree.
            damage = structure_damage(store, run, journals=known, against_ref=False)
            if damage is not None:
                raise _Damage(str(damage))
            state = read_state(store, run)[0] if run in known else None
            if state is not None:
                _check_referenced(store, run, state)
            journal = _Journal.of(state) if state is not None else None
        else:
            journal = _Journal.read(store, run) if run in known else None
        if ref not in store.refs:
            if journal is None:
                raise _Damage(f"run {run} has neither a journal nor a stored result")
            if journal.finished:
                raise _Damage(f"journal {run} is finished but its result ref {ref} is missing")
            return _audit_unfinished(store, run, journal)
        key = store.refs.get(ref)
        return _audit_result(store, suite, run, ref, key, journal, authenticator)
    except _Damage as exc:
        return AuditVerdict(run, DAMAGED, str(exc), ref if key else "", key)
    except (EmberError, StoreError) as exc:
        return AuditVerdict(run, DAMAGED, str(exc), ref if key else "", key)


def store_runs(store: Any) -> list[str]:
    """Every run a store knows of (from its journals and its run and result refs), sorted.

    A name listed as a journal that holds no journal and that no ref names is
    no run: on S3 a foreign key such as ``journals/foreign/bar`` is listed as
    the journal ``foreign``, and the store never wrote it.
    """
    from emberbench.store import JournalError

    from ..evaluation.run_info import RUN_INFO_REF_PREFIX

    refs = store.refs.names()
    runs = {ref[len(RESULT_REF_PREFIX):] for ref in refs if ref.startswith(RESULT_REF_PREFIX)}
    runs.update(ref[len(RUN_INFO_REF_PREFIX):] for ref in refs
                if ref.startswith(RUN_INFO_REF_PREFIX) and is_run_name(ref[len(RUN_INFO_REF_PREFIX):]))
    named = set(runs)
    for name in store.journal_names():
        if name not in named:
            try:
                store.read_journal(name)
            except JournalError as exc:
                if exc.reason == "no such journal":
                    continue  # not a journal: nothing of the store's
        runs.add(name)
    return sorted(runs)


def audit_store(store: Any, suite: Suite, *,
                authenticator: Replayer | Authenticator | None = None) -> list[AuditVerdict]:
    """Audit every run of ``store`` (see the module docstring); verdicts in run-name order.

    Args:
        store: the object store.
        suite: the suite the stored results must verify against.
        authenticator: where records are replayed (a replayer, or the older
            list form; in process by default). Verdicts do not depend on it.
    """
    journals = frozenset(store.journal_names())
    return [audit_run(store, suite, run, authenticator=authenticator, journals=journals) for run in store_runs(store)]


__all__ = ["DAMAGED", "OK", "PARTIAL", "AuditVerdict", "audit_run", "audit_store", "store_runs"]
