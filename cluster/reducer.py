"""The reducer: (group, metric) statistics as parallel Ray tasks, byte-identical to in process.

:func:`emberbench.statistics.aggregate_from_values` and ``paired_from_values``
cut their work into pure (group, metric) jobs and hand them to a *mapper*.
:class:`RayMapper` runs those jobs as Ray tasks, a few contiguous jobs per task
(one bootstrap is milliseconds to seconds; a task costs about a millisecond),
and returns the results in job order. Each job is a deterministic function of
its inputs (the bootstrap stream is seeded by the inputs), so where it runs
cannot change a byte of the artifact.

Tasks take one CPU each and hold it only while they run, so the reducer can
follow the parallel replay (also plain tasks) in the same Ray session.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .session import import_ray

TASKS_PER_WORKER = 4


def _run_jobs(function: Callable[[Any], Any], jobs: list[Any]) -> list[Any]:
    return [function(job) for job in jobs]


class RayMapper:
    """A statistics mapper that runs jobs as Ray tasks on ``workers`` CPUs (Ray must be initialised).

    Args:
        workers: CPUs to spread the jobs over.
        tasks_per_worker: tasks per worker (more evens out unequal jobs).
    """

    def __init__(self, workers: int, *, tasks_per_worker: int = TASKS_PER_WORKER) -> None:
        self.workers, self.tasks_per_worker = max(1, workers), max(1, tasks_per_worker)
        self._ray = import_ray()
        self._remote = self._ray.remote(num_cpus=1, max_retries=3)(_run_jobs)

    def __call__(self, function: Callable[[Any], Any], jobs: Sequence[Any]) -> list[Any]:
        """Return ``[function(job) for job in jobs]``, computed by Ray tasks."""
        jobs = list(jobs)
        if not jobs:
            return []
        size = math.ceil(len(jobs) / (self.workers * self.tasks_per_worker))
        refs = [self._remote.remote(function, jobs[i:i + size]) for i in range(0, len(jobs), size)]
        return [result for part in self._ray.get(refs) for result in part]
