"""What a report leads with: the best mean on each metric, the clear paired differences, and caveats.

Everything here is read from the report's statistics; nothing is
combined across metrics and nothing new is computed about uncertainty:

* **best mean per metric**: for each metric with a direction, the model(s)
  with the best mean over all episodes (every model sharing it is named), with
  its 95 % interval. A best mean is not a claim that the model is better:
  the intervals say how far apart the means may be;
* **clear paired differences**: every (model, metric) whose paired 95 %
  interval against the baseline excludes zero, said in words (better or
  worse by the metric's direction) with the mean delta and its interval;
* **same values, different intervals**: models whose per-episode values of
  a metric are identical but whose intervals differ. The bootstrap stream
  of an interval is seeded by the result's digest (the statistics
  specification fixes that), so two results draw different resamples even
  from equal values; the report says so rather than presenting the
  difference as real.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..records.metric_defs import METRIC_NAMES, METRICS_BY_NAME
from .summary import Cell, verdict

if TYPE_CHECKING:
    from .report_model import Report


@dataclass(frozen=True, slots=True)
class Best:
    """The best mean of one metric in one table: every model that has it, and its cell."""

    metric: str
    models: tuple[str, ...]
    cell: Cell


@dataclass(frozen=True, slots=True)
class Difference:
    """A paired difference whose 95 % interval excludes zero."""

    model: str
    baseline: str
    metric: str
    verdict: str
    cell: Cell


@dataclass(frozen=True, slots=True)
class SameValues:
    """Models whose per-episode values of ``metric`` are identical while their intervals differ."""

    metric: str
    models: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Findings:
    """The report's summary (see the module docstring)."""

    best: tuple[Best, ...]
    differences: tuple[Difference, ...]
    unclear: int
    compared: int
    same_values: tuple[SameValues, ...]


def best_of(cells: dict[str, Cell | None], metric: str) -> Best | None:
    """The best mean of ``metric`` among ``cells`` (model -> cell), by its direction.

    None when the metric has no direction or fewer than two models have a
    mean (one model is not "best" of anything).
    """
    direction = METRICS_BY_NAME[metric].direction
    defined = [(m, c) for m, c in cells.items() if c is not None and c.mean is not None]
    if direction == "none" or len(defined) < 2:
        return None
    pick = max if direction == "higher" else min
    top = pick(c.mean for _, c in defined)  # type: ignore[type-var]
    winners = [(m, c) for m, c in defined if c.mean == top]
    return Best(metric=metric, models=tuple(m for m, _ in winners), cell=winners[0][1])


def table_cells(report: Report, kind: str, name: str, metric: str) -> dict[str, Cell | None]:
    """Every model's aggregate cell of ``metric`` in one leaderboard table (results in the order given)."""
    out: dict[str, Cell | None] = {}
    for item in report.inputs:
        g = report.aggregates[item.model_id].group(kind, name)
        out[item.model_id] = None if g is None else g.cells[metric]
    return out


def _same_values(report: Report) -> list[SameValues]:
    out = []
    for metric in METRIC_NAMES:
        groups: dict[tuple[object, ...], list[str]] = {}
        for item in report.inputs:
            key = tuple((v.index, v.values[metric]) for v in item.collection.values)
            groups.setdefault(key, []).append(item.model_id)
        for models in groups.values():
            if len(models) < 2:
                continue
            cells = [report.aggregates[m].overall.cells[metric] for m in models]
            if len({(c.lower, c.upper) for c in cells}) > 1:
                out.append(SameValues(metric=metric, models=tuple(models)))
    return out


def findings(report: Report) -> Findings:
    """The summary of a built report's statistics."""
    best = [b for m in METRIC_NAMES if (b := best_of(table_cells(report, "overall", "overall", m), m)) is not None]
    differences = []
    unclear = compared = 0
    for item in report.inputs:
        summary = report.comparisons.get(item.model_id)
        if summary is None:
            continue
        for metric in METRIC_NAMES:
            if METRICS_BY_NAME[metric].direction == "none":
                continue
            cell = summary.overall.cells[metric]
            compared += 1
            v = verdict(metric, cell)
            if v in ("better", "worse"):
                differences.append(Difference(model=item.model_id, baseline=report.baseline, metric=metric,
                                              verdict=v, cell=cell))
            else:
                unclear += 1
    return Findings(best=tuple(best), differences=tuple(differences), unclear=unclear, compared=compared,
                    same_values=tuple(_same_values(report)))


SAME_VALUES_WHY = (
    "Each interval's bootstrap draws are seeded by its result's digest (as the statistics specification "
    "requires, so that every artifact is reproducible on its own), so two results draw different resamples "
    "even from identical values: the difference between these intervals is resampling noise, not a "
    "difference between the models.")
