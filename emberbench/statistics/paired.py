"""Paired comparison of two results of one manifest: per metric, per group.

An episode is paired when both results hold its manifest index (the caller
has already checked that both results belong to the same manifest and that
each entry equals its manifest key). For each metric, every paired episode
where the metric is defined for both A and B gives ``delta = A - B``. The
deltas get the same exact descriptive statistics and bootstrap interval as an
aggregate (the resampling unit is the paired episode), plus sign counts and,
for metrics with a direction, A-better / B-better / tie counts. Nothing is
counted across metrics.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..metric_defs import METRIC_NAMES, METRICS_BY_NAME
from .aggregate import Mapper, run_metric_jobs
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

PURPOSE = "paired_mean_delta"
DELTA = "A - B"


@dataclass(frozen=True, slots=True)
class PairedMetric:
    """One metric compared in one group.

    Attributes:
        metric: the metric name.
        paired: paired episodes in the group.
        missing_from_a: scheduled episodes of the group that A lacks.
        missing_from_b: scheduled episodes of the group that B lacks.
        undefined: paired episodes where the metric is None for A or for B.
        deltas: ``(index, A - B)`` per defined paired episode, manifest order.
        statistics: descriptive statistics of the deltas.
        mean_delta_ci: bootstrap interval of the mean delta (None if n < 5).
        delta_positive: deltas above zero.
        delta_negative: deltas below zero.
        delta_zero: deltas equal to zero.
        a_better: by the metric's direction; None for metrics without one.
        b_better: by the metric's direction; None for metrics without one.
        ties: zero deltas; None for metrics without a direction.
    """

    metric: str
    paired: int
    missing_from_a: int
    missing_from_b: int
    undefined: int
    deltas: tuple[tuple[int, Fraction], ...]
    statistics: Descriptive
    mean_delta_ci: BootstrapInterval | None
    delta_positive: int
    delta_negative: int
    delta_zero: int
    a_better: int | None
    b_better: int | None
    ties: int | None

    def __post_init__(self) -> None:
        if self.statistics.n != self.paired - self.undefined or len(self.deltas) != self.statistics.n:
            raise ValueError("n must equal paired - undefined and the number of deltas")
        if self.delta_positive + self.delta_negative + self.delta_zero != len(self.deltas):
            raise ValueError("sign counts must add up to the number of deltas")

    def to_dict(self) -> dict[str, Any]:
        """Return the output form (deltas as ``[index, float]`` pairs)."""
        return {
            "metric": self.metric,
            "paired": self.paired,
            "missing_from_a": self.missing_from_a,
            "missing_from_b": self.missing_from_b,
            "undefined": self.undefined,
            "deltas": [[index, float(delta)] for index, delta in self.deltas],
            "statistics": self.statistics.to_dict(),
            "mean_delta_ci": None if self.mean_delta_ci is None else self.mean_delta_ci.to_dict(),
            "delta_positive": self.delta_positive,
            "delta_negative": self.delta_negative,
            "delta_zero": self.delta_zero,
            "a_better": self.a_better,
            "b_better": self.b_better,
            "ties": self.ties,
        }


@dataclass(frozen=True, slots=True)
class PairedGroup:
    """The comparisons of one group.

    Attributes:
        kind: ``overall``, ``scenario`` or ``family``.
        name: ``overall``, the scenario id or the family id.
        paired_indices: indices present in both results, manifest order.
        missing_from_a: scheduled indices of the group that A lacks.
        missing_from_b: scheduled indices of the group that B lacks.
        metrics: one comparison per metric, in metric table order.
    """

    kind: str
    name: str
    paired_indices: tuple[int, ...]
    missing_from_a: tuple[int, ...]
    missing_from_b: tuple[int, ...]
    metrics: tuple[PairedMetric, ...]

    def to_dict(self) -> dict[str, Any]:
        """Return the output form."""
        return {
            "kind": self.kind,
            "name": self.name,
            "paired_indices": list(self.paired_indices),
            "missing_from_a": list(self.missing_from_a),
            "missing_from_b": list(self.missing_from_b),
            "metrics": [m.to_dict() for m in self.metrics],
        }


@dataclass(frozen=True, slots=True)
class PairedStatistics(ArtifactForm):
    """The paired statistics artifact of results A and B.

    Attributes:
        context: the shared manifest and suite description.
        model_a: A's model label.
        model_b: B's model label.
        result_digest_a: SHA-256 of A's canonical result artifact.
        result_digest_b: SHA-256 of B's canonical result artifact.
        resamples: bootstrap resamples per interval.
        missing_from_a: scheduled keys A has no result for, manifest order.
        missing_from_b: scheduled keys B has no result for, manifest order.
        overall: the overall group.
        scenarios: scenario groups, suite manifest order.
        families: family groups, declaration order.
    """

    context: StatisticsContext
    model_a: str
    model_b: str
    result_digest_a: str
    result_digest_b: str
    resamples: int
    missing_from_a: tuple[EpisodeKey, ...]
    missing_from_b: tuple[EpisodeKey, ...]
    overall: PairedGroup
    scenarios: tuple[PairedGroup, ...]
    families: tuple[PairedGroup, ...]

    @property
    def paired_count(self) -> int:
        """Episodes present in both results."""
        return len(self.overall.paired_indices)

    def to_dict(self) -> dict[str, Any]:
        """Return the section 10 layout, floats only here."""
        return {
            **context_header(self.context),
            "artifact": "paired",
            "model_a": self.model_a,
            "model_b": self.model_b,
            "result_digest_a": self.result_digest_a,
            "result_digest_b": self.result_digest_b,
            "delta": DELTA,
            "scheduled_episodes": len(self.context.scheduled),
            "paired_count": self.paired_count,
            "missing_from_a": [key_dict(k) for k in self.missing_from_a],
            "missing_from_b": [key_dict(k) for k in self.missing_from_b],
            **shared_sections(purpose=PURPOSE, resamples=self.resamples, overall=self.overall,
                              scenarios=self.scenarios, families=self.families),
        }


def paired_from_values(
    ctx: StatisticsContext,
    model_a: str,
    model_b: str,
    result_digest_a: str,
    result_digest_b: str,
    episodes_a: Sequence[EpisodeValues],
    episodes_b: Sequence[EpisodeValues],
    resamples: int = 2000,
    *,
    mapper: Mapper | None = None,
) -> PairedStatistics:
    """Compare two verified results of one manifest, per metric and group.

    Args:
        ctx: the shared manifest and suite description.
        model_a: A's model label.
        model_b: B's model label.
        result_digest_a: SHA-256 (hex) of A's canonical result artifact.
        result_digest_b: SHA-256 (hex) of B's canonical result artifact.
        episodes_a: A's observed episodes, any order.
        episodes_b: B's observed episodes, any order.
        resamples: bootstrap resamples, an int in ``[100, 1_000_000]``.
        mapper: computes the (group, metric) jobs (see
            :data:`~.aggregate.Mapper`); in process, in order, by default.

    Raises:
        StatisticsInputError: for an invalid argument, a duplicate or
            unscheduled episode index, or a scenario that differs from the
            schedule.
    """
    if not isinstance(ctx, StatisticsContext):
        raise TypeError("ctx must be a StatisticsContext")
    check_model_id(model_a, "model_a")
    check_model_id(model_b, "model_b")
    check_result_digest(result_digest_a, "result_digest_a")
    check_result_digest(result_digest_b, "result_digest_b")
    check_resamples(resamples)
    by_a = index_episodes(ctx, episodes_a, "result A")
    by_b = index_episodes(ctx, episodes_b, "result B")
    plan = plan_groups(ctx)

    # Every defined delta, computed once and shared by all groups.
    deltas: dict[str, dict[int, Fraction]] = {name: {} for name in METRIC_NAMES}
    for index in sorted(set(by_a) & set(by_b)):
        for name in METRIC_NAMES:
            a, b = by_a[index].values[name], by_b[index].values[name]
            if a is not None and b is not None:
                deltas[name][index] = a - b

    groups = (plan.overall, *plan.scenarios, *plan.families)
    heads = []
    jobs = []
    for group in groups:
        paired = tuple(i for i in group.indices if i in by_a and i in by_b)
        lacks_a = tuple(i for i in group.indices if i not in by_a)
        lacks_b = tuple(i for i in group.indices if i not in by_b)
        heads.append((group, paired, lacks_a, lacks_b))
        for name in METRIC_NAMES:
            seed = bootstrap_seed(
                purpose=PURPOSE,
                evaluation_manifest_hash=ctx.evaluation_manifest_hash,
                result_digests=[result_digest_a, result_digest_b],
                group_kind=group.kind,
                group_name=group.name,
                metric=name,
                resamples=resamples,
            )
            pairs = tuple((i, deltas[name][i]) for i in paired if i in deltas[name])
            jobs.append((name, pairs, len(paired), len(lacks_a), len(lacks_b), seed, resamples))
    per_group = run_metric_jobs(mapper, compare_metric_job, jobs)
    built = [
        PairedGroup(group.kind, group.name, paired, lacks_a, lacks_b, metrics)
        for (group, paired, lacks_a, lacks_b), metrics in zip(heads, per_group)
    ]
    return PairedStatistics(
        context=ctx,
        model_a=model_a,
        model_b=model_b,
        result_digest_a=result_digest_a,
        result_digest_b=result_digest_b,
        resamples=resamples,
        missing_from_a=tuple(key for key in ctx.scheduled if key[0] not in by_a),
        missing_from_b=tuple(key for key in ctx.scheduled if key[0] not in by_b),
        overall=built[0],
        scenarios=tuple(built[1:1 + len(plan.scenarios)]),
        families=tuple(built[1 + len(plan.scenarios):]),
    )


def compare_metric_job(job: tuple[Any, ...]) -> PairedMetric:
    """One (group, metric) job of :func:`paired_from_values`: a pure function of its tuple.

    ``job`` is ``(name, pairs, paired, missing_from_a, missing_from_b, seed, resamples)``.
    """
    name, pairs, paired, missing_from_a, missing_from_b, seed, resamples = job
    return compare_metric(name, pairs, paired=paired, missing_from_a=missing_from_a,
                          missing_from_b=missing_from_b, seed=seed, resamples=resamples)


def compare_metric(
    name: str,
    pairs: tuple[tuple[int, Fraction], ...],
    *,
    paired: int,
    missing_from_a: int,
    missing_from_b: int,
    seed: bytes,
    resamples: int,
) -> PairedMetric:
    """Build one metric's comparison from its ``(index, delta)`` pairs."""
    values = [delta for _, delta in pairs]
    positive = sum(d > 0 for d in values)
    negative = sum(d < 0 for d in values)
    zero = len(values) - positive - negative
    direction = METRICS_BY_NAME[name].direction
    if direction == "higher":
        a_better, b_better, ties = positive, negative, zero
    elif direction == "lower":
        a_better, b_better, ties = negative, positive, zero
    else:
        a_better = b_better = ties = None
    if values:
        vector = ExactVector.build(values, np.fromiter((float(d) for d in values), np.float64))
        statistics = describe(vector)
        interval = bootstrap_interval(vector, seed=seed, resamples=resamples, statistic="mean_delta")
    else:
        statistics = describe(())
        interval = None
    return PairedMetric(
        metric=name,
        paired=paired,
        missing_from_a=missing_from_a,
        missing_from_b=missing_from_b,
        undefined=paired - len(values),
        deltas=pairs,
        statistics=statistics,
        mean_delta_ci=interval,
        delta_positive=positive,
        delta_negative=negative,
        delta_zero=zero,
        a_better=a_better,
        b_better=b_better,
        ties=ties,
    )
