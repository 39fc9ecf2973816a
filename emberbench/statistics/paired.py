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

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..records.metric_defs import METRIC_NAMES, METRICS_BY_NAME
from .aggregate import Mapper, run_metric_jobs
from .artifact import ArtifactForm, context_header, key_dict, shared_sections
from .notebook import StatisticsView
from .bootstrap import BootstrapInterval, bootstrap_interval
from .columns import EpisodeTable, fraction_differences, table_from_values
from .descriptive import Descriptive, describe
from .exact import ExactVector, int_array, ratio_floats
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


class DeltaColumn(Sequence[tuple[int, Fraction]]):
    """The ``(index, A - B)`` pairs of one metric in one group, kept as arrays.

    It behaves as a sequence of ``(int, Fraction)`` tuples (made on access).
    It holds, or shares with the column of the whole comparison (see
    :meth:`view`), an index array and numerator and denominator arrays in
    lowest terms; a view holds only the rows it selects. The floats the
    artifact lists are computed when it is written.
    """

    __slots__ = ("_arrays", "_rows")

    def __init__(self, indices: np.ndarray, numerators: np.ndarray, denominators: np.ndarray) -> None:
        self._arrays = (np.asarray(indices, dtype=np.int64), int_array(numerators), int_array(denominators))
        self._rows: np.ndarray | None = None

    @classmethod
    def of_pairs(cls, pairs: Sequence[tuple[int, Fraction]]) -> DeltaColumn:
        """A column of ``(index, Fraction)`` pairs."""
        return cls(np.array([i for i, _ in pairs], dtype=np.int64), [d.numerator for _, d in pairs],
                   [d.denominator for _, d in pairs])

    @classmethod
    def view(cls, base: DeltaColumn, rows: np.ndarray) -> DeltaColumn:
        """The rows ``rows`` of ``base`` (a column of the whole comparison), sharing its arrays."""
        column = cls.__new__(cls)
        column._arrays = base._arrays
        every = base._rows is None and len(rows) == len(base) and bool(np.all(rows == np.arange(len(rows))))
        column._rows = None if every else (rows if base._rows is None else base._rows[rows]).astype(np.int32)
        return column

    def _part(self, k: int) -> np.ndarray:
        return self._arrays[k] if self._rows is None else self._arrays[k][self._rows]

    @property
    def indices(self) -> np.ndarray:
        """Manifest indices, in the group's order."""
        return self._part(0)

    @property
    def numerators(self) -> np.ndarray:
        """Numerators of the deltas in lowest terms."""
        return self._part(1)

    @property
    def denominators(self) -> np.ndarray:
        """Denominators of the deltas (positive)."""
        return self._part(2)

    @property
    def floats(self) -> np.ndarray:
        """The correctly rounded float of each delta (computed on request)."""
        return ratio_floats(self.numerators, self.denominators)

    def __len__(self) -> int:
        return len(self._arrays[0]) if self._rows is None else len(self._rows)

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            return [self[j] for j in range(*k.indices(len(self)))]
        row = k if self._rows is None else int(self._rows[k])
        indices, nums, dens = self._arrays
        return int(indices[row]), Fraction(int(nums[row]), int(dens[row]))

    def __iter__(self) -> Iterator[tuple[int, Fraction]]:
        for i, a, b in zip(self.indices.tolist(), self.numerators.tolist(), self.denominators.tolist(), strict=True):
            yield i, Fraction(a, b)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DeltaColumn):
            return (np.array_equal(self.indices, other.indices) and self.numerators.tolist() == other.numerators.tolist()
                    and self.denominators.tolist() == other.denominators.tolist())
        if isinstance(other, Sequence):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"DeltaColumn({len(self)} deltas)"

    def __getstate__(self) -> tuple[Any, Any]:
        return self._arrays, self._rows

    def __setstate__(self, state: tuple[Any, Any]) -> None:
        self._arrays, self._rows = state

    def output_form(self) -> list[list[Any]]:
        """``[[index, float], ...]`` as the artifact lists them."""
        return [[i, f] for i, f in zip(self.indices.tolist(), self.floats.tolist(), strict=True)]


@dataclass(frozen=True, slots=True)
class PairedMetric:
    """One metric compared in one group.

    Attributes:
        metric: the metric name.
        paired: paired episodes in the group.
        missing_from_a: scheduled episodes of the group that A lacks.
        missing_from_b: scheduled episodes of the group that B lacks.
        undefined: paired episodes where the metric is None for A or for B.
        deltas: ``(index, A - B)`` per defined paired episode, manifest order
            (a :class:`DeltaColumn`; any sequence of pairs is accepted).
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
    deltas: Sequence[tuple[int, Fraction]]
    statistics: Descriptive
    mean_delta_ci: BootstrapInterval | None
    delta_positive: int
    delta_negative: int
    delta_zero: int
    a_better: int | None
    b_better: int | None
    ties: int | None

    def __post_init__(self) -> None:
        if not isinstance(self.deltas, DeltaColumn):
            object.__setattr__(self, "deltas", DeltaColumn.of_pairs(tuple(self.deltas)))
        if self.statistics.n != self.paired - self.undefined or len(self.deltas) != self.statistics.n:
            raise ValueError("n must equal paired - undefined and the number of deltas")
        if self.delta_positive + self.delta_negative + self.delta_zero != len(self.deltas):
            raise ValueError("sign counts must add up to the number of deltas")

    def to_dict(self, *, deltas: bool = True) -> dict[str, Any]:
        """Return the output form (deltas as ``[index, float]`` pairs; an empty list if ``deltas`` is False)."""
        column = self.deltas
        assert isinstance(column, DeltaColumn)
        return {
            "metric": self.metric,
            "paired": self.paired,
            "missing_from_a": self.missing_from_a,
            "missing_from_b": self.missing_from_b,
            "undefined": self.undefined,
            "deltas": column.output_form() if deltas else [],
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

    def head(self) -> dict[str, Any]:
        """The output form without ``metrics``."""
        return {
            "kind": self.kind,
            "name": self.name,
            "paired_indices": list(self.paired_indices),
            "missing_from_a": list(self.missing_from_a),
            "missing_from_b": list(self.missing_from_b),
        }

    def to_dict(self, *, deltas: bool = True) -> dict[str, Any]:
        """Return the output form (without the delta lists if ``deltas`` is False)."""
        return {**self.head(), "metrics": [m.to_dict(deltas=deltas) for m in self.metrics]}


@dataclass(frozen=True, slots=True)
class PairedStatistics(StatisticsView, ArtifactForm):
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

    def form(self, render: Any) -> dict[str, Any]:
        """Return the section 10 layout, each group given by ``render(group)``."""
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
                              scenarios=self.scenarios, families=self.families, render=render),
        }


def _check_arguments(ctx: StatisticsContext, model_a: str, model_b: str, result_digest_a: str,
                     result_digest_b: str, resamples: int) -> None:
    """The checks every paired entry point makes first, in this order."""
    if not isinstance(ctx, StatisticsContext):
        raise TypeError("ctx must be a StatisticsContext")
    check_model_id(model_a, "model_a")
    check_model_id(model_b, "model_b")
    check_result_digest(result_digest_a, "result_digest_a")
    check_result_digest(result_digest_b, "result_digest_b")
    check_resamples(resamples)


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
    _check_arguments(ctx, model_a, model_b, result_digest_a, result_digest_b, resamples)
    by_a = index_episodes(ctx, episodes_a, "result A")
    by_b = index_episodes(ctx, episodes_b, "result B")
    return paired_from_tables(ctx, model_a, model_b, result_digest_a, result_digest_b,
                              table_from_values(list(by_a.values()), "result A"),
                              table_from_values(list(by_b.values()), "result B"), resamples, mapper=mapper)


def paired_from_tables(
    ctx: StatisticsContext,
    model_a: str,
    model_b: str,
    result_digest_a: str,
    result_digest_b: str,
    table_a: EpisodeTable,
    table_b: EpisodeTable,
    resamples: int = 2000,
    *,
    mapper: Mapper | None = None,
) -> PairedStatistics:
    """:func:`paired_from_values` over compact :class:`~.columns.EpisodeTable` objects (the same artifact).

    Raises:
        StatisticsInputError: as :func:`paired_from_values`.
    """
    _check_arguments(ctx, model_a, model_b, result_digest_a, result_digest_b, resamples)
    table_a.check_against(ctx, "result A")
    table_b.check_against(ctx, "result B")
    plan = plan_groups(ctx)

    # Every defined delta, computed once (index order) and shared by all groups.
    both = np.intersect1d(table_a.indices, table_b.indices)
    rows_a, _ = table_a.locate(both)
    rows_b, _ = table_b.locate(both)
    deltas: list[DeltaColumn] = []
    for col_a, col_b in zip(table_a.columns, table_b.columns, strict=True):
        defined = col_a.defined[rows_a] & col_b.defined[rows_b]
        ra, rb = rows_a[defined], rows_b[defined]
        num, den = fraction_differences(col_a.numerators[ra], col_a.denominators[ra], col_b.numerators[rb],
                                        col_b.denominators[rb])
        deltas.append(DeltaColumn(both[defined], num, den))

    groups = (plan.overall, *plan.scenarios, *plan.families)
    heads: list[tuple[Any, ...]] = []
    selected: list[np.ndarray] = []

    def jobs() -> Iterator[tuple[Any, ...]]:
        for group in groups:
            indices = np.array(group.indices, dtype=np.int64)
            in_a, in_b = table_a.locate(indices)[1], table_b.locate(indices)[1]
            paired = indices[in_a & in_b]
            lacks_a, lacks_b = tuple(indices[~in_a].tolist()), tuple(indices[~in_b].tolist())
            heads.append((group, tuple(paired.tolist()), lacks_a, lacks_b))
            for name, column in zip(METRIC_NAMES, deltas, strict=True):
                known = column.indices
                seed = bootstrap_seed(
                    purpose=PURPOSE,
                    evaluation_manifest_hash=ctx.evaluation_manifest_hash,
                    result_digests=[result_digest_a, result_digest_b],
                    group_kind=group.kind,
                    group_name=group.name,
                    metric=name,
                    resamples=resamples,
                )
                at = np.minimum(np.searchsorted(known, paired), max(len(known) - 1, 0))
                hit = known[at] == paired if len(known) else np.zeros(len(paired), dtype=bool)
                rows = at[hit]
                selected.append(rows)
                yield (column.numerators[rows], column.denominators[rows], seed, resamples)

    per_group = run_metric_jobs(mapper, compare_metric_job, jobs())
    # Each metric's deltas are kept once; every group's list is a view of them.
    width = len(METRIC_NAMES)
    built = [
        PairedGroup(group.kind, group.name, paired, lacks_a, lacks_b, tuple(
            result.metric(name, DeltaColumn.view(deltas[k], selected[g * width + k]), paired=len(paired),
                          missing_from_a=len(lacks_a), missing_from_b=len(lacks_b))
            for k, (name, result) in enumerate(zip(METRIC_NAMES, results, strict=True))))
        for g, ((group, paired, lacks_a, lacks_b), results) in enumerate(zip(heads, per_group))
    ]
    in_a, in_b = set(table_a.indices.tolist()), set(table_b.indices.tolist())
    return PairedStatistics(
        context=ctx,
        model_a=model_a,
        model_b=model_b,
        result_digest_a=result_digest_a,
        result_digest_b=result_digest_b,
        resamples=resamples,
        missing_from_a=tuple(key for key in ctx.scheduled if key[0] not in in_a),
        missing_from_b=tuple(key for key in ctx.scheduled if key[0] not in in_b),
        overall=built[0],
        scenarios=tuple(built[1:1 + len(plan.scenarios)]),
        families=tuple(built[1 + len(plan.scenarios):]),
    )


@dataclass(frozen=True, slots=True)
class MetricComparison:
    """What a (group, metric) job computes from the deltas: everything of a :class:`PairedMetric` but the deltas."""

    statistics: Descriptive
    mean_delta_ci: BootstrapInterval | None
    delta_positive: int
    delta_negative: int
    delta_zero: int

    def metric(self, name: str, column: DeltaColumn, *, paired: int, missing_from_a: int,
               missing_from_b: int) -> PairedMetric:
        """The :class:`PairedMetric` of ``name`` with these results and ``column`` as its deltas."""
        direction = METRICS_BY_NAME[name].direction
        positive, negative, zero = self.delta_positive, self.delta_negative, self.delta_zero
        if direction == "higher":
            a_better, b_better, ties = positive, negative, zero
        elif direction == "lower":
            a_better, b_better, ties = negative, positive, zero
        else:
            a_better = b_better = ties = None
        return PairedMetric(
            metric=name,
            paired=paired,
            missing_from_a=missing_from_a,
            missing_from_b=missing_from_b,
            undefined=paired - len(column),
            deltas=column,
            statistics=self.statistics,
            mean_delta_ci=self.mean_delta_ci,
            delta_positive=positive,
            delta_negative=negative,
            delta_zero=zero,
            a_better=a_better,
            b_better=b_better,
            ties=ties,
        )


def compare_metric_job(job: tuple[Any, ...]) -> MetricComparison:
    """One (group, metric) job of :func:`paired_from_tables`: a pure function of its tuple.

    ``job`` is ``(numerators, denominators, seed, resamples)``: the group's
    defined deltas as parts. The result leaves the deltas out (the caller
    keeps them once for every group).
    """
    nums, dens, seed, resamples = job
    return _comparison(ExactVector.from_parts(nums, dens) if len(nums) else None, seed=seed, resamples=resamples)


def compare_metric(
    name: str,
    pairs: Sequence[tuple[int, Fraction]],
    *,
    paired: int,
    missing_from_a: int,
    missing_from_b: int,
    seed: bytes,
    resamples: int,
) -> PairedMetric:
    """Build one metric's comparison from its ``(index, delta)`` pairs."""
    column = DeltaColumn.of_pairs(tuple(pairs))
    vector = ExactVector.from_parts(column.numerators, column.denominators, column.floats) if len(column) else None
    return _comparison(vector, seed=seed, resamples=resamples).metric(
        name, column, paired=paired, missing_from_a=missing_from_a, missing_from_b=missing_from_b)


def _comparison(vector: ExactVector | None, *, seed: bytes, resamples: int) -> MetricComparison:
    if vector is None:
        return MetricComparison(describe(()), None, 0, 0, 0)
    positive = int(np.count_nonzero(vector.numerators > 0))
    negative = int(np.count_nonzero(vector.numerators < 0))
    return MetricComparison(
        statistics=describe(vector),
        mean_delta_ci=bootstrap_interval(vector, seed=seed, resamples=resamples, statistic="mean_delta"),
        delta_positive=positive,
        delta_negative=negative,
        delta_zero=len(vector) - positive - negative,
    )
