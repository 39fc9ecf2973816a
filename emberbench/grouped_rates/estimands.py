"""Per-task counts, the two estimands, their contrasts and missing-label bounds.

Everything is exact (:class:`fractions.Fraction`); a null value is ``None``.
The same :class:`Evaluator` computes the point estimates (every task once)
and every resampling draw (each task with its multiplicity in the draw), so
the two can never disagree about what a statistic means.

Statistics are evaluated in the fixed order of :data:`STATISTICS`:
episode-weighted rate of the first arm, of the second arm, their contrast,
then the same three for the equal-task estimand.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from .inputs import GroupedInput

ESTIMANDS = ("episode_weighted", "equal_task")

STATISTICS: tuple[tuple[str, str, int | None], ...] = (
    ("episode_weighted", "rate", 0),
    ("episode_weighted", "rate", 1),
    ("episode_weighted", "contrast", None),
    ("equal_task", "rate", 0),
    ("equal_task", "rate", 1),
    ("equal_task", "contrast", None),
)
"""(estimand, quantity, arm position or None) of each statistic, in draw-column order."""

Values = tuple[Fraction | None, ...]


@dataclass(frozen=True, slots=True)
class ArmCounts:
    """Label counts of one arm of one task (or of one arm over all tasks)."""

    failure: int
    success: int
    unresolved: int

    @property
    def resolved(self) -> int:
        """Episodes with a failure or success label."""
        return self.failure + self.success

    @property
    def attempted(self) -> int:
        """Every episode, whatever its label."""
        return self.failure + self.success + self.unresolved

    @property
    def rate(self) -> Fraction | None:
        """failures / resolved, or None when nothing is resolved."""
        return Fraction(self.failure, self.resolved) if self.resolved else None

    def bounds(self) -> tuple[Fraction, Fraction] | None:
        """Worst-case failure-rate bounds over attempted episodes, or None if none."""
        if not self.attempted:
            return None
        return (
            Fraction(self.failure, self.attempted),
            Fraction(self.failure + self.unresolved, self.attempted),
        )


@dataclass(frozen=True, slots=True)
class TaskTable:
    """Counts per task and arm: ``counts[t][a]`` for task ``tasks[t]``, arm ``arms[a]``."""

    tasks: tuple[str, ...]
    arms: tuple[str, str]
    counts: tuple[tuple[ArmCounts, ArmCounts], ...]

    def totals(self, arm: int) -> ArmCounts:
        """Counts of one arm summed over all tasks."""
        return ArmCounts(
            sum(row[arm].failure for row in self.counts),
            sum(row[arm].success for row in self.counts),
            sum(row[arm].unresolved for row in self.counts),
        )

    def null_task_arms(self) -> tuple[tuple[str, str], ...]:
        """(task, arm) pairs whose task rate is null, in task then arm order."""
        return tuple(
            (task, self.arms[a])
            for task, row in zip(self.tasks, self.counts, strict=True)
            for a in (0, 1)
            if row[a].rate is None
        )


def tabulate(data: GroupedInput) -> TaskTable:
    """Count labels per task and arm; tasks without episodes count zero."""
    task_pos = {task: i for i, task in enumerate(data.tasks)}
    arm_pos = {arm: i for i, arm in enumerate(data.arms)}
    label_pos = {"failure": 0, "success": 1, "unresolved": 2}
    cells = [[[0, 0, 0], [0, 0, 0]] for _ in data.tasks]
    for episode in data.episodes:
        cells[task_pos[episode.task]][arm_pos[episode.arm]][label_pos[episode.label]] += 1
    counts = tuple((ArmCounts(*row[0]), ArmCounts(*row[1])) for row in cells)
    return TaskTable(data.tasks, data.arms, counts)


class Evaluator:
    """Computes all six statistics for a draw given as task multiplicities.

    A draw is a sequence ``m`` of length n with ``m[t]`` the number of times
    task ``t`` was selected and ``sum(m) == n``. The equal-task mean is kept
    exact with integer numerators over the least common multiple of the
    resolved counts, which avoids slow Fraction sums.
    """

    def __init__(self, table: TaskTable) -> None:
        """Precompute per-arm integer columns of ``table``."""
        self._n = len(table.tasks)
        self._fail = tuple(tuple(row[a].failure for row in table.counts) for a in (0, 1))
        self._resolved = tuple(tuple(row[a].resolved for row in table.counts) for a in (0, 1))
        lcms = []
        scaled = []
        for a in (0, 1):
            lcm = 1
            for r in self._resolved[a]:
                if r:
                    lcm = math.lcm(lcm, r)
            lcms.append(lcm)
            scaled.append(
                tuple(
                    f * (lcm // r) if r else None
                    for f, r in zip(self._fail[a], self._resolved[a], strict=True)
                )
            )
        self._lcm = tuple(lcms)
        self._scaled = tuple(scaled)

    def evaluate(self, multiplicity: Sequence[int]) -> Values:
        """Return the six statistics (``None`` where missing) for one draw."""
        pooled: list[Fraction | None] = []
        equal: list[Fraction | None] = []
        for a in (0, 1):
            fail = resolved = numerator = 0
            blocked = False
            fails, res, scaled = self._fail[a], self._resolved[a], self._scaled[a]
            for t, m in enumerate(multiplicity):
                if m:
                    fail += m * fails[t]
                    resolved += m * res[t]
                    s = scaled[t]
                    if s is None:
                        blocked = True
                    else:
                        numerator += m * s
            pooled.append(Fraction(fail, resolved) if resolved else None)
            equal.append(None if blocked else Fraction(numerator, self._n * self._lcm[a]))
        return (
            pooled[0],
            pooled[1],
            _difference(pooled[0], pooled[1]),
            equal[0],
            equal[1],
            _difference(equal[0], equal[1]),
        )

    def point(self) -> Values:
        """Return the statistics of the observed sample (every task once)."""
        return self.evaluate((1,) * self._n)


def _difference(first: Fraction | None, second: Fraction | None) -> Fraction | None:
    if first is None or second is None:
        return None
    return first - second


def contrast_bounds(table: TaskTable) -> tuple[Fraction, Fraction] | None:
    """Worst-case bounds of the episode-weighted contrast over attempted episodes."""
    first, second = table.totals(0).bounds(), table.totals(1).bounds()
    if first is None or second is None:
        return None
    return (first[0] - second[1], first[1] - second[0])
