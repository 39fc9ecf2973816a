"""Parallel replay authentication with the same verdicts and messages as in process.

:class:`RayAuthenticator` is an ``Authenticator`` (see
:mod:`emberbench.results`): given records in order and a suite, it returns
their metrics in order, or raises for the first record, *in list order*, that
fails, with exactly the message the in-process authenticator gives
(``episode {i}: ...``).

Records go out as a few large Ray tasks (``tasks_per_worker`` per worker, at
most ``max_chunk`` records each; a task costs milliseconds of pickling and
scheduling, so few large tasks beat many small ones), at most
``max_in_flight`` per worker at a time. A task takes every K-th record (K =
the number of tasks), not a contiguous run: replay cost varies a lot between
scenarios and manifests list one scenario's episodes together, so strided
tasks cost about the same and the workers finish together. Each task
stops at its own first failure; the smallest failing position over all tasks
is the first failure of the whole list, so the verdict is the in-process one.

:meth:`RayAuthenticator.prefetch` starts the first tasks early, while the
loader is still running its serial structural checks; when the loader then
asks for exactly those records (compared by value), the running tasks are
used, otherwise they are ignored. The verdict is always computed on the
records the loader passes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from emberbench.errors import ClusterError, RecordAuthenticationError
from emberbench.metrics import EpisodeMetrics
from emberbench.suite import Suite

from .session import import_ray
from .workers import authenticate_chunk

DEFAULT_TASKS_PER_WORKER = 3
DEFAULT_MAX_CHUNK = 512
DEFAULT_MAX_IN_FLIGHT = 3


class RayAuthenticator:
    """Authenticate records with Ray tasks on ``workers`` CPUs (Ray must be initialised).

    Args:
        workers: parallel tasks to aim for (one CPU each).
        tasks_per_worker: tasks per worker for a list of up to
            ``workers * tasks_per_worker * max_chunk`` records.
        max_chunk: most records in one task (more tasks for longer lists).
        max_in_flight: tasks queued or running per worker.
    """

    def __init__(self, workers: int, *, tasks_per_worker: int = DEFAULT_TASKS_PER_WORKER,
                 max_chunk: int = DEFAULT_MAX_CHUNK, max_in_flight: int = DEFAULT_MAX_IN_FLIGHT) -> None:
        if min(workers, tasks_per_worker, max_chunk, max_in_flight) < 1:
            raise ClusterError("workers, tasks_per_worker, max_chunk and max_in_flight must be at least 1")
        self.workers, self.tasks_per_worker, self.max_chunk = workers, tasks_per_worker, max_chunk
        self.max_in_flight = max_in_flight
        self._ray = import_ray()
        self._task = self._ray.remote(num_cpus=1, max_retries=3)(authenticate_chunk)
        self._suites: dict[str, Any] = {}
        self._prefetched: tuple[str, int, dict[int, tuple[list[Any], Any]]] | None = None

    def __enter__(self) -> RayAuthenticator:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._suites.clear()
        self._prefetched = None

    def _tasks(self, count: int) -> int:
        return max(1, min(count, max(self.workers * self.tasks_per_worker, math.ceil(count / self.max_chunk))))

    def _submit(self, suite: Suite, task: int, tasks: int, records: Sequence[Any]) -> tuple[list[Any], Any]:
        if suite.hash not in self._suites:
            self._suites[suite.hash] = self._ray.put(suite)
        positions = list(range(task, len(records), tasks))
        part = [records[p] for p in positions]
        return part, self._task.remote(suite.hash, [self._suites[suite.hash]], positions, part)

    def prefetch(self, records: Sequence[Any], suite: Suite) -> None:
        """Start the first tasks (as many as may be in flight) of ``records`` before they are asked for."""
        if not isinstance(records, list) or not records or not all(isinstance(r, dict) for r in records):
            return
        tasks = self._tasks(len(records))
        started = {task: self._submit(suite, task, tasks, records)
                   for task in range(min(tasks, self.workers * self.max_in_flight))}
        self._prefetched = (suite.hash, len(records), started)

    def _take_prefetched(self, records: Sequence[Any], suite: Suite) -> dict[int, Any]:
        """The prefetched tasks whose records equal the records now asked for."""
        prefetched, self._prefetched = self._prefetched, None
        if prefetched is None or prefetched[0] != suite.hash or prefetched[1] != len(records):
            return {}
        tasks = self._tasks(len(records))
        return {task: ref for task, (part, ref) in prefetched[2].items()
                if part == [records[p] for p in range(task, len(records), tasks)]}

    def __call__(self, records: Sequence[dict[str, Any]], suite: Suite) -> list[EpisodeMetrics]:
        """Authenticate ``records`` in parallel; see the module docstring for the verdict rule.

        Raises:
            RecordAuthenticationError: ``episode {i}: ...`` for the first failing record.
            Exception: any other error of the first failing record, as raised in process.
            ClusterError: Ray lost a task for good.
        """
        prefetched = self._take_prefetched(records, suite)
        if not records:
            return []
        ray = self._ray
        tasks = self._tasks(len(records))
        todo = [task for task in reversed(range(tasks)) if task not in prefetched]
        in_flight: dict[Any, int] = {ref: task for task, ref in prefetched.items()}
        limit = self.workers * self.max_in_flight
        out: list[Any] = [None] * len(records)
        first: tuple[int, Any, Any] | None = None
        while todo or in_flight:
            while todo and len(in_flight) < limit:
                task = todo.pop()
                in_flight[self._submit(suite, task, tasks, records)[1]] = task
            ready, _ = ray.wait(list(in_flight), num_returns=1)
            task = in_flight.pop(ready[0])
            try:
                metrics, failure = ray.get(ready[0])
            except ray.exceptions.RayError as exc:
                raise ClusterError(f"authentication task lost: {str(exc).strip().splitlines()[0]}") from None
            for position, value in zip(range(task, len(records), tasks), metrics):
                out[position] = value
            if failure is not None and (first is None or failure[0] < first[0]):
                first = failure
        if first is not None:
            position, error, field = first
            if isinstance(error, BaseException):
                raise error
            raise RecordAuthenticationError(f"episode {position}: {error}", field=field)
        return out
