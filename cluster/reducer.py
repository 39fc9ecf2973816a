"""The reducer: (group, metric) statistics as parallel Ray tasks, byte-identical to in process.

:func:`emberbench.statistics.aggregate_from_values` and ``paired_from_values``
cut their work into pure (group, metric) jobs and hand them to a *mapper*.
:class:`RayMapper` runs those jobs as Ray tasks, a few consecutive jobs per task
(one bootstrap is milliseconds to seconds; a task costs about a millisecond),
and returns the results in job order, taking jobs from the stream as soon as
any task finishes. Each job is a deterministic function of
its inputs (the bootstrap stream is seeded by the inputs), so where it runs
cannot change a byte of the artifact.

Tasks take one CPU each and hold it only while they run, so the reducer can
follow the parallel replay (also plain tasks) in the same Ray session.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import Any

from .session import import_ray

JOBS_PER_TASK = 4
IN_FLIGHT_PER_WORKER = 2


def _run_jobs(function: Callable[[Any], Any], jobs: list[Any]) -> list[Any]:
    return [function(job) for job in jobs]


class RayMapper:
    """A statistics mapper that runs jobs as Ray tasks on ``workers`` CPUs (Ray must be initialised).

    Jobs are taken from the (possibly lazy) job stream a few at a time, with a
    bounded number of tasks in flight, so the driver never holds every job's
    values at once; results come back in job order.

    Args:
        workers: CPUs to spread the jobs over.
        jobs_per_task: consecutive jobs in one task.
        in_flight_per_worker: tasks queued or running per worker.
    """

    def __init__(self, workers: int, *, jobs_per_task: int = JOBS_PER_TASK,
                 in_flight_per_worker: int = IN_FLIGHT_PER_WORKER) -> None:
        self.workers, self.jobs_per_task = max(1, workers), max(1, jobs_per_task)
        self.in_flight = self.workers * max(1, in_flight_per_worker)
        self._ray = import_ray()
        self._remote = self._ray.remote(num_cpus=1, max_retries=3, enable_task_events=False)(_run_jobs)

    def __call__(self, function: Callable[[Any], Any], jobs: Iterable[Any]) -> list[Any]:
        """Return ``[function(job) for job in jobs]``, computed by Ray tasks.

        A new task is sent as soon as any task finishes (not only the oldest),
        so one long task never leaves the other workers idle; finished parts
        wait, at most ``4 x in_flight`` of them, until the parts before them
        are in.
        """
        source = iter(jobs)
        window = 4 * self.in_flight
        running: dict[Any, int] = {}
        finished: dict[int, list[Any]] = {}
        out: list[Any] = []
        sent = emitted = 0
        exhausted = False
        while True:
            while not exhausted and len(running) < self.in_flight and sent - emitted < window:
                part = list(itertools.islice(source, self.jobs_per_task))
                if not part:
                    exhausted = True
                    break
                running[self._remote.remote(function, part)] = sent
                sent += 1
            if not running:
                return out
            ready, _ = self._ray.wait(list(running), num_returns=1)
            for ref in ready:
                finished[running.pop(ref)] = self._ray.get(ref)
            while emitted in finished:
                out.extend(finished.pop(emitted))
                emitted += 1
