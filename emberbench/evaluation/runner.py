"""The evaluation runner: one coordinator, pluggable executors.

The coordinator owns everything that decides *what is written*: the manifest
check, resume, the order of episodes in the artifact, and atomic saves. An
executor only decides *where episodes run* (in this process, or on Ray
workers) and yields finished episodes in any order. So every executor writes
the same bytes.

A run holds an exclusive lock on its output path for its whole life
(:mod:`emberbench.evaluation.output_lock`), with or without a store, whatever the
executor: two runs never write one artifact. Without a store the artifact is
rewritten atomically after every completed episode, as paired-evaluation
requires; with a store, records go into the content-addressed store once, a
journal entry marks each completed episode, and the artifact is assembled at
checkpoints and at the end (:mod:`emberbench.evaluation.store_runner`). Whatever a run
resumes from is authenticated completely first.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..io.atomic import atomic_write_bytes
from ..io.canonical import sha256_hex
from ..errors import ResultError
from ..results.manifest import EvaluationManifest, ManifestEntry, check_manifest
from .drive import ONE_AT_A_TIME, DriveOptions, play_tasks
from .outcome import EpisodeOutcome
from .output import check_resumable, output_exists
from .output_lock import OutputLock
from .run_sidecar import output_sidecar
from ..policies.context import PolicyContext
from ..policies.spec import FreshPolicies, PolicyFactory, policy_spec_of, resolve_policy
from .record_puts import PUT_THREADS, record_putter
from ..results.artifact import Authenticator, artifact_chunks, authenticate_all, episode_chunk
from ..results.model_id import validate_model_id
from ..sim.suite import Suite

Progress = Callable[[int, int], None]
ExecutorFor = Callable[[Sequence[ManifestEntry]], AbstractContextManager["Executor"]]
"""Given the episodes left to play, open the executor that plays them (see ``executor_for``)."""


class Executor(Protocol):
    """Where episodes run. ``run`` yields one outcome per task, in any order."""

    def run(self, tasks: Sequence[ManifestEntry]) -> Iterator[EpisodeOutcome]: ...


def play_to_outcome(suite: Suite, entry: ManifestEntry, factory: PolicyFactory) -> tuple[EpisodeOutcome, bytes]:
    """Play one scheduled episode with a fresh policy; return its outcome and record bytes."""
    (played,) = list(play_tasks(suite, [entry], factory))
    return played


class InProcessExecutor:
    """Runs episodes in this process, in the order given (one at a time, batched or concurrently).

    Args:
        suite: resolves scenarios.
        policy: a policy spec string or a factory (called with no arguments
            once per episode, or its batch form once per batch; an object it
            returned before is refused).
        store: optional object store; when given, each record is put there
            and the outcome carries only its digest. A spec string is
            resolved with it (``PolicyContext(store=store)``: a served
            model's response cache).
        spec: names the policy in messages (default: derived from ``policy``).
        drive: how the policy is driven (:class:`~emberbench.evaluation.drive.DriveOptions`:
            a batch size or a concurrency); the records never depend on it.
    """

    def __init__(self, suite: Suite, policy: str | PolicyFactory, *, store: Any = None,
                 agent_timeout: float | None = None, spec: str | None = None,
                 drive: DriveOptions = ONE_AT_A_TIME) -> None:
        self.suite = suite
        kwargs: dict[str, Any] = {"context": PolicyContext(store=store)}
        if agent_timeout is not None:
            kwargs["agent_timeout"] = agent_timeout
        factory = resolve_policy(policy, **kwargs) if isinstance(policy, str) else policy
        self.factory = FreshPolicies(factory, spec or policy_spec_of(policy))
        self.store = store
        self.drive = drive

    def run(self, tasks: Sequence[ManifestEntry]) -> Iterator[EpisodeOutcome]:
        played = play_tasks(self.suite, tasks, self.factory, self.drive)
        if self.store is None:
            for outcome, _ in played:
                yield outcome
            return
        yield from stored_behind(self.store, played, len(tasks))

    def authenticate_records(self, records: list[dict[str, Any]], suite: Suite) -> list[Any]:
        """Replay records in process (the result loader's authenticator)."""
        return authenticate_all(records, suite)

    def verify_stored(self, items: Sequence[Any]) -> list[Any] | None:
        """Check and replay journaled records in process (see :mod:`emberbench.evaluation.resume_auth`); None without a store."""
        from .resume_auth import verify_stored

        return None if self.store is None else verify_stored(self.store, self.suite, items)


PUTS_AHEAD = PUT_THREADS
"""Record puts a store-backed in-process run keeps in flight while the next episodes play (one per put thread)."""
PUT_BYTES_AHEAD = 64 << 20
"""Record bytes those puts may hold at once (a bound on the memory they take)."""


def stored_behind(store: Any, played: Iterator[tuple[EpisodeOutcome, bytes]],
                  episodes: int = 0) -> Iterator[EpisodeOutcome]:
    """Put each played record into ``store`` behind play; yield its outcome once the record is stored.

    The outcome carries the record as ``stored_record`` (not ``record_bytes``:
    it is already stored).

    The next episodes play while earlier records travel (an S3 put is a round
    trip), with at most :data:`PUTS_AHEAD` puts and :data:`PUT_BYTES_AHEAD`
    bytes in flight, on threads or, for a run of ``episodes`` on a remote
    store, in a helper process (:mod:`emberbench.evaluation.record_puts`). Outcomes come
    in play order, each only after its record is durable, so nothing
    references a record before it is stored. When playing raises an
    Exception (a policy's error), the episodes played before it are still
    stored and yielded, then the error propagates.
    """
    import collections

    pending: collections.deque[tuple[EpisodeOutcome, Any, bytes]] = collections.deque()
    in_flight = 0
    error: Exception | None = None
    with record_putter(store, episodes) as puts:

        def finish() -> EpisodeOutcome:
            nonlocal in_flight
            outcome, ticket, record = pending.popleft()
            puts.result(ticket)
            in_flight -= len(record)
            return EpisodeOutcome(outcome.index, outcome.record_digest, None, outcome.metrics_bytes, record,
                                  outcome.usage)

        while True:
            try:
                outcome, record = next(played)
            except StopIteration:
                break
            except Exception as exc:  # noqa: BLE001 - re-raised below, after the episodes before it
                error = exc
                break
            pending.append((outcome, puts.submit(record, outcome.record_digest), record))
            in_flight += len(record)
            while len(pending) > PUTS_AHEAD or in_flight > PUT_BYTES_AHEAD:
                yield finish()
        while pending:
            yield finish()
    if error is not None:
        raise error


@dataclass(frozen=True, slots=True)
class RunSummary:
    """What a run did.

    Attributes:
        output: the artifact written.
        scheduled, completed: episodes in the manifest, and in the artifact now.
        ran: episodes played now for the first time.
        resumed: episodes taken from earlier work (``from_artifact + from_journal``).
        result_digest: SHA-256 of the artifact as written.
        from_artifact: episodes taken from the artifact already at ``output`` (authenticated).
        from_journal: episodes taken from the store's run journal (read back and replayed).
        regenerated: journaled episodes played again because the store had lost their record.
        journal_started: when the run's journal was started (None without a store).
        nodes: the episodes played now (``ran + regenerated``) per machine, as
            ``((host name, episodes), ...)`` sorted by name.
        usage: what the policies of the episodes played now reported they cost
            (:class:`~emberbench.policies.served.usage.ModelUsage`, summed), or
            None when none reported any. Execution accounting, never in the artifact.
    """

    output: Path
    scheduled: int
    completed: int
    ran: int
    resumed: int
    result_digest: str
    from_artifact: int = 0
    from_journal: int = 0
    regenerated: int = 0
    journal_started: str | None = None
    usage: Any = None
    nodes: tuple[tuple[str, int], ...] = ()

    def describe_nodes(self) -> str:
        """The summary's line of where episodes were played now, e.g. ``nodes: w1 30 episodes, w2 30 episodes``."""
        played = ", ".join(f"{name} {count} episode{'' if count == 1 else 's'}" for name, count in self.nodes)
        return f"nodes: {played or 'no episode played now'}"

    def describe(self) -> str:
        """The one-line summary the CLI prints."""
        counts = f"{self.ran} run now, {self.resumed} resumed"
        if self.from_journal:
            sources = [f"{self.from_artifact} from {self.output}"] if self.from_artifact else []
            sources.append(f"{self.from_journal} from the store's run journal started {self.journal_started}")
            counts += ": " + " and ".join(sources)
        if self.regenerated:
            counts += f"; {self.regenerated} regenerated"
        return f"{self.output}: {self.completed}/{self.scheduled} episodes ({counts}); result digest {self.result_digest}"


def run_evaluation(
    manifest: EvaluationManifest,
    suite: Suite,
    policy: str | PolicyFactory,
    model_id: str,
    output_path: str | Path,
    *,
    resume: bool = True,
    executor: Executor | None = None,
    store: Any = None,
    progress: Progress | None = None,
    checkpoint_every: int = 0,
    checkpoint_seconds: float = 60.0,
    policy_spec: str | None = None,
    output_lock: OutputLock | None = None,
    executor_for: ExecutorFor | None = None,
    drive: DriveOptions = ONE_AT_A_TIME,
    tags: Sequence[str] = (),
) -> RunSummary:
    """Run every scheduled episode that the output lacks, holding the output for the whole run.

    Args:
        manifest: the evaluation manifest (checked against ``suite`` first).
        suite: the suite the manifest targets.
        policy: a policy spec string or a no-argument factory.
        model_id: the evaluator's label for this run.
        output_path: the artifact to write (and resume from).
        resume: if the artifact (or, with a store, the run's journal) exists,
            authenticate it completely and run only the missing episodes; if
            False, existing work is an error and is never reused.
        executor: where episodes run; in process by default.
        store: a :class:`store.Store`; with it records are stored once,
            completions are journaled with the run's identity, and the
            artifact is written at checkpoints instead of after every episode.
        progress: called as ``progress(done, total)`` after each episode.
        checkpoint_every: with a store, write the artifact every N episodes (0: off).
        checkpoint_seconds: with a store, update the run-info every T seconds
            and write the artifact then too, while the checkpoints stay within
            their byte budget (0: off). The artifact is always written at the end.
        policy_spec: the policy's spec when ``policy`` is a factory (recorded
            in the run's journal; default: derived from the factory).
        output_lock: an :class:`OutputLock` on ``output_path`` the caller
            already holds (a Ray run takes it before starting workers).
        executor_for: instead of ``executor``, called once resume has
            found the episodes left, with those episodes; the context manager
            it returns opens (and closes) the executor, so a run with nothing
            or little left need not start Ray
            (:func:`emberbench.evaluation.executor_choice.choose_executor`). Resumed
            work is then authenticated in this process.
        drive: how the default in-process executor drives the policy (a batch
            size or a concurrency, :class:`~emberbench.evaluation.drive.DriveOptions`);
            an executor given or opened is built with its own.
        tags: with a store, labels for the run's run-info (added to those an
            earlier start of the same run gave; see ``normalize_tags``).

    Returns:
        A :class:`RunSummary`.

    Raises:
        OutputLockedError: another run holds the output or the run's journal.
        ResumeError: existing work at the output or in the store cannot be
            resumed by this run (``resume`` is False, another manifest, model
            id or policy spec).
        ResultError, ManifestError: the existing artifact or the manifest fails a check.
        RunIntegrityError: a journaled record or the journal fails a check.
        Exception: a policy exception or invalid action stops the run; the
            artifact (and the journal) keep every episode completed before it.
    """
    validate_model_id(model_id)
    check_manifest(manifest, suite)
    out = Path(output_path)
    spec = policy_spec or policy_spec_of(policy)
    owned = output_lock is None
    lock = claim_output(out) if output_lock is None else output_lock
    try:
        if executor is None and executor_for is None:
            executor = InProcessExecutor(suite, policy, store=store, spec=spec, drive=drive)
        return _run(manifest, suite, model_id, out, executor, store, resume=resume, spec=spec, progress=progress,
                    every=checkpoint_every, seconds=checkpoint_seconds, executor_for=executor_for, tags=tags)
    finally:
        if owned:
            lock.release()


def claim_output(output_path: str | Path) -> OutputLock:
    """Take the exclusive lock of a run on ``output_path`` (its folder must exist).

    Raises:
        ResultError: the output folder does not exist.
        OutputLockedError: another run holds the output.
    """
    out = Path(output_path)
    if not out.parent.exists():
        raise ResultError(f"{out.parent}: output folder does not exist")
    return OutputLock(out).acquire()


def _run(manifest: EvaluationManifest, suite: Suite, model_id: str, out: Path, executor: Any, store: Any, *,
         resume: bool, spec: str, progress: Progress | None, every: int, seconds: float,
         executor_for: ExecutorFor | None = None, tags: Sequence[str] = ()) -> RunSummary:
    from .run_info import node_counts, this_host

    played: Counter[str] = Counter()  # episodes played now, per machine (the run-info's and the summary's)
    here = this_host()
    # Without an executor yet (executor_for), resumed work is authenticated in this process.
    authenticator = getattr(executor, "authenticate_records", authenticate_all)
    if store is not None:
        from .resume_auth import verify_stored
        from .store_runner import StoreSink

        remote = getattr(executor, "verify_stored", None)

        def verifier(items: Sequence[Any]) -> list[Any]:
            answer = remote(items) if remote is not None else None
            return answer if answer is not None else verify_stored(store, suite, items)

        sink: _Sink = StoreSink(store, manifest, model_id, out, resume=resume, spec=spec, every=every,
                                seconds=seconds, suite=suite, authenticator=authenticator, verifier=verifier,
                                nodes=played, tags=tags)
    else:
        sink = ArtifactSink(manifest, model_id, out, resume=resume, suite=suite, authenticator=authenticator,
                            spec=spec)
    total = len(manifest.episodes)
    resumed = sink.count
    pending = [e for e in manifest.episodes if not sink.has(e.index)]
    added = 0
    usage: Any = None
    error: BaseException | None = None
    try:
        opened = executor_for(pending) if executor_for is not None else contextlib.nullcontext(executor)
        with opened as chosen:
            if progress:
                progress(resumed, total)
            for outcome in chosen.run(pending):
                if sink.has(outcome.index):
                    continue  # a retried episode finished twice: idempotent, keep the first
                sink.add(outcome)
                played[outcome.node or here] += 1
                added += 1
                if outcome.usage is not None:  # execution accounting: summed here, never part of a record
                    usage = outcome.usage if usage is None else usage + outcome.usage
                if progress:
                    progress(resumed + added, total)
    except BaseException as exc:
        error = exc
        raise
    finally:
        sink.close(error)
    regenerated = getattr(sink, "regenerated", 0)
    header = getattr(sink, "header", None)
    return RunSummary(output=out, scheduled=total, completed=sink.count, ran=added - regenerated, resumed=resumed,
                      result_digest=sink.digest, from_artifact=getattr(sink, "from_artifact", resumed),
                      from_journal=getattr(sink, "from_journal", 0), regenerated=regenerated,
                      journal_started=None if header is None else header.started, usage=usage,
                      nodes=node_counts(played))


class _Sink(Protocol):
    count: int
    digest: str

    def has(self, index: int) -> bool: ...

    def add(self, outcome: EpisodeOutcome) -> None: ...

    def close(self, error: BaseException | None = None) -> None: ...


class ArtifactSink:
    """Keeps the artifact on disk: rewritten atomically after every episode (spec section 6).

    The run's sidecar (:mod:`emberbench.evaluation.run_sidecar`) is written before the
    artifact's first write; a resume is checked against it before the
    artifact is read, and an artifact holding episodes without one is not resumed.
    """

    def __init__(self, manifest: EvaluationManifest, model_id: str, out: Path, *, resume: bool,
                 suite: Suite, authenticator: Authenticator = authenticate_all, spec: str) -> None:
        from .run_sidecar import new_sidecar, refuse_unknown_policy, write_sidecar

        self.manifest, self.model_id, self.out = manifest, model_id, out
        self.done: dict[int, bytes] = {}
        self.digest = ""
        exists = output_exists(out, resume)
        sidecar = output_sidecar(out, exists, manifest, model_id, spec)
        if exists:
            from ..results.stream import verify_artifact

            found: dict[int, bytes] = {}

            def take(e: Any) -> None:
                found[e.index] = episode_chunk(e.entry, e.record_bytes, e.record_digest, e.metrics_bytes)

            existing = verify_artifact(out, suite, sink=take, replayer=authenticator)
            check_resumable(existing.manifest.hash, existing.model_id, manifest, model_id, out)
            if sidecar is None and found:
                raise refuse_unknown_policy(out)
            self.done = found
            self.digest = existing.digest
        if sidecar is None:  # a new output, or an artifact of zero episodes: this run begins it
            write_sidecar(out, new_sidecar(spec, model_id, manifest.hash))
        if not exists:
            self._save()

    @property
    def count(self) -> int:
        return len(self.done)

    def has(self, index: int) -> bool:
        return index in self.done

    def add(self, outcome: EpisodeOutcome) -> None:
        assert outcome.record_bytes is not None
        entry = self.manifest.episodes[outcome.index]
        self.done[outcome.index] = episode_chunk(entry, outcome.record_bytes, outcome.record_digest,
                                                 outcome.metrics_bytes)
        self._save()

    def _save(self) -> None:
        data = b"".join(artifact_chunks(self.manifest, self.model_id, (self.done[i] for i in sorted(self.done))))
        atomic_write_bytes(self.out, data)
        self.digest = sha256_hex(data)

    def close(self, error: BaseException | None = None) -> None:
        pass


def check_before_start(manifest: EvaluationManifest, model_id: str, output_path: str | Path, spec: str, *,
                       store: Any = None, resume: bool = True) -> None:
    """The resume refusals a run can make from its output's sidecar and its journal header alone.

    Cheap (nothing is replayed, no lock but the caller's is taken), for a
    caller about to start something slow, such as Ray: a resume under
    another policy spec, manifest or model id, a resume an artifact without
    sidecar cannot allow, and ``resume=False`` over existing work are refused
    here; everything else is left to :func:`run_evaluation`, which checks all
    of it again.

    Raises:
        ResumeError, OutputPathError, RunInfoError, ResultError: as :func:`run_evaluation`.
    """
    from .run_sidecar import refuse_unknown_policy, starts_with_episode

    validate_model_id(model_id)
    out = Path(output_path)
    exists = output_exists(out, resume)
    sidecar = output_sidecar(out, exists, manifest, model_id, spec)
    journaled = 0
    if store is not None:
        from .store_runner import check_journal_before_start

        journaled = check_journal_before_start(store, manifest, model_id, spec, resume=resume)
    if exists and sidecar is None and journaled == 0 and starts_with_episode(out):
        raise refuse_unknown_policy(out)


def stray_temp_files(out: Path) -> list[Path]:
    """Leftover ``.<name>.*.tmp`` files next to an artifact (safe to delete)."""
    return sorted(out.parent.glob(f".{out.name}.*.tmp"))


__all__ = ["EpisodeOutcome", "ExecutorFor", "InProcessExecutor", "RunSummary", "check_before_start", "claim_output",
           "run_evaluation", "stray_temp_files"]
