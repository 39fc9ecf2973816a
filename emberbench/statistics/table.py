"""Terminal tables of a statistics artifact, rendered with rich.

The tables read the artifact's dictionary form (as saved), so they show
exactly what the JSON holds. Each row is one metric. There is deliberately no
column or row that adds, averages or votes across metrics: a paired table
shows A better / B better / ties per metric, by that metric's direction, and
a dash for metrics without a direction.
"""

from __future__ import annotations

import sys

from collections.abc import Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

DIRECTION_LABELS = {"higher": "higher", "lower": "lower", "none": "none"}
"""How the ``better`` column shows each metric's direction."""
GROUP_SECTIONS = ("scenarios", "families")


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"


def _bound(value: float) -> str:
    return f"{value:.3g}"


def _interval(ci: Mapping[str, Any] | None) -> str:
    if ci is None:
        return "— (n<5)"
    return f"[{_bound(ci['lower'])}, {_bound(ci['upper'])}]"


def _count(value: int | None) -> str:
    return "—" if value is None else str(value)


def _label(group: Mapping[str, Any]) -> str:
    return "overall" if group["kind"] == "overall" else f"{group['kind']} {group['name']}"


def _definitions(artifact: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {d["metric"]: d for d in artifact["metric_definitions"]}


def _selected_groups(artifact: Mapping[str, Any], groups: str) -> list[Mapping[str, Any]]:
    if groups not in ("overall", "all"):
        raise ValueError("groups must be 'overall' or 'all'")
    selected = [artifact["overall"]]
    if groups == "all":
        for section in GROUP_SECTIONS:
            selected.extend(artifact[section])
    return selected


def aggregate_table(artifact: Mapping[str, Any], group: Mapping[str, Any]) -> Table:
    """Return the table of one group of an aggregate artifact."""
    defs = _definitions(artifact)
    robust = group["robustness"]
    table = Table(
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
        title=f"{artifact['model_id']} · {_label(group)}",
        caption=(
            f"episodes: {robust['scheduled']} scheduled, {robust['observed']} observed, "
            f"{robust['missing']} missing · 95% percentile bootstrap of the mean"
        ),
    )
    table.add_column("metric", no_wrap=True)
    table.add_column("better", no_wrap=True)
    for header in ("n", "undef", "mean", "95% interval"):
        table.add_column(header, justify="right", no_wrap=True)
    for entry in group["metrics"]:
        d = defs[entry["metric"]]
        stats = entry["statistics"]
        table.add_row(
            entry["metric"], DIRECTION_LABELS[d["direction"]], str(stats["n"]),
            str(entry["undefined"]), _number(stats["mean"]), _interval(entry["mean_ci"]),
        )
    return table


def paired_table(artifact: Mapping[str, Any], group: Mapping[str, Any]) -> Table:
    """Return the table of one group of a paired artifact."""
    defs = _definitions(artifact)
    table = Table(
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
        title=(
            f"A = {artifact['model_a']} vs B = {artifact['model_b']} · "
            f"{_label(group)}"
        ),
        caption=(
            f"delta = {artifact['delta']} · {len(group['paired_indices'])} paired, "
            f"{len(group['missing_from_a'])} missing from A, "
            f"{len(group['missing_from_b'])} missing from B · counts are per metric only"
        ),
    )
    table.add_column("metric", no_wrap=True)
    table.add_column("better", no_wrap=True)
    for header in ("n", "mean A-B", "95% interval", "A better", "B better", "ties"):
        table.add_column(header, justify="right", no_wrap=True)
    for entry in group["metrics"]:
        d = defs[entry["metric"]]
        stats = entry["statistics"]
        table.add_row(
            entry["metric"], DIRECTION_LABELS[d["direction"]], str(stats["n"]),
            _number(stats["mean"]), _interval(entry["mean_delta_ci"]),
            _count(entry["a_better"]), _count(entry["b_better"]), _count(entry["ties"]),
        )
    return table


def artifact_tables(artifact: Mapping[str, Any], *, groups: str = "overall") -> list[Table]:
    """Return one table per selected group of an aggregate or paired artifact.

    Args:
        artifact: the artifact's dictionary form.
        groups: ``overall`` (the default) or ``all`` (overall, then every
            scenario, then every family).

    Raises:
        ValueError: for an unknown artifact kind or ``groups`` value.
    """
    kind = artifact.get("artifact")
    if kind == "aggregate":
        build = aggregate_table
    elif kind == "paired":
        build = paired_table
    else:
        raise ValueError(f"not a statistics artifact: artifact = {kind!r}")
    return [build(artifact, group) for group in _selected_groups(artifact, groups)]


def render_artifact(
    artifact: Mapping[str, Any], console: Console | None = None, *, groups: str = "overall"
) -> None:
    """Print the tables of ``artifact`` to ``console`` (stdout by default)."""
    # Off a terminal rich assumes 80 columns, which truncates the paired table.
    out = console if console is not None else Console(width=None if sys.stdout.isatty() else 120)
    tables: Sequence[Table] = artifact_tables(artifact, groups=groups)
    note = Text(
        "Intervals describe this evaluation sample only. No metric is combined with another.",
        style="dim",
    )
    out.print(Group(*tables, note))
