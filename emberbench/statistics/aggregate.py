"""Aggregate statistics of one model's result: per metric, per group.

:func:`aggregate_from_values` takes the already re-verified episodes of one
result and returns an :class:`AggregateStatistics`: for the overall group,
every scenario and every family, the robustness counts and, per metric, the
missing/undefined accounting, the exact descriptive statistics and a bootstrap
interval for the mean. Missing episodes and undefined values are counted and
left out; nothing is imputed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..records.metric_defs import METRIC_NAMES
from .artifact import ArtifactForm, context_header, key_dict, shared_sections
from .notebook import StatisticsView
from .bootstrap import BootstrapInterval, bootstrap_interval
from .columns import EpisodeTable, table_from_values
from .descriptive import Descriptive, describe
from .exact import ExactVector
from .groups import plan_groups
from .inputs import (
    EpisodeKey,
    EpisodeValues,
    StatisticsContext,
    check_model_id,
    check_resamples,
    check_result_digest,
    index_episodes,
)
from .stream import bootstrap_seed

PURPOSE = "aggregate_mean"

Mapper = Callable[[Callable[[Any], Any], Iterable[Any]], Sequence[Any]]
"""``mapper(function, jobs)`` returns ``[function(job) for job in jobs]``, in job order (``jobs`` may be a generator).

The statistics of each (group, metric) pair are one pure job with picklable
input and output, so a mapper may compute them anywhere (the cluster package
runs them as parallel Ray tasks); the assembled artifact is the same."""


def serial_map(function: Callable[[Any], Any], jobs: Iterable[Any]) -> list[Any]:
    """The default :data:`Mapper`: every job in this process, in order."""
    return [function(job) for job in jobs]


def run_metric_jobs(mapper: Mapper | None, function: Callable[[Any], Any], jobs: Iterable[Any]) -> list[tuple[Any, ...]]:
    """Run one job per (group, metric), groups outer and metrics inner; return each group's results.

    ``jobs`` may be a generator: it is consumed once, by the mapper, so only
    the jobs the mapper holds at a time are in memory.

    Raises:
        ValueError: the mapper did not return one result per job.
    """
    count = 0

    def counted() -> Iterator[Any]:
        nonlocal count
        for job in jobs:
            count += 1
            yield job

    results = list((mapper or serial_map)(function, counted()))
    if len(results) != count:
        raise ValueError("the mapper must return one result per job")
    width = len(METRIC_NAMES)
    return [tuple(results[k:k + width]) for k in range(0, len(results), width)]


@dataclass(frozen=True, slots=True)
class Robustness:
    """Raw episode counts of one group (no rates).

    ``all_resolved + max_steps == observed`` and ``scheduled == observed + missing``.
    """

    scheduled: int
    observed: int
    missing: int
    all_resolved: int
    max_steps: int
    with_casualties: int
    with_stranded: int
    zero_evacuation: int

    def __post_init__(self) -> None:
        if self.scheduled != self.observed + self.missing:
            raise ValueError("scheduled must equal observed + missing")
        if self.all_resolved + self.max_steps != self.observed:
            raise ValueError("all_resolved + max_steps must equal observed")

    def to_dict(self) -> dict[str, int]:
        """Return the output form."""
        return {
            "scheduled": self.scheduled,
            "observed": self.observed,
            "missing": self.missing,
            "all_resolved": self.all_resolved,
            "max_steps": self.max_steps,
            "with_casualties": self.with_casualties,
            "with_stranded": self.with_stranded,
            "zero_evacuation": self.zero_evacuation,
        }


@dataclass(frozen=True, slots=True)
class MetricSummary:
    """One metric in one group.

    ``scheduled == observed + missing`` and ``statistics.n == observed - undefined``.
    """

    metric: str
    scheduled: int
    observed: int
    missing: int
    undefined: int
    statistics: Descriptive
    mean_ci: BootstrapInterval | None

    def __post_init__(self) -> None:
        if self.scheduled != self.observed + self.missing:
            raise ValueError("scheduled must equal observed + missing")
        if self.statistics.n != self.observed - self.undefined:
            raise ValueError("n must equal observed - undefined")

    def to_dict(self) -> dict[str, Any]:
        """Return the output form."""
        return {
            "metric": self.metric,
            "scheduled": self.scheduled,
            "observed": self.observed,
            "missing": self.missing,
            "undefined": self.undefined,
            "statistics": self.statistics.to_dict(),
            "mean_ci": None if self.mean_ci is None else self.mean_ci.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class AggregateGroup:
    """The summaries of one group.

    Attributes:
        kind: ``overall``, ``scenario`` or ``family``.
        name: ``overall``, the scenario id or the family id.
        episode_indices: observed episode indices, manifest order.
        missing_indices: scheduled but unobserved indices, manifest order.
        robustness: the raw episode counts.
        metrics: one summary per metric, in metric table order.
    """

    kind: str
    name: str
    episode_indices: tuple[int, ...]
    missing_indices: tuple[int, ...]
    robustness: Robustness
    metrics: tuple[MetricSummary, ...]

    def head(self) -> dict[str, Any]:
        """The output form without ``metrics``."""
        return {
            "kind": self.kind,
            "name": self.name,
            "episode_indices": list(self.episode_indices),
            "missing_indices": list(self.missing_indices),
            "robustness": self.robustness.to_dict(),
        }

    def to_dict(self, *, deltas: bool = True) -> dict[str, Any]:
        """Return the output form (``deltas`` is for symmetry with the paired groups)."""
        return {**self.head(), "metrics": [m.to_dict() for m in self.metrics]}


@dataclass(frozen=True, slots=True)
class AggregateStatistics(StatisticsView, ArtifactForm):
    """The aggregate statistics artifact of one result.

    Attributes:
        context: the manifest and suite description.
        model_id: the model label of the result.
        result_digest: the SHA-256 of the canonical result artifact.
        resamples: bootstrap resamples per interval.
        missing_episodes: scheduled keys without a result, manifest order.
        overall: the overall group.
        scenarios: scenario groups, suite manifest order.
        families: family groups, declaration order.
    """

    context: StatisticsContext
    model_id: str
    result_digest: str
    resamples: int
    missing_episodes: tuple[EpisodeKey, ...]
    overall: AggregateGroup
    scenarios: tuple[AggregateGroup, ...]
    families: tuple[AggregateGroup, ...]

    def form(self, render: Any) -> dict[str, Any]:
        """Return the section 10 layout, each group given by ``render(group)``."""
        header = context_header(self.context)
        scheduled = len(self.context.scheduled)
        return {
            **header,
            "artifact": "aggregate",
            "model_id": self.model_id,
            "result_digest": self.result_digest,
            "scheduled_episodes": scheduled,
            "observed_episodes": scheduled - len(self.missing_episodes),
            "missing_episodes": [key_dict(k) for k in self.missing_episodes],
            **shared_sections(purpose=PURPOSE, resamples=self.resamples, overall=self.overall,
                              scenarios=self.scenarios, families=self.families, render=render),
        }


def aggregate_from_values(
    ctx: StatisticsContext,
    model_id: str,
    result_digest: str,
    episodes: Sequence[EpisodeValues],
    resamples: int = 2000,
    *,
    mapper: Mapper | None = None,
) -> AggregateStatistics:
    """Compute the aggregate statistics of one result's verified episodes.

    Args:
        ctx: the manifest and suite description.
        model_id: the result's model label.
        result_digest: SHA-256 (hex) of the canonical result artifact; it
            seeds the bootstrap.
        episodes: one entry per observed episode, any order.
        resamples: bootstrap resamples, an int in ``[100, 1_000_000]``.
        mapper: computes the (group, metric) jobs (:data:`Mapper`); in
            process, in order, by default.

    Raises:
        StatisticsInputError: for an invalid argument, a duplicate or
            unscheduled episode index, or a scenario that differs from the
            schedule.
    """
    if not isinstance(ctx, StatisticsContext):
        raise TypeError("ctx must be a StatisticsContext")
    check_model_id(model_id, "model_id")
    check_result_digest(result_digest, "result_digest")
    check_resamples(resamples)
    by_index = index_episodes(ctx, episodes, "result")
    return aggregate_from_table(ctx, model_id, result_digest, table_from_values(list(by_index.values())),
                                resamples, mapper=mapper)


def aggregate_from_table(
    ctx: StatisticsContext,
    model_id: str,
    result_digest: str,
    table: EpisodeTable,
    resamples: int = 2000,
    *,
    mapper: Mapper | None = None,
) -> AggregateStatistics:
    """:func:`aggregate_from_values` over a compact :class:`~.columns.EpisodeTable` (the same artifact).

    Raises:
        StatisticsInputError: as :func:`aggregate_from_values`.
    """
    if not isinstance(ctx, StatisticsContext):
        raise TypeError("ctx must be a StatisticsContext")
    check_model_id(model_id, "model_id")
    check_result_digest(result_digest, "result_digest")
    check_resamples(resamples)
    table.check_against(ctx, "result")
    plan = plan_groups(ctx)
    groups = (plan.overall, *plan.scenarios, *plan.families)
    heads: list[tuple[Any, ...]] = []

    def jobs() -> Iterator[tuple[Any, ...]]:
        for group in groups:
            indices = np.array(group.indices, dtype=np.int64)
            rows, present = table.locate(indices)
            observed = rows[present]
            missing = tuple(indices[~present].tolist())
            resolved = int(np.count_nonzero(table.resolved[observed]))
            robustness = Robustness(
                scheduled=len(indices),
                observed=len(observed),
                missing=len(missing),
                all_resolved=resolved,
                max_steps=len(observed) - resolved,
                with_casualties=int(np.count_nonzero(table.casualties[observed] > 0)),
                with_stranded=int(np.count_nonzero(table.stranded[observed] > 0)),
                zero_evacuation=int(np.count_nonzero(table.evacuated[observed] == 0)),
            )
            heads.append((group, tuple(indices[present].tolist()), missing, robustness))
            for name, column in zip(METRIC_NAMES, table.columns, strict=True):
                _, nums, dens = column.parts(observed)
                seed = bootstrap_seed(
                    purpose=PURPOSE,
                    evaluation_manifest_hash=ctx.evaluation_manifest_hash,
                    result_digests=[result_digest],
                    group_kind=group.kind,
                    group_name=group.name,
                    metric=name,
                    resamples=resamples,
                )
                yield (name, nums, dens, len(indices), len(observed), seed, resamples)

    per_group = run_metric_jobs(mapper, summarize_metric_job, jobs())
    built = [
        AggregateGroup(kind=group.kind, name=group.name, episode_indices=indices, missing_indices=missing,
                       robustness=robustness, metrics=metrics)
        for (group, indices, missing, robustness), metrics in zip(heads, per_group)
    ]
    present = set(table.indices.tolist())
    missing_keys = tuple(key for key in ctx.scheduled if key[0] not in present)
    return AggregateStatistics(
        context=ctx,
        model_id=model_id,
        result_digest=result_digest,
        resamples=resamples,
        missing_episodes=missing_keys,
        overall=built[0],
        scenarios=tuple(built[1:1 + len(plan.scenarios)]),
        families=tuple(built[1 + len(plan.scenarios):]),
    )


def summarize_metric_job(job: tuple[Any, ...]) -> MetricSummary:
    """One (group, metric) job of :func:`aggregate_from_table`: a pure function of its tuple.

    ``job`` is ``(name, numerators, denominators, scheduled, observed, seed,
    resamples)``, the defined values of the group as parts.
    """
    name, nums, dens, scheduled, observed, seed, resamples = job
    vector = ExactVector.from_parts(nums, dens) if len(nums) else None
    return _summary(name, vector, scheduled=scheduled, observed=observed, seed=seed, resamples=resamples)


def summarize_metric(
    name: str,
    values: Sequence[Fraction],
    floats: Sequence[float],
    *,
    scheduled: int,
    observed: int,
    seed: bytes,
    resamples: int,
) -> MetricSummary:
    """Summarize the defined values of one metric in one group."""
    vector = ExactVector.build(values, np.asarray(floats, dtype=np.float64)) if values else None
    return _summary(name, vector, scheduled=scheduled, observed=observed, seed=seed, resamples=resamples)


def _summary(name: str, vector: ExactVector | None, *, scheduled: int, observed: int, seed: bytes,
             resamples: int) -> MetricSummary:
    if vector is not None:
        statistics = describe(vector)
        interval = bootstrap_interval(vector, seed=seed, resamples=resamples, statistic="mean")
        defined = len(vector)
    else:
        statistics = describe(())
        interval = None
        defined = 0
    return MetricSummary(
        metric=name,
        scheduled=scheduled,
        observed=observed,
        missing=scheduled - observed,
        undefined=observed - defined,
        statistics=statistics,
        mean_ci=interval,
    )
