"""Parallel replay authentication with the same verdicts and messages as in process.

:class:`RayAuthenticator` is a :class:`~emberbench.records.replay.Replayer`: the
streaming reader hands it records one at a time and gets each back with its
verdict, in the same order. Records go out in chunks (at most ``max_chunk``
records or ``max_chunk_bytes`` of canonical JSON each) as Ray tasks, with at
most ``max_in_flight`` chunks per worker queued or running; the oldest chunk's
verdicts are yielded as soon as it is done, and the next chunk is cut from
the stream. So the driver holds a bounded number of records, however long
the artifact, and parsing on the driver overlaps replay on the workers.

A task receives the records' canonical bytes (never the artifact) and returns
one verdict per record: the metrics, or the message and field of a record
that does not authenticate. The reader picks the first failure in list order,
so the verdict is the in-process one.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from emberbench.errors import ClusterError, RecordAuthenticationError
from emberbench.records.metrics import EpisodeMetrics
from emberbench.records.record import record_from_dict
from emberbench.records.replay import ReplayFailure, ReplayJob, Verdict
from emberbench.sim.suite import Suite

from .session import import_ray
from .workers import authenticate_chunk

DEFAULT_MAX_CHUNK = 128
DEFAULT_MAX_CHUNK_BYTES = 4 << 20
DEFAULT_MAX_IN_FLIGHT = 3


class RayAuthenticator:
    """Replay records with Ray tasks on ``workers`` CPUs (Ray must be initialised).

    Args:
        workers: parallel tasks to aim for (one CPU each).
        max_chunk: most records in one task.
        max_chunk_bytes: most canonical record bytes in one task.
        max_in_flight: tasks queued or running per worker.
    """

    def __init__(self, workers: int, *, max_chunk: int = DEFAULT_MAX_CHUNK,
                 max_chunk_bytes: int = DEFAULT_MAX_CHUNK_BYTES, max_in_flight: int = DEFAULT_MAX_IN_FLIGHT) -> None:
        if min(workers, max_chunk, max_chunk_bytes, max_in_flight) < 1:
            raise ClusterError("workers, max_chunk, max_chunk_bytes and max_in_flight must be at least 1")
        self.workers, self.max_chunk, self.max_chunk_bytes = workers, max_chunk, max_chunk_bytes
        self.max_in_flight = max_in_flight
        self.replayed = 0
        self._ray = import_ray()
        self._task = self._ray.remote(num_cpus=1, max_retries=3, enable_task_events=False)(authenticate_chunk)
        self._suites: dict[str, Any] = {}

    def __enter__(self) -> RayAuthenticator:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._suites.clear()

    def _suite_ref(self, suite: Suite) -> Any:
        if suite.hash not in self._suites:
            self._suites[suite.hash] = self._ray.put(suite)
        return self._suites[suite.hash]

    def _cut(self, jobs: Iterator[ReplayJob]) -> list[ReplayJob]:
        chunk: list[ReplayJob] = []
        size = 0
        for job in jobs:
            chunk.append(job)
            size += len(job.record_bytes)
            if len(chunk) >= self.max_chunk or size >= self.max_chunk_bytes:
                break
        return chunk

    def replay(self, jobs: Iterable[ReplayJob], suite: Suite) -> Iterator[tuple[ReplayJob, Verdict]]:
        """Yield every job with its verdict, in order (see :class:`emberbench.records.replay.Replayer`).

        Raises:
            Exception: any error other than a failed authentication, as raised in the task.
            ClusterError: Ray lost a task for good.
        """
        ray = self._ray
        source = iter(jobs)
        suite_ref = self._suite_ref(suite)
        limit = self.workers * self.max_in_flight
        in_flight: deque[tuple[list[ReplayJob], Any]] = deque()
        exhausted = False
        while True:
            while not exhausted and len(in_flight) < limit:
                chunk = self._cut(source)
                if not chunk:
                    exhausted = True
                    break
                ref = self._task.remote(suite.hash, [suite_ref], [job.position for job in chunk],
                                        [job.record_bytes for job in chunk])
                in_flight.append((chunk, ref))
            if not in_flight:
                return
            chunk, ref = in_flight.popleft()
            try:
                verdicts, error = ray.get(ref)
            except ray.exceptions.RayError as exc:
                raise ClusterError(f"authentication task lost: {str(exc).strip().splitlines()[0]}") from None
            if error is not None:
                raise error
            self.replayed += len(verdicts)
            for job, verdict in zip(chunk, verdicts, strict=True):
                yield job, verdict if isinstance(verdict, EpisodeMetrics) else ReplayFailure(*verdict)

    def __call__(self, records: Sequence[dict[str, Any]], suite: Suite) -> list[EpisodeMetrics]:
        """The older list form: every record's metrics, or the first failure in list order.

        Raises:
            RecordAuthenticationError: ``episode {i}: ...`` for the first failing record.
        """
        from emberbench.io.canonical import canonical_bytes

        jobs, failures = [], {}
        for i, record in enumerate(records):
            try:
                jobs.append(ReplayJob(i, record_from_dict(record), canonical_bytes(record)))
            except RecordAuthenticationError as exc:
                failures[i] = ReplayFailure(str(exc), exc.field)
        verdicts: dict[int, Verdict] = {**failures, **{job.position: v for job, v in self.replay(jobs, suite)}}
        out = []
        for i in range(len(records)):
            verdict = verdicts[i]
            if isinstance(verdict, ReplayFailure):
                raise RecordAuthenticationError(f"episode {i}: {verdict.message}", field=verdict.field)
            out.append(verdict)
        return out
