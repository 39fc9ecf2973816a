"""Aggregate statistics of one model's result: per metric, per group.

:func:`aggregate_from_values` takes the already re-verified episodes of one
result and returns an :class:`AggregateStatistics`: for the overall group,
every scenario and every family, the robustness counts and, per metric, the
missing/undefined accounting, the exact descriptive statistics and a bootstrap
interval for the mean. Missing episodes and undefined values are counted and
left out; nothing is imputed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..metric_defs import METRIC_NAMES
from .artifact import ArtifactForm, context_header, key_dict, shared_sections
from .bootstrap import BootstrapInterval, bootstrap_interval
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

Mapper = Callable[[Callable[[Any], Any], Sequence[Any]], Sequence[Any]]
"""``mapper(function, jobs)`` returns ``[function(job) for job in jobs]``, in job order.

The statistics of each (group, metric) pair are one pure job with picklable
input and output, so a mapper may compute them anywhere (the cluster package
runs them as parallel Ray tasks); the assembled artifact is the same."""


def serial_map(function: Callable[[Any], Any], jobs: Sequence[Any]) -> list[Any]:
    """The default :data:`Mapper`: every job in this process, in order."""
    return [function(job) for job in jobs]


def run_metric_jobs(mapper: Mapper | None, function: Callable[[Any], Any], jobs: Sequence[Any]) -> list[tuple[Any, ...]]:
    """Run one job per (group, metric), groups outer and metrics inner; return each group's results.

    Raises:
        ValueError: the mapper did not return one result per job.
    """
    results = list((mapper or serial_map)(function, jobs))
    if len(results) != len(jobs):
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

    def to_dict(self) -> dict[str, Any]:
        """Return the output form."""
        return {
            "kind": self.kind,
            "name": self.name,
            "episode_indices": list(self.episode_indices),
            "missing_indices": list(self.missing_indices),
            "robustness": self.robustness.to_dict(),
            "metrics": [m.to_dict() for m in self.metrics],
        }


@dataclass(frozen=True, slots=True)
class AggregateStatistics(ArtifactForm):
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

    def to_dict(self) -> dict[str, Any]:
        """Return the section 10 layout, floats only here."""
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
                              scenarios=self.scenarios, families=self.families),
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
    plan = plan_groups(ctx)
    floats: dict[str, dict[int, float]] = {name: {} for name in METRIC_NAMES}
    for episode in by_index.values():
        for name in METRIC_NAMES:
            value = episode.values[name]
            if value is not None:
                floats[name][episode.index] = float(value)

    groups = (plan.overall, *plan.scenarios, *plan.families)
    heads = []
    jobs = []
    for group in groups:
        observed = [by_index[i] for i in group.indices if i in by_index]
        missing = tuple(i for i in group.indices if i not in by_index)
        robustness = Robustness(
            scheduled=len(group.keys),
            observed=len(observed),
            missing=len(missing),
            all_resolved=sum(e.termination == "all_resolved" for e in observed),
            max_steps=sum(e.termination == "max_steps" for e in observed),
            with_casualties=sum(e.casualties > 0 for e in observed),
            with_stranded=sum(e.stranded > 0 for e in observed),
            zero_evacuation=sum(e.evacuated == 0 for e in observed),
        )
        heads.append((group, tuple(e.index for e in observed), missing, robustness))
        for name in METRIC_NAMES:
            defined = [e for e in observed if e.values[name] is not None]
            seed = bootstrap_seed(
                purpose=PURPOSE,
                evaluation_manifest_hash=ctx.evaluation_manifest_hash,
                result_digests=[result_digest],
                group_kind=group.kind,
                group_name=group.name,
                metric=name,
                resamples=resamples,
            )
            jobs.append((name, [e.values[name] for e in defined], [floats[name][e.index] for e in defined],
                         len(group.keys), len(observed), seed, resamples))
    per_group = run_metric_jobs(mapper, summarize_metric_job, jobs)
    built = [
        AggregateGroup(kind=group.kind, name=group.name, episode_indices=indices, missing_indices=missing,
                       robustness=robustness, metrics=metrics)
        for (group, indices, missing, robustness), metrics in zip(heads, per_group)
    ]
    missing_keys = tuple(key for key in ctx.scheduled if key[0] not in by_index)
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
    """One (group, metric) job of :func:`aggregate_from_values`: a pure function of its tuple.

    ``job`` is ``(name, values, floats, scheduled, observed, seed, resamples)``.
    """
    name, values, floats, scheduled, observed, seed, resamples = job
    return summarize_metric(name, values, floats, scheduled=scheduled, observed=observed, seed=seed,
                            resamples=resamples)


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
    if values:
        vector = ExactVector.build(values, np.asarray(floats, dtype=np.float64))
        statistics = describe(vector)
        interval = bootstrap_interval(vector, seed=seed, resamples=resamples, statistic="mean")
    else:
        statistics = describe(())
        interval = None
    return MetricSummary(
        metric=name,
        scheduled=scheduled,
        observed=observed,
        missing=scheduled - observed,
        undefined=observed - len(values),
        statistics=statistics,
        mean_ci=interval,
    )
