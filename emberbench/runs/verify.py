"""``runs verify``: replay-authenticate a run from the store and record the verdict in its run-info.

What is checked depends on what the run has stored:

* **A complete result** (the object its ``results/`` ref names): the artifact
  is copied out of the store into a private temporary file (each piece proven
  against its checksum and SHA-256 key first) and verified as a stream exactly
  as ``emberbench verify`` verifies a file
  (:func:`emberbench.results.stream.verify_artifact`): every check, every
  record replayed once, memory independent of the number of episodes. It must also be the run it is stored as (same manifest hash
  and model id as the run-info, same digest as its key).
* **No result yet** (a run that is running, failed or was interrupted): every
  journaled record is read back (frame, checksum, SHA-256), must be canonical
  JSON of a record of its manifest entry, and is replayed. All good, the
  verdict is ``partial`` (fewer than the scheduled episodes are proven) or
  ``ok`` when every scheduled episode is.

Replay goes through an :data:`~emberbench.results.artifact.Authenticator`, so the CLI
hands in a Ray one for parallel replay and the verdict is the same.

The run's attestation, if it has one, is verified too
(:func:`emberbench.provenance.check_run_attestation`, against the keyring
when one is given): one that fails makes the verdict ``failed``; the
verdict's ``signature`` line says who signed, or that the run is unsigned.

The verdict (``ok``, ``partial``, ``failed``) is recorded with
:func:`emberbench.evaluation.run_info.record_verification` (compare-and-swap), with who
checked and when. A store that cannot be read at all (an I/O error) is not a
verdict on the run: it is raised and nothing is recorded.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import EmberError, StoreUsageError
from ..results.artifact import Authenticator, authenticate_all
from ..evaluation.run_info import RunInfo, Verification, record_verification, this_host, this_user, utc_now

BATCH = 64
"""Journaled records replayed per authenticator call (memory holds one batch of records)."""


@dataclass(frozen=True, slots=True)
class RunVerdict:
    """The outcome of ``runs verify``.

    Attributes:
        run: the run's journal name.
        verdict: ``ok``, ``partial`` or ``failed``.
        detail: one line: what was proven, or the first failure.
        recorded: the run-info as updated with this verification.
        signature: one line: who signed the run's attestation, ``unsigned``, or why it failed.
    """

    run: str
    verdict: str
    detail: str
    recorded: RunInfo
    signature: str = ""


def verify_run(store: Any, short_id: str, suite: Any, *, authenticator: Authenticator = authenticate_all,
               keyring: Any = None, record: bool = True) -> RunVerdict:
    """Replay-authenticate the run ``short_id`` names, check its attestation, and record the verdict.

    With ``record=False`` (a read-only store) nothing is written: the verdict
    is returned, and ``recorded`` is the run-info as it would have been recorded.

    ``keyring`` (a :class:`~emberbench.provenance.Keyring`) is what the
    attestation's signature is checked against; without one, everything but
    the signature is checked.

    Raises:
        StoreUsageError: no such run, or the run has no readable run-info
            (there is nothing to record a verdict in).
        StoreIOError: the store could not be read (nothing recorded).
    """
    from .catalog import read_row, resolve_run

    run = resolve_run(store, short_id)
    row = read_row(store, run)
    if row.info is None:
        raise StoreUsageError(f"run {row.hex_id[:8]} cannot be verified: {row.damage}")
    verdict, detail = _judge(store, row.info, suite, authenticator)
    verdict, detail, signature = _signature(store, run, keyring, verdict, detail)
    check = Verification(at=utc_now(), by=f"{this_user()}@{this_host()}"[:512], verdict=verdict,
                         detail=f"{detail}; {signature}"[:4096])
    recorded = record_verification(store, run, check) if record else row.info.replace(verification=check)
    return RunVerdict(run, verdict, detail, recorded, signature)


def _signature(store: Any, run: str, keyring: Any, verdict: str, detail: str) -> tuple[str, str, str]:
    """Check the run's attestation; a failed one fails the verdict (a replay failure stays the detail)."""
    from ..errors import AttestationError
    from ..provenance import check_run_attestation

    try:
        # The replay has just proven the result object against its key.
        return verdict, detail, check_run_attestation(store, run, keyring, check_content=False).describe()
    except AttestationError as exc:
        line = " ".join(str(exc).split())
        if verdict != "failed":
            verdict, detail = "failed", f"attestation: {line}"
        return verdict, detail, f"attestation FAILED: {line}"


def _judge(store: Any, info: RunInfo, suite: Any, authenticator: Authenticator) -> tuple[str, str]:
    from emberbench.store import IntegrityError, ObjectNotFoundError, RefError

    from .catalog import result_key

    try:
        try:
            key: str | None = result_key(store, info.run)
        except StoreUsageError:
            key = None
        if key is not None:
            return _judge_result(store, info, key, suite, authenticator)
        return _judge_journal(store, info, suite, authenticator)
    except (EmberError, IntegrityError, ObjectNotFoundError, RefError) as exc:
        return "failed", " ".join(str(exc).split())


def _judge_result(store: Any, info: RunInfo, key: str, suite: Any, authenticator: Authenticator) -> tuple[str, str]:
    from ..errors import RunIntegrityError
    from ..results.stream import verify_artifact

    where = f"stored result {key}"
    with tempfile.TemporaryDirectory(prefix="emberbench-verify-") as tmp:
        path = Path(tmp) / "result.json"
        store.get_to_file(key, path, verify_data=True)
        result = verify_artifact(path, suite, replayer=authenticator, where=where)
    if result.digest != key:  # get_to_file proved the bytes; this guards the reader's own digest
        raise RunIntegrityError(f"{where} reads with digest {result.digest}", subject=key)
    if result.manifest.hash != info.manifest_hash or result.model_id != info.model_id:
        raise RunIntegrityError(f"{where} is model {result.model_id!r} on manifest {result.manifest.hash}, not this "
                                f"run's model {info.model_id!r} on manifest {info.manifest_hash}", subject=key)
    done, scheduled = len(result.indices), len(result.manifest.episodes)
    verdict = "ok" if done == scheduled else "partial"
    return verdict, f"stored result {key}: {done}/{scheduled} episodes authenticated by replay"


def _judge_journal(store: Any, info: RunInfo, suite: Any, authenticator: Authenticator) -> tuple[str, str]:
    manifest, items = _journaled(store, info)
    if manifest.hash != info.manifest_hash:
        raise StoreUsageError(f"the journal's manifest {manifest.hash} is not the run-info's {info.manifest_hash}")
    proven = 0
    for batch in _batches(items, BATCH):
        _replay_batch(store, suite, batch, authenticator)
        proven += len(batch)
    scheduled = len(manifest.episodes)
    verdict = "ok" if proven == scheduled else "partial"
    return verdict, (f"no stored result; {proven}/{scheduled} journaled episodes authenticated by replay "
                     f"(run {info.state})")


def _journaled(store: Any, info: RunInfo) -> tuple[Any, list[tuple[Any, str]]]:
    """The run's manifest (from its journal header) and its journaled ``(manifest entry, digest)`` pairs."""
    from ..io.input_policy import parse_json
    from ..results.manifest import manifest_from_dict
    from ..evaluation.run_info import is_header_entry

    state = store.read_journal(info.run)
    entries = state.entries
    if not entries or not is_header_entry(entries[0].data) or len(entries[0].keys) != 1:
        raise StoreUsageError(f"the journal of run {info.run} does not record its manifest (an older EMBERBench)")
    key = entries[0].keys[0]
    manifest = manifest_from_dict(parse_json(store.get(key, verify_data=True), where=f"manifest {key}"),
                                  where=f"manifest {key}")
    items: dict[int, tuple[Any, str]] = {}
    for entry in entries[1:]:
        index, digest = entry.data.get("index"), entry.data.get("digest")
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(manifest.episodes) \
                or entry.keys != (digest,):
            raise StoreUsageError(f"the journal of run {info.run} holds an entry that is not an episode of its "
                                  "manifest")
        items[index] = (manifest.episodes[index], digest)
    return manifest, [items[i] for i in sorted(items)]


def _batches(items: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _replay_batch(store: Any, suite: Any, batch: list[tuple[Any, str]], authenticator: Authenticator) -> None:
    """Read each record back (proven against its key), require canonical form, replay, match its entry."""
    from ..io.canonical import canonical_bytes, parse_json_strict
    from ..errors import RecordAuthenticationError
    from ..evaluation.resume_auth import check_record_entry

    records = []
    for entry, digest in batch:
        raw = store.get(digest, verify_data=True)
        where = f"episode {entry.index}: record {digest}"
        record = parse_json_strict(raw, where=where)
        if canonical_bytes(record) != raw:
            raise RecordAuthenticationError(f"{where}: not in canonical JSON form", field="text")
        records.append(record)
    authenticator(records, suite)
    for record, (entry, digest) in zip(records, batch):
        check_record_entry(record, entry, f"episode {entry.index}: record {digest}")


__all__ = ["BATCH", "RunVerdict", "verify_run"]
