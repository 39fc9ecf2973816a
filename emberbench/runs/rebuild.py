"""Rebuilding a damaged run's journal and refs from its verified stored result (``store fsck --repair``).

A complete result artifact holds every record of its run, its manifest and
its model id, and verifying it replays every record. Once it has verified,
it is the run's own proof of what its journal must say: a header (the
run's policy spec, start time and EMBERBench version, taken from the old
header or else from the run-info), one ``{"index", "digest"}`` entry per
episode in manifest order, and the finish marker naming the result. The
same proof gives back the ``results/`` ref and, with the header, a run-info
for the ``runs/`` ref. Nothing is rebuilt from a result that fails, is
incomplete, or is the result of another run (its manifest hash and model id
must give the run's name).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import OutputLockedError, StoreUsageError
from ..results.manifest import EvaluationManifest
from ..evaluation.run_info import JournalHeader, RunInfo, Verification, run_info_ref, software_versions, this_host, this_user
from ..evaluation.run_info import utc_now


@dataclass(frozen=True, slots=True)
class VerifiedRun:
    """A run's complete result, verified: its key, manifest, model id and ``(index, digest)`` per episode."""

    key: str
    manifest: EvaluationManifest
    model_id: str
    episodes: tuple[tuple[int, str], ...]


def verify_stored_result(store: Any, suite: Any, run: str, key: str) -> VerifiedRun:
    """Verify the stored result ``key`` completely as the result of ``run``; put back records the store lost.

    The object is copied piece by piece (each piece proven against its
    checksum and key) to a private temporary file, which is verified as a
    stream with every record replayed. A record the store no longer holds is
    put again from the artifact once its episode has passed every check.

    Raises:
        StoreUsageError: the result is incomplete or belongs to another run.
        ResultError / IntegrityError / ObjectNotFoundError: it fails a check or is not stored.
    """
    from emberbench.store import journal_name

    from ..results.stream import StreamedEpisode, verify_artifact

    episodes: list[tuple[int, str]] = []

    def keep(e: StreamedEpisode) -> None:
        episodes.append((e.index, e.record_digest))
        if not store.has(e.record_digest):
            store.put(e.record_bytes, key=e.record_digest)

    with tempfile.TemporaryDirectory(prefix="emberbench-repair-") as folder:
        path = Path(folder) / "result.json"
        store.get_to_file(key, path, verify_data=True)
        done = verify_artifact(path, suite, sink=keep, where=f"result {key}")
    if journal_name(done.manifest.hash, done.model_id) != run:
        raise StoreUsageError(f"result {key} is the result of another run (model {done.model_id!r}, manifest "
                              f"{done.manifest.hash[:12]})")
    if not done.complete:
        raise StoreUsageError(f"result {key} holds {len(done.indices)} of {len(done.manifest.episodes)} episodes")
    return VerifiedRun(key, done.manifest, done.model_id, tuple(episodes))


def rebuild_journal(store: Any, run: str, verified: VerifiedRun, header: JournalHeader, *,
                    unreadable: bool = False) -> None:
    """Replace the journal of ``run`` (or create it) by the one ``verified`` proves.

    The replacement is atomic, except for a journal that cannot be read at
    all (``unreadable``: no writer can open it): that one is deleted first.

    Raises:
        OutputLockedError: a run holds the journal (nothing changed).
    """
    from emberbench.store import LockError

    manifest_key = store.put(verified.manifest.canonical_bytes())
    try:
        if unreadable:
            store.delete_journal(run)
        journal = store.open_journal(run, create=True)
    except LockError:
        raise OutputLockedError(f"run {run} is in progress (its journal is locked); its journal was not rebuilt",
                                path=run) from None
    items = [(header.to_dict(), [manifest_key])]
    items += [({"index": index, "digest": digest}, [digest]) for index, digest in verified.episodes]
    journal.rewrite(items, finish=({"result": verified.key}, [verified.key]))


def rebuilt_run_info(run: str, verified: VerifiedRun, header: JournalHeader) -> RunInfo:
    """The run-info of a complete run, from its verified result and its journal header.

    Host, user and software versions are this process's (the one that wrote
    this run-info), and the verification field says that it was rebuilt.
    """
    m, n = verified.manifest, len(verified.manifest.episodes)
    now = utc_now()
    check = Verification(at=now, by=f"{this_user()}@{this_host()}"[:512], verdict="ok",
                         detail="run-info rebuilt by `emberbench store fsck --repair` from the verified result")
    return RunInfo(run=run, model_id=verified.model_id, policy=header.policy, manifest_hash=m.hash,
                   suite_id=m.suite_id, suite_version=m.suite_version, suite_hash=m.suite_hash,
                   **software_versions(), host=this_host(), user=this_user(), started=header.started, ended=now,
                   episodes_done=n, episodes_scheduled=n, state="complete", result=verified.key,
                   verification=check)


def rebuild_run_info(store: Any, run: str, verified: VerifiedRun, header: JournalHeader) -> str:
    """Store :func:`rebuilt_run_info` and point ``runs/<run>`` at it (replacing what the ref held); its key."""
    key = store.put(rebuilt_run_info(run, verified, header).to_bytes())
    store.refs.set(run_info_ref(run), key)
    return key


# -- the repair of one run's structure -------------------------------------------------


def _read_ref(store: Any, ref: str) -> tuple[str | None, str | None]:
    """``(key, None)``, ``(None, None)`` when there is no such ref, ``(None, reason)`` when it is damaged."""
    from emberbench.store import RefError, StoreLayoutError

    try:
        return store.refs.get(ref), None
    except RefError as exc:
        return None, None if exc.reason == "no such ref" else exc.reason
    except StoreLayoutError as exc:
        return None, exc.reason


def _header(store: Any, run: str, state: Any, model_id: str) -> JournalHeader:
    """The run's journal header: the old one if it is valid, else one made from the run's own run-info."""
    from ..errors import EmberError
    from ..evaluation.run_info import is_header_entry, read_run_info

    if state is not None and state.entries and is_header_entry(state.entries[0].data):
        try:
            return JournalHeader.from_dict(state.entries[0].data)
        except EmberError:
            pass
    try:
        info = read_run_info(store, run)
    except Exception:  # noqa: BLE001 - a damaged run-info is just not a source
        info = None
    if info is not None and info.run == run and info.model_id == model_id:
        return JournalHeader(info.policy, info.emberbench_version, info.started)
    raise StoreUsageError("neither its journal header nor its run-info says which policy it ran, so its journal "
                          "cannot be rebuilt")


def repair_structure(store: Any, suite: Any, run: str, *, has_journal: bool, done: list[str]) -> bool:
    """Repair the structural damage of ``run`` (:mod:`emberbench.evaluation.run_damage`) from its verified result.

    A link, FIFO, socket or device where the journal belongs is removed
    (never followed or opened). A journal that cannot be read, breaks the
    entry rule, lacks an episode or finished with another result, and a
    ``results/`` or ``runs/`` ref that holds no valid key, are rebuilt from
    the run's complete result once it verified (:func:`verify_stored_result`;
    the journal's finish marker is tried first, then the ``results/`` ref).
    Without such a result, a damaged ref is removed (a rerun writes it
    again) and what cannot be rebuilt is raised.

    Args:
        store, suite: the store and the suite of its runs.
        run: the run's name.
        has_journal: whether the store lists a journal for ``run``.
        done: each repair made is appended to it, one line each.

    Returns:
        Whether ``run`` has a journal afterwards.

    Raises:
        EmberError: something could not be repaired (what was done is in ``done``).
    """
    from ..evaluation.run_damage import info_damage, journal_damage, read_state, run_refs

    info_ref, result_ref = run_refs(run)
    state, journal_problem, unreadable = None, None, False
    if has_journal:
        special = store.special_journal(run)
        if special is not None:
            store.delete_journal(run)  # removed as it is: never followed, never opened
            done.append(f"run {run}: removed {special} that stood where its journal belongs")
            has_journal, journal_problem = False, f"its journal was {special}"
        else:
            state, damage = read_state(store, run)
            unreadable = damage is not None
            if state is not None:
                damage = journal_damage(store, run, state, against_ref=False)
            journal_problem = None if damage is None else str(damage)
            has_journal = state is not None or unreadable
    finished = None if state is None or state.finish is None else state.finish.data.get("result")
    result_key, result_bad = _read_ref(store, result_ref)
    _, info_bad = _read_ref(store, info_ref)
    if journal_problem is None and not has_journal and (result_key is not None or store.refs.exists(info_ref)):
        journal_problem = f"integrity error: journal {run} is damaged: it is missing"
    if journal_problem is None and state is not None and state.finish is None and result_key is not None:
        journal_problem = f"integrity error: journal {run} is damaged: it is unfinished, but ref {result_ref} " \
                          "names a complete result"
    if info_bad is None:
        damage = info_damage(store, run, finished=finished is not None or result_key is not None,
                             result=finished if isinstance(finished, str) else None)
        info_bad = None if damage is None else damage.reason
    stale = isinstance(finished, str) and result_key is not None and finished != result_key
    lost_ref = isinstance(finished, str) and result_key is None and result_bad is None
    if journal_problem is None and result_bad is None and info_bad is None and not stale and not lost_ref:
        return has_journal
    verified, failures = None, []
    for key in dict.fromkeys(k for k in (finished, result_key) if isinstance(k, str)):
        try:
            verified = verify_stored_result(store, suite, run, key)
            break
        except Exception as exc:  # noqa: BLE001 - a result that fails is simply not a source; say why
            failures.append(f"result {key[:12]}: {' '.join(str(exc).split())}"[:300])
    if verified is None:
        if result_bad is not None:
            store.refs.delete(result_ref)
            done.append(f"run {run}: removed ref {result_ref}, which held no valid key ({result_bad})")
        if info_bad is not None and store.refs.exists(info_ref):
            store.refs.delete(info_ref)
            done.append(f"run {run}: removed ref {info_ref}, which held no valid run-info ({info_bad})")
        why = "; ".join(failures) or "it has no stored result"
        if journal_problem is not None:
            raise StoreUsageError(f"{journal_problem}, and nothing verified to rebuild it from ({why}); "
                                  f"`emberbench store rm-run {run} --apply` removes the run")
        if info_bad is not None:
            raise StoreUsageError(f"its run-info cannot be rebuilt without a complete result ({why}): its model "
                                  "id is unknown; run the same `emberbench run` command again to record it")
        if stale:
            raise StoreUsageError(f"its journal and ref {result_ref} name different results and neither "
                                  f"verifies ({why})")
        if lost_ref:
            raise StoreUsageError(f"its journal finished with result {finished}, which does not verify ({why}) "
                                  f"and ref {result_ref} is missing")
        return has_journal
    header = _header(store, run, state, verified.model_id)
    if journal_problem is not None or finished != verified.key:
        rebuild_journal(store, run, verified, header, unreadable=unreadable)
        has_journal = True
        done.append(f"run {run}: journal rebuilt from its verified result {verified.key} "
                    f"({len(verified.episodes)} episodes)")
    if result_key != verified.key:
        store.refs.set(result_ref, verified.key)
        done.append(f"run {run}: ref {result_ref} rebuilt ({verified.key})")
    if info_bad is None:
        damage = info_damage(store, run, finished=True, result=verified.key)
        info_bad = None if damage is None else damage.reason
    if info_bad is not None:
        signed, own = signed_run_info(store, run, verified), _own_run_info(store, run, verified)
        if signed is not None:
            store.refs.set(info_ref, store.put(signed.to_bytes()))
            done.append(f"run {run}: ref {info_ref} restored from the run-info its attestation signs")
        elif own is not None:
            store.refs.set(info_ref, store.put(own.to_bytes()))
            done.append(f"run {run}: ref {info_ref} completed (its run-info did not say the run finished)")
        else:
            rebuild_run_info(store, run, verified, header)
            done.append(f"run {run}: ref {info_ref} rebuilt from its verified result and journal header")
    return has_journal


def _own_run_info(store: Any, run: str, verified: VerifiedRun) -> RunInfo | None:
    """The run's own run-info marked complete with ``verified`` (a run that stopped between finishing its
    journal and saying so), or None when it has no readable run-info of its own."""
    from ..evaluation.run_info import read_run_info

    try:
        info = read_run_info(store, run)
    except Exception:  # noqa: BLE001 - an unreadable run-info is simply not a source
        return None
    if info is None or info.run != run or info.model_id != verified.model_id \
            or info.manifest_hash != verified.manifest.hash:
        return None
    n = len(verified.manifest.episodes)
    return info.replace(state="complete", result=verified.key, episodes_done=n, episodes_scheduled=n,
                        ended=info.ended or utc_now())


def signed_run_info(store: Any, run: str, verified: VerifiedRun) -> RunInfo | None:
    """The run-info the run's attestation signs, if it has a readable one about ``verified``; else None.

    The signed run-info is the run's own record at the end of the run (its
    verification left out); restoring it keeps the attestation valid, which a
    run-info rebuilt here would not be. The signature is not checked here
    (no keyring): ``runs verify`` does that, and a forged one still fails there.
    """
    from emberbench.store import RefError, StoreError

    from ..errors import EmberError
    from ..provenance.attest import MAX_ATTESTATION_BYTES, attestation_ref, verify_envelope

    try:
        key = store.refs.get(attestation_ref(run))
        data = store.get(key, verify_data=True, max_length=MAX_ATTESTATION_BYTES)  # one read, the cap from its header
        statement = verify_envelope(data, None, where="attestation").statement
        if statement.subject_digest != verified.key:
            return None
        info = RunInfo.from_dict(dict(statement.predicate.run_info), where="attested run-info")
    except (RefError, StoreError, EmberError):
        return None
    if info.run != run or info.model_id != verified.model_id or info.result != verified.key:
        return None
    return info


__all__ = ["VerifiedRun", "rebuild_journal", "rebuild_run_info", "rebuilt_run_info", "repair_structure",
           "signed_run_info", "verify_stored_result"]
