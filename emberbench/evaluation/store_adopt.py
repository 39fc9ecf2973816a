"""What a store-backed run resumes from: the artifact at its output and its run journal, both authenticated.

Two sources can say an episode is done, and neither is believed unchecked:

* :func:`adopt_artifact` verifies the artifact already at the output as a
  stream (every record replayed once; a file that fails is refused before
  anything is written) and cross-checks it against the journal: an
  episode both list must have the same record digest. Its records are put
  back into the store where the store lost them (they are authenticated,
  and identical bytes give the identical key).
* :func:`verify_journaled` reads every other journaled record back from the
  store and replays it (:func:`emberbench.evaluation.resume_auth.verify_stored`, or the
  executor's parallel version). A missing or corrupt record is marked to be
  played again; an intact record that does not authenticate stops the run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..errors import RunIntegrityError
from ..results.stream import stored_records, verify_artifact
from .output import check_resumable
from .resume_auth import CORRUPT, MISSING, OK, StoredItem, StoredVerdict
from .store_names import store_name

Verifier = Callable[[Sequence[StoredItem]], list[StoredVerdict]]
NOT_DONE, DONE, REGENERATE = 0, 1, 2
"""The state of each manifest index on a store-backed run's sink: adoption marks an episode done or to be played again."""
VERIFY_BATCH = 8192
"""Journaled episodes checked per call of the verifier (each call is spread over every worker)."""


def adopt_artifact(sink: Any, suite: Any, authenticator: Any, journaled: dict[int, str], *,
                   policy_known: bool = True) -> tuple[int, list[tuple[dict[str, Any], list[str]]]]:
    """Authenticate the artifact at ``sink.out`` and take its episodes as done.

    ``policy_known`` says whether the artifact's run sidecar names this run's
    policy (:mod:`emberbench.evaluation.run_sidecar`). Without it, only episodes the
    journal lists (whose header names the policy) are taken; any other
    episode refuses the resume, so that no policy is mixed into the run.

    Returns:
        ``(episodes taken, journal entries to append)``: the entries of the
        artifact's episodes that the journal lacks (appended by the caller,
        after the journal header).

    Raises:
        ResultError: the artifact fails a check (it is left untouched).
        ResumeError: it belongs to another manifest or model id, or holds episodes of an unknown policy.
        RunIntegrityError: it disagrees with the journal about an episode's record.
    """
    disagree: list[tuple[int, str, str]] = []
    taken: dict[int, str] = {}

    def take(e: Any) -> None:
        # Kept per episode: its digest here and its packed metrics on the sink. Nothing is
        # written before the whole file has verified.
        known = journaled.get(e.index)
        if known is not None and known != e.record_digest and not disagree:
            disagree.append((e.index, e.record_digest, known))
        taken[e.index] = e.record_digest
        sink.mark_done(e.index, e.record_digest, e.metrics_bytes, len(e.record_bytes))

    existing = verify_artifact(sink.out, suite, sink=take, replayer=authenticator)
    check_resumable(existing.manifest.hash, existing.model_id, sink.manifest, sink.model_id, sink.out)
    if disagree:
        index, digest, known = disagree[0]
        raise RunIntegrityError(
            f"integrity error: {sink.out} episode {index} has record {digest}, but the run journal "
            f"{sink.name} in store {store_name(sink.store)} has {known}; nothing was changed", subject=known)
    if not policy_known and any(i not in journaled for i in taken):
        from .run_sidecar import refuse_unknown_policy

        raise refuse_unknown_policy(sink.out)
    _store_missing(sink, taken)
    imported = [({"index": i, "digest": d}, [d]) for i, d in taken.items() if i not in journaled]
    sink.in_file = len(existing.indices)
    sink.digest = existing.digest
    return len(existing.indices), imported


def _store_missing(sink: Any, taken: dict[int, str]) -> None:
    """Put back the artifact's records the store lacks or holds corrupt (read again from the verified file)."""
    from emberbench.store import IntegrityError, ObjectNotFoundError

    wanted: dict[int, str] = {}
    for index, digest in taken.items():
        try:
            sink.store.check(digest, verify_data=True)
        except (ObjectNotFoundError, IntegrityError):
            wanted[index] = digest
    if wanted:
        for index, data in stored_records(sink.out, wanted):
            sink.store.put(data, key=wanted[index])


def ensure_stored(store: Any, key: str, data: bytes) -> bool:
    """Make sure the store holds ``data`` intact under ``key``; return whether it had to be put back."""
    from emberbench.store import IntegrityError, ObjectNotFoundError

    try:
        if store.get(key) == data:
            return False
    except (ObjectNotFoundError, IntegrityError):
        pass
    store.put(data, key=key)
    return True


def verify_journaled(sink: Any, verifier: Verifier, journaled: dict[int, str]) -> int:
    """Authenticate every journaled episode the artifact did not cover; return how many passed.

    Missing or corrupt records are marked for regeneration on the sink.

    Raises:
        RunIntegrityError: an intact record does not authenticate.
    """
    items = [(sink.manifest.episodes[i], d) for i, d in sorted(journaled.items()) if not sink.has(i)]
    passed = 0
    # In batches, so that the verdicts (1 KB of metrics each) are packed as they come, not all held at once.
    for start in range(0, len(items), VERIFY_BATCH):
        batch = items[start:start + VERIFY_BATCH]
        passed += _take_verdicts(sink, batch, verifier(batch))
    return passed


def _take_verdicts(sink: Any, batch: Sequence[StoredItem], verdicts: list[StoredVerdict]) -> int:
    passed = 0
    for (entry, digest), (index, status, payload, size) in zip(batch, verdicts, strict=True):
        if index != entry.index:
            raise RunIntegrityError(f"integrity error: verdicts out of order ({index} for {entry.index})",
                                    subject=digest)
        if status == OK:
            sink.mark_done(index, digest, payload, size)
            passed += 1
        elif status in (MISSING, CORRUPT):
            sink.state[index] = REGENERATE
            sink.digests[32 * index:32 * index + 32] = bytes.fromhex(digest)
        else:
            raise RunIntegrityError(
                f"integrity error: journaled episode {index}: {payload.decode(errors='replace')} (store "
                f"{store_name(sink.store)}); nothing was repaired", subject=digest)
    return passed


__all__ = ["Verifier", "adopt_artifact", "ensure_stored", "verify_journaled"]
