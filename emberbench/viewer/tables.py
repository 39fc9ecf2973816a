"""Table contents shared by the HTML and the Markdown report: which rows, in which order, what text."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..records.metric_defs import METRICS_BY_NAME
from .summary import Cell, GroupCells
from .text import cell_text

if TYPE_CHECKING:
    from .report_model import Report, ReportInput

ARROW = {"higher": "\u2191", "lower": "\u2193", "none": ""}
KINDS = ("outcome", "behaviour", "proxy", "descriptive")
"""Metric kinds in table order: the leaderboard's column groups."""

__all__ = ["ARROW", "KINDS", "cell_text", "group_cells", "groups_of", "metric_header", "ordered_inputs",
           "sort_key", "viewer_link"]


def metric_header(name: str) -> str:
    """A metric's column title with its direction arrow (higher or lower is better)."""
    arrow = ARROW[METRICS_BY_NAME[name].direction]
    return f"{name} {arrow}".strip()


def sort_key(metric: str, cell: Cell | None) -> tuple[int, float]:
    """Order for ``--order-by``: best first by the metric's direction (largest first without one); undefined last."""
    if cell is None or cell.mean is None:
        return (1, 0.0)
    sign = 1.0 if METRICS_BY_NAME[metric].direction == "lower" else -1.0
    return (0, sign * cell.mean)


def groups_of(report: Report) -> list[tuple[str, str]]:
    """(kind, name) of every group after ``overall``: scenarios, then families (first result's order)."""
    first = report.aggregates[report.inputs[0].model_id]
    return [(g.kind, g.name) for g in first.groups[1:]]


def group_cells(report: Report, model: str, kind: str, name: str) -> GroupCells | None:
    """One model's aggregate cells of one group."""
    return report.aggregates[model].group(kind, name)


def ordered_inputs(report: Report, kind: str = "overall", name: str = "overall") -> list[ReportInput]:
    """The results in leaderboard order for one group (as given, or by ``report.order_by``)."""
    items = list(report.inputs)
    if report.order_by is None:
        return items
    metric = report.order_by

    def key(item: ReportInput) -> tuple[int, float]:
        g = group_cells(report, item.model_id, kind, name)
        return sort_key(metric, None if g is None else g.cells[metric])

    return sorted(items, key=key)


def viewer_link(item: ReportInput, kind: str = "overall", name: str = "overall") -> str:
    """The viewer page of a result, opened on the scenario's representative episode for a scenario row."""
    if kind == "scenario" and name in item.representatives:
        return f"{item.viewer}#episode={item.representatives[name]}"
    return item.viewer
