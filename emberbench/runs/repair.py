"""Recovering runs in a store: regenerate lost records, rebuild lost results, delete a run on request.

Every record of a run can be made again: the episode is played again with the
run's policy (recorded in its journal header) on the same (scenario, seed),
and a deterministic policy gives the same record, hence the same key. A
record that comes out different is never stored in place of the journaled
one: the run is reported as not repairable. Nothing is repaired by guessing.

* :func:`repair_store` (``emberbench store fsck --repair``) does this for
  every run of a store: first the run's structure is repaired from its
  verified result (:func:`emberbench.runs.rebuild.repair_structure`: a
  damaged journal or ref is rebuilt, a link or FIFO where the journal
  belongs is removed); then each journaled record that is missing or
  fails its checks is played again, and the result object of a finished run
  that is missing or corrupt is rebuilt by rerunning the run into a temporary
  file (the same path ``emberbench run`` takes, with full authentication).
  A run's ``attestations/`` ref changed around the ref log is put back at
  its logged value first; after the runs, the store's history is repaired
  (:func:`emberbench.runs.history.repair_history`: the catalog index
  rebuilt when it needs it; what stays wrong with the ref log reported).
* :func:`remove_run` (``emberbench store rm-run``) deletes one run's journal
  and refs, so that ``store gc`` collects its objects; a dry run by default.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import EmberError, OutputLockedError, StoreUsageError
from ..evaluation.run_info import JournalHeader, RunInfo, is_header_entry, read_run_info, run_info_ref


@dataclass(frozen=True, slots=True)
class RepairReport:
    """What a repair did (``repaired``) and what it could not do (``unrepaired``), one line each."""

    repaired: tuple[str, ...]
    unrepaired: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.unrepaired


def _intact(store: Any, key: str) -> bool:
    from emberbench.store import IntegrityError, ObjectNotFoundError

    try:
        store.get(key, verify_data=True)
        return True
    except (IntegrityError, ObjectNotFoundError):
        return False


def repair_store(store: Any, suite: Any, *, agent_timeout: float | None = None) -> RepairReport:
    """Regenerate every lost record and rebuild every lost result the store's run journals need.

    Args:
        store: the store (run ``fsck`` first: it moves corrupt objects to quarantine).
        suite: the suite the runs were evaluated on.
        agent_timeout: seconds a ``cmd:`` agent may take per step.
    """
    from emberbench.store import check_ref_log

    from ..evaluation.store_names import run_names
    from .history import repair_history, restore_attestation_ref
    from .rebuild import repair_structure

    repaired: list[str] = []
    unrepaired: list[str] = []
    failed: list[str] = []
    journals = frozenset(store.journal_names())
    runs = frozenset(run_names(store))
    log = check_ref_log(store)
    for name in sorted(journals | runs):
        done: list[str] = []
        try:
            # First, so that a run-info is restored from the attestation the run really has.
            restored = restore_attestation_ref(store, name, log)
            done += [restored] if restored is not None else []
            has_journal = name in journals
            if name in runs:
                has_journal = repair_structure(store, suite, name, has_journal=has_journal, done=done)
            if has_journal:
                done += _repair_run(store, suite, name, agent_timeout)
            _refuse_damaged_attestation(store, name)
        except EmberError as exc:
            unrepaired.append(f"run {name}: {exc}")
            failed.append(name)
        except Exception as exc:  # noqa: BLE001 - a store fault or a policy's own error: report, go on
            unrepaired.append(f"run {name}: {type(exc).__name__}: {exc}")
            failed.append(name)
        repaired += done
    history_repaired, history_unrepaired = repair_history(store, failed)
    return RepairReport(tuple(repaired + history_repaired), tuple(unrepaired + history_unrepaired))


def _refuse_damaged_attestation(store: Any, run: str) -> None:
    """A damaged attestation cannot be rebuilt (only its signer can sign): say so, and how to sign again."""
    from .damage import attestation_damage

    damage = attestation_damage(store, run)
    if damage is not None:
        raise StoreUsageError(f"{damage}; an attestation is not rebuilt (it needs its signer's key): sign the run "
                              f"again with `emberbench runs attest {run}`, which replaces it")


def _repair_run(store: Any, suite: Any, name: str, agent_timeout: float | None) -> list[str]:
    from emberbench.store import LockError

    state = store.read_journal(name)
    entries = state.entries
    episodes = {int(e.data["index"]): str(e.data["digest"]) for e in entries if "index" in e.data}
    lost = {i: d for i, d in sorted(episodes.items()) if not _intact(store, d)}
    result = state.finish.data.get("result") if state.finish is not None else None
    result_lost = isinstance(result, str) and not _intact(store, result)
    manifest_keys = entries[0].keys if entries and is_header_entry(entries[0].data) else ()
    manifest_lost = any(not _intact(store, key) for key in manifest_keys)
    if not lost and not result_lost and not manifest_lost:
        return []
    if not manifest_keys:
        raise StoreUsageError("its journal does not record the run's policy (an older EMBERBench); "
                              f"{len(lost)} record(s) cannot be regenerated")
    header = JournalHeader.from_dict(entries[0].data)
    manifest = _manifest_of(store, manifest_keys, result)
    from ..results.manifest import check_manifest

    check_manifest(manifest, suite)
    try:
        journal = store.open_journal(name, create=False)
    except LockError:
        raise OutputLockedError(f"the run is in progress (its journal is locked); {len(lost)} record(s) not "
                                "regenerated", path=name) from None
    done = []
    try:
        if manifest_lost:
            store.put(manifest.canonical_bytes())
            done.append(f"run {name}: manifest {manifest.hash} restored from its stored result")
        done += _regenerate(store, suite, manifest, header.policy, lost, agent_timeout)
    finally:
        journal.close()
    if result_lost:
        info = _run_info_of(store, name, manifest)
        kept = store.get(store.refs.get(run_info_ref(name)))
        with tempfile.TemporaryDirectory(prefix="emberbench-repair-") as tmp:
            from ..evaluation.runner import run_evaluation

            run_evaluation(manifest, suite, header.policy, info.model_id, Path(tmp) / "result.json", store=store,
                           policy_spec=header.policy, checkpoint_seconds=0)
        # The rerun rewrote the run-info as its own; the run's record (and what its attestation signs) is the
        # one it had: put it back.
        store.refs.set(run_info_ref(name), store.put(kept))
        done.append(f"run {name}: result {result} rebuilt")
    return done


def _regenerate(store: Any, suite: Any, manifest: Any, spec: str, lost: dict[int, str],
                agent_timeout: float | None) -> list[str]:
    """Play each lost episode again; store its record only if it reproduces the journaled digest."""
    from ..errors import RunIntegrityError
    from ..policies.context import PolicyContext
    from ..policies.spec import FreshPolicies, resolve_policy
    from ..evaluation.runner import play_to_outcome

    if not lost:
        return []
    kwargs = {} if agent_timeout is None else {"agent_timeout": agent_timeout}
    # With the store, a served model's lost records are played again from its response cache.
    factory = FreshPolicies(resolve_policy(spec, context=PolicyContext(store=store), **kwargs), spec)
    done = []
    for index, digest in lost.items():
        outcome, record = play_to_outcome(suite, manifest.episodes[index], factory)
        if outcome.record_digest != digest:
            raise RunIntegrityError(f"episode {index} played again gives record {outcome.record_digest}, not the "
                                    f"journaled {digest}; policy {spec!r} does not reproduce its run", subject=digest)
        store.put(record, key=digest)
        done.append(f"record {digest} regenerated (episode {index})")
    return done


def _manifest_of(store: Any, keys: tuple[str, ...], result: Any) -> Any:
    """The run's manifest: the object its journal header references, else the one inside its result."""
    from ..io.input_policy import parse_json
    from ..results.manifest import manifest_from_dict

    for key in keys:
        if _intact(store, key):
            manifest = manifest_from_dict(parse_json(store.get(key), where=f"manifest {key}"),
                                          where=f"manifest {key}")
            if manifest.hash == key:
                return manifest
    if isinstance(result, str) and _intact(store, result):
        data = parse_json(store.get(result), where=f"result {result}")
        return manifest_from_dict(data.get("manifest") if isinstance(data, dict) else None,
                                  where=f"result {result}")
    raise StoreUsageError("its manifest is no longer in the store (neither the object its journal references nor "
                          "a stored result); rerun `emberbench run` with the manifest file to regenerate it")


def _run_info_of(store: Any, name: str, manifest: Any) -> RunInfo:
    from emberbench.store import journal_name

    info = read_run_info(store, name)
    if info is None:
        raise StoreUsageError(f"its run-info ({run_info_ref(name)}) is missing, so its model id is unknown and its "
                              "result cannot be rebuilt; rerun `emberbench run` with the same --model-id")
    if journal_name(manifest.hash, info.model_id) != name:
        raise StoreUsageError(f"its run-info names model {info.model_id!r}, which is not this run's")
    return info


# -- removing a run ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunRemoval:
    """A run's journal and refs, removed (``applied``) or to be removed (dry run)."""

    run: str
    journal: bool
    refs: tuple[str, ...]
    info: RunInfo | None
    applied: bool


def remove_run(store: Any, run: str, *, apply: bool = False) -> RunRemoval:
    """Delete the journal of ``run`` and its ``results/``, ``runs/`` and ``attestations/`` refs (only with ``apply``).

    The journal goes first, and only if no run holds it; a removal
    interrupted before the refs go is finished by running it again. The
    objects stay until ``store gc`` finds them unreferenced.

    Raises:
        OutputLockedError: the run is in progress (its journal is locked); nothing was removed.
    """
    from emberbench.store import LockError

    from ..evaluation.store_names import RESULT_REF_PREFIX

    try:
        info = read_run_info(store, run)
    except (EmberError, KeyError, ValueError):
        info = None  # a damaged run-info does not stop its removal
    from ..provenance.attest import attestation_ref

    refs = tuple(ref for ref in (f"{RESULT_REF_PREFIX}{run}", run_info_ref(run), attestation_ref(run))
                 if store.refs.exists(ref))  # an unreadable ref (over the cap, say) goes too
    journal = run in store.journal_names()
    if apply:
        try:
            store.delete_journal(run)
        except LockError:
            raise OutputLockedError(f"run {run} is in progress (its journal is locked); nothing was removed",
                                    path=run) from None
        for ref in refs:
            store.refs.delete(ref)
    return RunRemoval(run=run, journal=journal, refs=refs, info=info, applied=apply)


__all__ = ["RepairReport", "RunRemoval", "remove_run", "repair_store"]
