"""Running with the content-addressed store: records stored once, completions journaled.

Each finished episode costs one record object (written once, keyed by its
SHA-256, which is the artifact's ``record_digest``) and one small journal
entry ``{"index", "digest"}``. Entries are written in batches (at most
:data:`JOURNAL_BATCH` episodes or :data:`JOURNAL_SECONDS` apart, see
:meth:`StoreSink.flush_journal`), each batch durable in one write: one fsync
on a local store, one request and segment object on S3. The journal starts with a header (policy
spec, EMBERBench version, start time; :mod:`emberbench.evaluation.run_info`) and the
run's provenance lives in a run-info object under ``runs/<journal name>``.

**Resume authenticates everything it keeps.** An artifact already at the
output is loaded and verified completely (a file that fails is refused and
left untouched) and cross-checked against the journal. Every other journaled
episode is read back from the store, checked and replayed
(:mod:`emberbench.evaluation.resume_auth`, on Ray workers when the run uses Ray). A
record that is missing or corrupt is played again and must reproduce the
journaled digest; anything else that fails stops the run with
:class:`~emberbench.errors.RunIntegrityError`. Nothing is repaired in place.

**Bytes written stay linear.** The artifact is assembled by streaming the
stored canonical record bytes in manifest order (records this process stored
in this run come from a local, digest-checked copy,
:mod:`emberbench.evaluation.record_spool`; the others are read from the store); it is
written when the run starts (if there is nothing to resume), at checkpoints, and at the end. A
time checkpoint is skipped when it would take the checkpoints of the run past
:data:`CHECKPOINT_BUDGET` of the projected final artifact (the journal already
makes every finished episode durable). Once complete, the artifact is also
stored as an object under ``results/<journal name>`` (streamed from the file
just written: neither copy is ever whole in memory) and the journal is
finished.

This module is imported only when a store is used, so the core does not
import ``store`` at module level.
"""

from __future__ import annotations

import hashlib
import math
import time
import zlib
from array import array
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..io.atomic import atomic_write_bytes
from ..errors import OutputLockedError, ResumeError, RunIntegrityError, StoreUsageError
from ..results.manifest import EvaluationManifest
from .record_spool import RecordSpool
from ..results.artifact import artifact_chunks, episode_chunk
from .run_info import JournalHeader, RunInfo, is_header_entry, software_versions, this_host, this_user, utc_now
from .liveness import Heartbeat, store_time
from .run_info import Nodes, node_counts, normalize_tags, write_run_info
from .output import output_exists
from .run_sidecar import new_sidecar, output_sidecar, write_sidecar
from .store_adopt import DONE, REGENERATE, adopt_artifact, verify_journaled
from .store_names import result_ref_name, store_name

CHECKPOINT_BUDGET = 0.25
"""Time checkpoints of one run together write at most this fraction of the projected final artifact."""
JOURNAL_BATCH = 64
JOURNAL_SECONDS = 1.0
"""Episode entries wait for at most JOURNAL_BATCH episodes or JOURNAL_SECONDS, then go in one journal write (one
fsync on a local store, one request on S3): an fsync per episode held a local-store coordinator to about a thousand
episodes per second, a third of what it takes in with batches (docs/cluster.md, "The coordinator's ceiling"). A
run's first episode is written at once, so a run that is killed again and again still makes progress."""

def _journal_failure(name: str, store: Any, exc: Exception) -> RunIntegrityError:
    return RunIntegrityError(f"integrity error: the run journal {name} in store {store_name(store)} cannot be read: {exc}; "
                             "nothing was repaired (`emberbench store fsck --repair` rebuilds it from the run's stored "
                             f"result, `emberbench store rm-run {name}` removes the run)", subject=name)


def check_journal_identity(store: Any, name: str, entries: tuple[Any, ...], finished: bool, *, spec: str,
                           model_id: str, resume: bool) -> JournalHeader | None:
    """The header of run journal ``name`` (None for a new, empty journal), checked against this run.

    Raises:
        ResumeError: the journal records no policy (an older EMBERBench), another policy spec, or
            holds episodes while ``resume`` is False.
        RunIntegrityError: its header cannot be read.
    """
    from ..errors import RunInfoError

    if not entries and not finished:
        return None
    if not is_header_entry(entries[0].data if entries else {}):
        raise ResumeError(
            f"the run journal {name} does not record its policy (written by an older EMBERBench); "
            f"remove the run with `emberbench store rm-run {name} --apply` and run again")
    try:
        header = JournalHeader.from_dict(entries[0].data)
    except RunInfoError as exc:
        raise _journal_failure(name, store, exc) from None
    episodes = len(entries) - 1
    if not resume and (episodes or finished):
        raise ResumeError(
            f"the store already holds run {name} of model {model_id!r} on this manifest "
            f"({episodes} episodes, policy {header.policy!r}, started {header.started}); --no-resume never "
            f"reuses journaled episodes: use another --model-id, or remove the run with "
            f"`emberbench store rm-run {name} --apply`")
    if header.policy != spec:
        raise ResumeError(
            f"run {name} (model {model_id!r}) was started with policy {header.policy!r}; this run "
            f"uses policy {spec!r}; use another --model-id, or remove the run with "
            f"`emberbench store rm-run {name} --apply`")
    return header


def check_journal_before_start(store: Any, manifest: EvaluationManifest, model_id: str, spec: str, *,
                               resume: bool) -> int:
    """Check the run's journal, if any, against this run without taking its lock; return its episode count.

    For a check before anything slow starts (Ray): a journal that cannot be
    read here is left to the run itself, which reports it in full.

    Raises:
        ResumeError: as :func:`check_journal_identity`.
    """
    from emberbench.store import StoreError, journal_name

    name = journal_name(manifest.hash, model_id)
    try:
        state = store.read_journal(name)
    except StoreError:
        return 0
    check_journal_identity(store, name, state.entries, state.finished, spec=spec, model_id=model_id, resume=resume)
    return max(0, len(state.entries) - 1)


class StoreSink:
    """The coordinator's sink when a store is used (see the module docstring).

    Args:
        store: the object store.
        manifest, model_id, out, resume, suite: as for ``run_evaluation``.
        spec: the policy spec, recorded in (or checked against) the journal header.
        every, seconds: checkpoint every N episodes (always), every T seconds (within the budget).
        authenticator: replays the records of an artifact at ``out`` (``results.Authenticator``).
        verifier: ``verifier(items) -> verdicts`` for journaled records (:func:`resume_auth.verify_stored`).
        nodes: the episodes played now per machine, kept up to date by the
            caller; each run-info update records them (or, while it is
            empty, keeps the nodes the stored run-info names).
    """

    def __init__(self, store: Any, manifest: EvaluationManifest, model_id: str, out: Path, *, resume: bool,
                 spec: str, every: int, seconds: float, suite: Any, authenticator: Any, verifier: Any,
                 nodes: Mapping[str, int] | None = None, tags: Sequence[str] = ()) -> None:
        from emberbench.store import journal_name

        self.store, self.manifest, self.model_id, self.out = store, manifest, model_id, out
        self.spec, self.every, self.seconds = spec, every, seconds
        self.nodes: Mapping[str, int] = {} if nodes is None else nodes
        self.tags = normalize_tags(list(tags))
        self.name = journal_name(manifest.hash, model_id)
        n = len(manifest.episodes)
        self.state = bytearray(n)  # NOT_DONE, DONE or REGENERATE per manifest index
        self.digests = bytearray(32 * n)
        self.metrics: list[bytes | None] = [None] * n  # packed (see _pack): about 200 bytes each
        self.sizes = array("Q", bytes(8 * n))  # episode chunk lengths, for the checkpoint budget
        self._zdict: bytes | None = None
        self.count = 0
        self.digest = ""
        self.from_artifact = self.from_journal = self.regenerated = 0
        self.in_file = -1  # episodes in the artifact at ``out`` (-1: no file written or loaded)
        exists = output_exists(out, resume)
        sidecar = output_sidecar(out, exists, manifest, model_id, spec)
        self.spool = RecordSpool(n)
        self.journal = self._open_journal()
        try:
            entries = self.journal.entries
            self.header = self._check_identity(entries, resume)
            journaled = self._load_entries(entries)
            imported: list[tuple[dict[str, Any], list[str]]] = []
            if exists:
                self.from_artifact, imported = adopt_artifact(self, suite, authenticator, journaled,
                                                              policy_known=sidecar is not None)
            if sidecar is None:  # a new output, or one whose every episode the journal vouches for
                write_sidecar(out, new_sidecar(spec, model_id, manifest.hash))
            # The manifest is put on every start: that restores it if gc or fsck took it.
            manifest_key = store.put(manifest.canonical_bytes())
            if self.header is None:
                self.header = JournalHeader(spec, software_versions()["emberbench_version"], utc_now())
                self.journal.append(self.header.to_dict(), keys=[manifest_key])
            if imported:
                self.journal.append_many(imported)
            self.from_journal = verify_journaled(self, verifier, journaled)
            self.usage = self._usage_before()
            self.info = self._new_info()
            write_run_info(store, self.info)
            # From here on the run beats: its run-info says it lives, its leases stay fresh (liveness.py).
            self.heartbeat = Heartbeat(store, self.name, self.journal).start()
        except BaseException:
            self._drop_journal()
            self.spool.close()
            raise
        self._pending: list[tuple[dict[str, Any], list[str]]] = []  # journal entries not yet written
        self._batch = JOURNAL_BATCH
        self._flushed = -math.inf  # the first episode is journaled at once: a run killed early still advances
        self._spent = 0
        self._header_size = -1
        self._last = time.monotonic()
        self._since = 0
        if not exists and self.count == 0:
            self._write_artifact()

    # -- opening ------------------------------------------------------------------

    def _drop_journal(self) -> None:
        """Let go of the journal after a failed start; one this start left empty is deleted.

        (A refused artifact on a new store would otherwise leave an empty run
        behind.) A failure to delete it never hides the start's own error.
        """
        from emberbench.store import StoreError

        try:
            self.journal.discard_if_empty()
        except StoreError:
            self.journal.close()

    def _open_journal(self) -> Any:
        from emberbench.store import JournalError, LockError

        try:
            return self.store.open_journal(self.name, create=True)
        except LockError:
            raise OutputLockedError(
                f"another process is running (manifest {self.manifest.hash}, model {self.model_id!r}) on store "
                f"{store_name(self.store)}: its run journal {self.name} is locked", path=str(self.out)) from None
        except JournalError as exc:
            raise _journal_failure(self.name, self.store, exc) from None

    def _check_identity(self, entries: tuple[Any, ...], resume: bool) -> JournalHeader | None:
        """The journal's header (None for a new journal); refuse another policy, or reuse under --no-resume."""
        return check_journal_identity(self.store, self.name, entries, self.journal.finished, spec=self.spec,
                                      model_id=self.model_id, resume=resume)

    def _load_entries(self, entries: tuple[Any, ...]) -> dict[int, str]:
        """Journaled episodes as ``{index: digest}`` (not yet trusted), after the checks fsck and audit make too.

        A ref of the run that holds no valid key, an entry that is not an
        episode of this manifest, or a finished journal that lacks an episode
        is an integrity error naming the object (:mod:`emberbench.evaluation.run_damage`).
        """
        from .run_damage import RunDamage, journaled_episodes, ref_damage

        damage = ref_damage(self.store, self.name)
        if damage is None:
            try:
                return journaled_episodes(entries, len(self.manifest.episodes), finished=self.journal.finished)
            except ValueError as exc:
                damage = RunDamage(self.name, f"journal {self.name}", str(exc))
        raise damage.error(store_name(self.store))

    def _new_info(self) -> RunInfo:
        m = self.manifest
        return RunInfo(
            run=self.name, model_id=self.model_id, policy=self.spec, manifest_hash=m.hash, suite_id=m.suite_id,
            suite_version=m.suite_version, suite_hash=m.suite_hash, **software_versions(), host=this_host(),
            user=this_user(), started=self.header.started, ended=None, episodes_done=self.count,
            episodes_scheduled=len(m.episodes), state="running", result=self._finished_result(),
            model_usage=self.usage,
            tags=self._tags(),
            heartbeat=store_time(self.store),
        )

    def _nodes(self) -> Nodes | None:
        """The run-info's ``nodes``: None while nothing was played now (the stored ones are then kept)."""
        return node_counts(self.nodes) or None

    def _tags(self) -> tuple[str, ...]:
        """This start's tags and those an earlier start of the run recorded (a resume keeps them)."""
        from emberbench.store import StoreError, StoreIOError

        from ..errors import RunInfoError
        from .run_info import read_run_info

        try:
            earlier = read_run_info(self.store, self.name)
        except StoreIOError:
            raise
        except (RunInfoError, StoreError):
            earlier = None  # unreadable: it is rewritten below; its tags are lost with it
        old = () if earlier is None or earlier.run != self.name else earlier.tags
        return normalize_tags([*old, *self.tags])

    def _usage_before(self) -> Any:
        """The execution accounting earlier starts of this run recorded (None if none, or unreadable)."""
        from emberbench.store import StoreError

        from ..errors import RunInfoError
        from .run_info import read_run_info

        try:
            before = read_run_info(self.store, self.name)
        except (RunInfoError, StoreError):
            return None
        return None if before is None else before.model_usage

    def _finished_result(self) -> str | None:
        finish = self.journal.state().finish
        result = None if finish is None else finish.data.get("result")
        return result if isinstance(result, str) else None

    # -- the run ------------------------------------------------------------------

    def has(self, index: int) -> bool:
        """Whether episode ``index`` is done (an episode to regenerate is not)."""
        return self.state[index] == DONE

    def expected_digest(self, index: int) -> str | None:
        """The journaled digest an episode must reproduce, if it is being regenerated."""
        return self.digests[32 * index:32 * index + 32].hex() if self.state[index] == REGENERATE else None

    def mark_done(self, index: int, digest: str, metrics: bytes, record_size: int) -> None:
        """Count episode ``index`` as done with this (authenticated) record and metrics."""
        self.digests[32 * index:32 * index + 32] = bytes.fromhex(digest)
        self.metrics[index] = self._pack(metrics)
        entry = self.manifest.episodes[index]
        self.sizes[index] = len(episode_chunk(entry, b"", digest, metrics)) + record_size
        if self.state[index] != DONE:
            self.count += 1
        self.state[index] = DONE

    def _pack(self, metrics: bytes) -> bytes:
        """Metrics JSON compressed against the run's first metrics (episodes share their keys): ~5x smaller.

        The metrics of every done episode are kept for the artifact; packed,
        they cost about 200 bytes an episode instead of 1 KB.
        """
        if self._zdict is None:
            self._zdict = metrics
        packer = zlib.compressobj(6, zlib.DEFLATED, 15, 8, zlib.Z_DEFAULT_STRATEGY, self._zdict)
        return packer.compress(metrics) + packer.flush()

    def _unpack(self, packed: bytes) -> bytes:
        unpacker = zlib.decompressobj(15, self._zdict)
        return unpacker.decompress(packed) + unpacker.flush()

    def add(self, outcome: Any) -> None:
        """Take a finished episode from the executor: store, journal (or check against the journal), checkpoint."""
        index, digest = outcome.index, outcome.record_digest
        if outcome.usage is not None:  # execution accounting: into the run-info, never into the journal
            self.usage = outcome.usage if self.usage is None else self.usage + outcome.usage
        expected = self.expected_digest(index)
        if expected is not None and digest != expected:
            raise RunIntegrityError(
                f"integrity error: episode {index} was played again because its record {expected} is missing or "
                f"corrupt in store {store_name(self.store)}, but it now gives record {digest}; the policy does not "
                "reproduce its run (not deterministic?) or the journal was changed; nothing was repaired",
                subject=expected)
        record = outcome.record_bytes if outcome.record_bytes is not None else outcome.stored_record
        if outcome.record_bytes is not None:
            self.store.put(outcome.record_bytes, key=digest)
        if record is not None:
            size = len(record)
            self.spool.add(index, digest, record)  # put with key=digest: the store checked it hashes to digest
        elif outcome.record_size is not None:  # put by a worker; the executor checked its node writes here
            size = outcome.record_size
        elif not self.store.has(digest):
            raise StoreUsageError(f"episode {index}: record {digest} is not in the store")
        else:
            size = self.store.size(digest)
        if expected is None:
            self._pending.append(({"index": index, "digest": digest}, [digest]))
        else:
            self.regenerated += 1
        self.mark_done(index, digest, outcome.metrics_bytes, size)
        if len(self._pending) >= self._batch or time.monotonic() - self._flushed >= JOURNAL_SECONDS:
            self.flush_journal()
        self._since += 1
        self._checkpoint_if_due()

    def flush_journal(self) -> None:
        """Write the pending episode entries to the journal in one durable append.

        Runs before anything else says an episode is done (an artifact
        checkpoint, a run-info update, the final result), so those never get
        ahead of the journal. Between flushes, a crash loses at most the
        pending entries: their records are already stored, and a resume
        plays those episodes again (same records, same keys).
        """
        if self._pending:
            self.journal.append_many(self._pending)
            self._pending = []
        self._flushed = time.monotonic()

    def _checkpoint_if_due(self) -> None:
        if self.every > 0 and self._since >= self.every:
            self._spent += self._write_artifact()
            return
        if self.seconds <= 0 or time.monotonic() - self._last < self.seconds:
            return
        self._last = time.monotonic()
        self.flush_journal()
        write_run_info(self.store, self.info.replace(episodes_done=self.count, nodes=self._nodes(),
                                                     model_usage=self.usage, heartbeat=store_time(self.store)))
        size = self._artifact_size()
        projected = size + (len(self.manifest.episodes) - self.count) * (size / max(1, self.count))
        if self._spent + size <= CHECKPOINT_BUDGET * projected:
            self._spent += self._write_artifact()

    def _artifact_size(self) -> int:
        if self._header_size < 0:
            self._header_size = sum(map(len, artifact_chunks(self.manifest, self.model_id, ())))
        return self._header_size + sum(self.sizes) + max(0, self.count - 1)

    # -- the artifact ---------------------------------------------------------------

    def _chunks(self) -> Iterator[bytes]:
        from emberbench.store import IntegrityError, ObjectNotFoundError

        spooled = self.spool
        done = (i for i, state in enumerate(self.state) if state == DONE and not spooled.has(i))
        # Reads run a few ahead (S3 round trips overlap); each is checked when its turn comes.
        records = self.store.get_many(self.digests[32 * i:32 * i + 32].hex() for i in done)
        for index, state in enumerate(self.state):
            if state != DONE:
                continue
            digest = self.digests[32 * index:32 * index + 32].hex()
            try:
                if spooled.has(index):
                    # Checked against the digest; a bad copy is not used, the store is read instead.
                    record = spooled.get(index, digest)
                    if record is None:
                        record = self.store.get(digest)
                else:
                    record = next(records)
            except (IntegrityError, ObjectNotFoundError) as exc:
                raise RunIntegrityError(f"integrity error: while writing {self.out}: {exc} (store {store_name(self.store)})"
                                        f"; run the same command again to regenerate it", subject=digest) from None
            yield episode_chunk(self.manifest.episodes[index], record, digest, self._unpack(self.metrics[index] or b""))

    def _write_artifact(self) -> int:
        """Write the artifact atomically (after the journal); return its size."""
        self.flush_journal()
        sha = hashlib.sha256()
        size = 0

        def stream() -> Iterator[bytes]:
            nonlocal size
            for piece in artifact_chunks(self.manifest, self.model_id, self._chunks()):
                sha.update(piece)
                size += len(piece)
                yield piece

        atomic_write_bytes(self.out, stream())
        self.digest = sha.hexdigest()
        self.in_file = self.count
        self._since = 0
        return size

    def close(self, error: BaseException | None = None) -> None:
        """Write the final artifact (if it changed); finish the run when complete; record the run's state.

        When the run is already stopping with ``error``, a store failure here
        (the store that failed it still unreachable) is not raised: the run's
        own error, which names the store and the cause, is the one reported.
        """
        from emberbench.store import StoreError

        self.heartbeat.stop()
        try:
            self._close(error)
        except StoreError:
            if error is None:
                raise
        finally:
            self.spool.close()
            self.journal.close()

    def _close(self, error: BaseException | None) -> None:
        self.flush_journal()
        complete = self.count == len(self.manifest.episodes)
        result = self._finished_result()
        if not isinstance(error, RunIntegrityError):  # after a failed check, leave every file as it is
            if self.in_file != self.count or not self.out.exists():
                self._write_artifact()
            if complete:
                result = self._store_result()
        if complete and error is None:
            state = "complete"
        else:
            # A stop signal (SIGINT's KeyboardInterrupt, SIGTERM's exception, an exit) is not a failure:
            # every such stop raises a BaseException that is not an Exception.
            state = "interrupted" if error is not None and not isinstance(error, Exception) else "failed"
        self.info = self.info.replace(state=state, ended=utc_now(), episodes_done=self.count, result=result,
                                      nodes=self._nodes(), model_usage=self.usage, heartbeat=store_time(self.store))
        write_run_info(self.store, self.info)

    def _store_result(self) -> str:
        """Store the complete artifact under ``results/<name>`` and finish the journal (idempotent)."""
        from emberbench.store import Codec, IntegrityError, KeyMismatchError, ObjectNotFoundError, RefError

        finished = self._finished_result()
        if finished is not None and finished != self.digest:
            raise RunIntegrityError(
                f"integrity error: {self.out} assembles to {self.digest}, but run {self.name} finished with result "
                f"{finished}; nothing was repaired", subject=finished)
        intact = finished is not None
        try:
            if intact:
                self.store.check(finished, verify_data=True)  # in pieces, never whole
        except (IntegrityError, ObjectNotFoundError):
            intact = False
        if not intact:
            try:
                self._put_artifact(Codec.ZLIB)
            except KeyMismatchError as exc:
                raise RunIntegrityError(f"integrity error: {self.out} changed while it was being stored "
                                        f"(read {exc.actual}, wrote {self.digest})", subject=self.digest) from None
        ref = result_ref_name(self.manifest.hash, self.model_id)
        try:
            current = self.store.refs.get(ref)
        except RefError:
            current = None
        if current != self.digest:
            self.store.refs.set(ref, self.digest)
        if finished is None:
            self.journal.finish({"result": self.digest}, keys=[self.digest])
        return self.digest

    def _put_artifact(self, codec: Any) -> str:
        """Store the artifact file just written as one object, read in pieces (never whole in memory)."""
        return self.store.put_file(self.out, key=self.digest, codec=codec)


def open_store(locator: str | Path, *, create: bool = True) -> Any:
    """Open (or create) the object store at ``locator``: a folder, or ``s3://bucket/prefix[?endpoint=URL]``."""
    from emberbench.store import StoreError
    from emberbench.store import open_store as open_any

    try:
        return open_any(locator, create=create)
    except StoreError as exc:
        raise StoreUsageError(f"cannot open store: {exc}") from None


__all__ = ["CHECKPOINT_BUDGET", "StoreSink", "open_store", "result_ref_name"]
