"""The evaluation runner: one coordinator, pluggable executors.

The coordinator owns everything that decides *what is written*: the manifest
check, resume, the order of episodes in the artifact, and atomic saves. An
executor only decides *where episodes run* (in this process, or on Ray
workers) and yields finished episodes in any order. So every executor writes
the same bytes.

Without a store the artifact is rewritten atomically after every completed
episode, as paired-evaluation requires; with a store, records go into the
content-addressed store once, a journal entry marks each completed episode,
and the artifact is assembled at checkpoints and at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from .atomic import atomic_write_bytes, check_output_path
from .canonical import canonical_bytes, sha256_hex
from .episode import play_episode
from .errors import ResultError, ResumeError
from .manifest import EvaluationManifest, ManifestEntry, check_manifest
from .policies.spec import PolicyFactory, closing, resolve_policy
from .results import artifact_chunks, episode_chunk, load_result, validate_model_id
from .suite import Suite

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class EpisodeOutcome:
    """A finished episode as an executor reports it.

    Attributes:
        index: the manifest index.
        record_digest: SHA-256 of the record's canonical JSON.
        record_bytes: the record's canonical JSON, or None when the executor
            put it into the store (then the store holds it under the digest).
        metrics_bytes: canonical JSON of the episode metrics.
    """

    index: int
    record_digest: str
    record_bytes: bytes | None
    metrics_bytes: bytes


class Executor(Protocol):
    """Where episodes run. ``run`` yields one outcome per task, in any order."""

    def run(self, tasks: Sequence[ManifestEntry]) -> Iterator[EpisodeOutcome]: ...


def play_to_outcome(suite: Suite, entry: ManifestEntry, factory: PolicyFactory) -> tuple[EpisodeOutcome, bytes]:
    """Play one scheduled episode with a fresh policy; return its outcome and record bytes."""
    scenario = suite.resolve(entry.scenario_id, entry.scenario_hash)
    with closing(factory()) as policy:
        record, metrics = play_episode(scenario, entry.seed, policy)
    record_bytes = record.canonical_bytes()
    outcome = EpisodeOutcome(
        index=entry.index, record_digest=sha256_hex(record_bytes), record_bytes=record_bytes,
        metrics_bytes=canonical_bytes(metrics.to_dict()),
    )
    return outcome, record_bytes


class InProcessExecutor:
    """Runs episodes one after another in this process, in the order given.

    Args:
        suite: resolves scenarios.
        policy: a policy spec string or a factory (called with no arguments
            once per episode).
        store: optional object store; when given, each record is put there
            and the outcome carries only its digest.
    """

    def __init__(self, suite: Suite, policy: str | PolicyFactory, *, store: Any = None,
                 agent_timeout: float | None = None) -> None:
        self.suite = suite
        kwargs = {} if agent_timeout is None else {"agent_timeout": agent_timeout}
        self.factory = resolve_policy(policy, **kwargs) if isinstance(policy, str) else policy
        self.store = store

    def run(self, tasks: Sequence[ManifestEntry]) -> Iterator[EpisodeOutcome]:
        for entry in tasks:
            outcome, record_bytes = play_to_outcome(self.suite, entry, self.factory)
            if self.store is not None:
                self.store.put(record_bytes, key=outcome.record_digest)
                outcome = EpisodeOutcome(outcome.index, outcome.record_digest, None, outcome.metrics_bytes)
            yield outcome


@dataclass(frozen=True, slots=True)
class RunSummary:
    """What a run did."""

    output: Path
    scheduled: int
    completed: int
    ran: int
    resumed: int
    result_digest: str


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
) -> RunSummary:
    """Run every scheduled episode that the artifact at ``output_path`` lacks.

    Args:
        manifest: the evaluation manifest (checked against ``suite`` first).
        suite: the suite the manifest targets.
        policy: a policy spec string or a no-argument factory.
        model_id: the evaluator's label for this run.
        output_path: the artifact to write (and resume from).
        resume: if the artifact exists, authenticate it completely and run
            only the missing episodes; if False an existing file is an error.
        executor: where episodes run; in process by default.
        store: a :class:`store.ObjectStore`; with it records are stored
            once, completions are journaled, and the artifact is written at
            checkpoints instead of after every episode.
        progress: called as ``progress(done, total)`` after each episode.
        checkpoint_every, checkpoint_seconds: with a store, write the
            artifact after this many episodes or seconds, whichever comes
            first (0 turns either off); it is always written at the end.

    Returns:
        A :class:`RunSummary`.

    Raises:
        ResumeError: the artifact exists and ``resume`` is False, or it
            belongs to another manifest or model id.
        ResultError, ManifestError: the existing artifact or the manifest
            fails a check.
        Exception: a policy exception or invalid action stops the run; the
            artifact keeps every episode completed before it.
    """
    validate_model_id(model_id)
    check_manifest(manifest, suite)
    out = Path(output_path)
    if store is not None:
        from .store_runner import StoreSink

        sink: _Sink = StoreSink(store, manifest, model_id, out, resume=resume,
                                every=checkpoint_every, seconds=checkpoint_seconds, suite=suite)
    else:
        sink = ArtifactSink(manifest, model_id, out, resume=resume, suite=suite)
    if executor is None:
        executor = InProcessExecutor(suite, policy, store=store)
    total = len(manifest.episodes)
    resumed = len(sink.done)
    pending = [e for e in manifest.episodes if e.index not in sink.done]
    ran = 0
    if progress:
        progress(resumed, total)
    try:
        for outcome in executor.run(pending):
            if outcome.index in sink.done:
                continue  # a retried episode finished twice: idempotent, keep the first
            sink.add(outcome)
            ran += 1
            if progress:
                progress(resumed + ran, total)
    finally:
        sink.close()
    return RunSummary(output=out, scheduled=total, completed=len(sink.done), ran=ran, resumed=resumed,
                      result_digest=sink.digest)


class _Sink(Protocol):
    done: dict[int, Any]
    digest: str

    def add(self, outcome: EpisodeOutcome) -> None: ...

    def close(self) -> None: ...


class ArtifactSink:
    """Keeps the artifact on disk: rewritten atomically after every episode (spec section 6)."""

    def __init__(self, manifest: EvaluationManifest, model_id: str, out: Path, *, resume: bool,
                 suite: Suite) -> None:
        self.manifest, self.model_id, self.out = manifest, model_id, out
        self.done: dict[int, bytes] = {}
        self.digest = ""
        if output_exists(out, resume):
            existing = load_result(out, suite)
            check_resumable(existing.manifest.hash, existing.model_id, manifest, model_id, out)
            for e in existing.episodes:
                record_bytes = e.record.canonical_bytes()
                self.done[e.index] = episode_chunk(e.entry, record_bytes, e.record_digest,
                                                   canonical_bytes(e.metrics.to_dict()))
            self.digest = existing.digest
        else:
            self._save()

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

    def close(self) -> None:
        pass


def output_exists(out: Path, resume: bool) -> bool:
    """Whether there is an artifact to resume at ``out``.

    The output policy is applied first, before anything is read: ``out`` must
    be nothing or a regular file (a device or FIFO given as ``--out`` would
    otherwise be read as an artifact to resume, without end).

    Raises:
        OutputPathError: ``out`` is a link, FIFO, device, socket or folder.
        ResumeError: it exists and ``resume`` is False (it is never overwritten).
        ResultError: it does not exist and neither does its folder.
    """
    if not out.parent.exists():
        raise ResultError(f"{out.parent}: output folder does not exist")
    check_output_path(out)
    if out.exists():
        if not resume:
            raise ResumeError(f"{out} exists and resume is off; an existing artifact is never overwritten")
        return True
    return False


def check_resumable(found_hash: str, found_model: str, manifest: EvaluationManifest, model_id: str,
                    where: Path | str) -> None:
    """Refuse to resume an artifact of another manifest or model id."""
    if found_hash != manifest.hash:
        raise ResumeError(
            f"{where} belongs to evaluation manifest {found_hash}, not {manifest.hash}; "
            "a changed schedule, seed order, scenario, suite or version cannot be resumed"
        )
    if found_model != model_id:
        raise ResumeError(f"{where} belongs to model id {found_model!r}, not {model_id!r}")


def stray_temp_files(out: Path) -> list[Path]:
    """Leftover ``.<name>.*.tmp`` files next to an artifact (safe to delete)."""
    return sorted(out.parent.glob(f".{out.name}.*.tmp"))


__all__ = ["EpisodeOutcome", "InProcessExecutor", "RunSummary", "run_evaluation", "stray_temp_files"]
