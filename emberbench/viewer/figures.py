"""The data of every figure, derived once; the report (SVG) and ``plot`` (matplotlib) only draw it.

* forest plots: one row per metric (overall group), or one row per group for
  one metric, each with the mean delta and its 95 % interval;
* win/loss/tie bars: per metric, paired episodes where the model was better,
  worse or equal to the baseline;
* egress curves: per scenario and model, the cumulative share of people
  evacuated by the end of each step, over all of that scenario's episodes;
* casualty heat maps: per scenario and model, casualties per cell divided by
  the number of episodes.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import PresentationError
from ..records.metric_defs import METRIC_NAMES
from ..sim.scenario import Scenario
from .collect import ResultCollection
from .summary import Cell, StatsSummary, verdict


@dataclass(frozen=True, slots=True)
class ForestRow:
    """One row of a forest plot."""

    label: str
    metric: str
    cell: Cell
    verdict: str


@dataclass(frozen=True, slots=True)
class EgressCurve:
    """One model's egress curve on one scenario: share evacuated by the end of steps ``0..max_steps``."""

    model: str
    shares: tuple[float, ...]
    episodes: int


@dataclass(frozen=True, slots=True)
class HeatMap:
    """One model's casualties per cell per episode on one scenario (row-major)."""

    model: str
    scenario: Scenario
    per_episode: tuple[float, ...]
    episodes: int
    casualties: int


def metric_forest(paired: StatsSummary) -> list[ForestRow]:
    """Rows of the overall forest plot: one per metric, in metric table order."""
    cells = paired.overall.cells
    return [ForestRow(label=name, metric=name, cell=cells[name], verdict=verdict(name, cells[name]))
            for name in METRIC_NAMES]


def group_forest(paired: StatsSummary, metric: str) -> list[ForestRow]:
    """Rows of one metric's forest plot: overall, then every scenario, then every family."""
    if metric not in METRIC_NAMES:
        raise PresentationError(f"unknown metric {metric!r}; choose one of {', '.join(METRIC_NAMES)}")
    rows = []
    for g in paired.groups:
        label = "overall" if g.kind == "overall" else f"{g.kind} {g.name}"
        rows.append(ForestRow(label=label, metric=metric, cell=g.cells[metric], verdict=verdict(metric, g.cells[metric])))
    return rows


def egress_curves(collections: list[ResultCollection], scenario_id: str) -> list[EgressCurve]:
    """Every model's egress curve on ``scenario_id`` (models in the order given)."""
    out = []
    for c in collections:
        tally = c.tallies.get(scenario_id)
        if tally is not None:
            out.append(EgressCurve(model=c.model_id, shares=tuple(tally.egress()), episodes=tally.episodes))
    if not out:
        raise PresentationError(f"no result has episodes of scenario {scenario_id!r}")
    return out


def heat_maps(collections: list[ResultCollection], scenario: Scenario) -> list[HeatMap]:
    """Every model's casualty heat map on ``scenario`` (models in the order given)."""
    out = []
    for c in collections:
        tally = c.tallies.get(scenario.id)
        if tally is not None:
            per = tuple((tally.casualties_at / max(1, tally.episodes)).tolist())
            out.append(HeatMap(model=c.model_id, scenario=scenario, per_episode=per, episodes=tally.episodes,
                               casualties=int(tally.casualties_at.sum())))
    if not out:
        raise PresentationError(f"no result has episodes of scenario {scenario.id!r}")
    return out


def scenario_ids(collections: list[ResultCollection], order: list[str]) -> list[str]:
    """Scenario ids that appear in any result, in suite order."""
    present = {sid for c in collections for sid in c.tallies}
    return [sid for sid in order if sid in present]
