"""Terminal tables of a statistics artifact: every number shown whole, at any width.

The tables read the artifact's dictionary form (as saved), so they show
exactly what the JSON holds. Each row is one metric. There is deliberately no
column or row that adds, averages or votes across metrics: a paired table
shows A better / B better / ties per metric, by that metric's direction, and
a dash for metrics without a direction.

Layout (:mod:`.table_layout`): the widest form that fits the width is used
(full metric names and headers on a wide terminal; short headers, then
metric abbreviations with a legend; then one block per metric), and a number
is never cut. On a terminal the width is the terminal's; when the output is
piped or redirected it is ``$COLUMNS`` if set, else 80, and the text is plain
(no colour, no box-drawing characters, no trailing spaces).
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Mapping
from enum import Enum
from typing import Any, TextIO

from ..errors import StatisticsInputError
from .table_layout import Column, Line, Row, TextTable, layout, wrap_lines

DIRECTION_LABELS = {"higher": "higher", "lower": "lower", "none": "none"}
"""How the ``better`` column shows each metric's direction."""

ABBREVIATIONS = {
    "evacuated_rate": "evac",
    "casualty_rate": "casualty",
    "stranded_rate": "stranded",
    "terminal_trapped_rate": "trapped",
    "mean_person_time_to_safety": "time",
    "blocked_rate": "blocked",
    "congestion_block_rate": "congest",
    "aggregate_path_efficiency": "path_eff",
    "mean_exposure": "exposure",
    "exits_used": "exits",
    "max_exit_share": "max_share",
    "exit_balance": "balance",
}
"""Short metric names for narrow tables (a legend under the table spells them out)."""

PIPE_WIDTH = 80
"""Width of piped output when ``$COLUMNS`` is not set."""

NOTE = "Intervals describe this evaluation sample only. No metric is combined with another."


class Groups(str, Enum):
    """Which groups of an artifact get a table."""

    OVERALL = "overall"
    SCENARIO = "scenario"
    FAMILY = "family"
    ALL = "all"


AGGREGATE_COLUMNS = (
    Column("better", "dir", "dir = the better direction", left=True),
    Column("n", "n"),
    Column("undef", "undef"),
    Column("mean", "mean"),
    Column("95% interval", "95% CI"),
)
PAIRED_COLUMNS = (
    Column("better", "dir", "dir = the better direction", left=True),
    Column("n", "n"),
    Column("mean A-B", "A-B", "A-B = mean A - B"),
    Column("95% interval", "95% CI"),
    Column("A better", "A+", "A+ / B+ = episodes where A / B did better"),
    Column("B better", "B+"),
    Column("ties", "tie"),
)


def _number(value: float | None, where: str) -> str:
    if value is None:
        return "—"
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        raise StatisticsInputError(f"{where}: the mean must be a finite number or null, got {value!r:.40}")
    return f"{value:.4g}"


def _bound(value: float) -> str:
    return f"{value:.3g}"


def _interval(ci: Mapping[str, Any] | None, where: str) -> str:
    if ci is None:
        return "— (n<5)"
    from .reader import interval_bounds

    lower, upper = interval_bounds(ci, where=where)
    return f"[{_bound(lower)}, {_bound(upper)}]"


def _count(value: int | None) -> str:
    return "—" if value is None else str(value)


def _label(group: Mapping[str, Any]) -> str:
    return "overall" if group["kind"] == "overall" else f"{group['kind']} {group['name']}"


def _definitions(artifact: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {d["metric"]: d for d in artifact["metric_definitions"]}


def _selected_groups(artifact: Mapping[str, Any], groups: Groups | str) -> list[Mapping[str, Any]]:
    try:
        choice = Groups(groups)
    except ValueError:
        raise ValueError(f"groups must be one of {', '.join(g.value for g in Groups)}, got {groups!r}") from None
    selected = []
    if choice in (Groups.OVERALL, Groups.ALL):
        selected.append(artifact["overall"])
    if choice in (Groups.SCENARIO, Groups.ALL):
        selected.extend(artifact["scenarios"])
    if choice in (Groups.FAMILY, Groups.ALL):
        selected.extend(artifact["families"])
    return selected


def _row(metric: str, cells: tuple[str, ...]) -> Row:
    return Row(metric, ABBREVIATIONS.get(metric, metric), cells)


def aggregate_table(artifact: Mapping[str, Any], group: Mapping[str, Any]) -> TextTable:
    """Return the table of one group of an aggregate artifact."""
    defs = _definitions(artifact)
    robust = group["robustness"]
    rows = []
    for entry in group["metrics"]:
        stats = entry["statistics"]
        where = f"{_label(group)}: {entry['metric']}"
        rows.append(_row(entry["metric"], (
            DIRECTION_LABELS[defs[entry["metric"]]["direction"]], str(stats["n"]), str(entry["undefined"]),
            _number(stats["mean"], where), _interval(entry["mean_ci"], where),
        )))
    return TextTable(
        title=f"{artifact['model_id']} · {_label(group)}",
        caption=(f"episodes: {robust['scheduled']} scheduled, {robust['observed']} observed, "
                 f"{robust['missing']} missing · 95% percentile bootstrap of the mean"),
        label_header="metric", columns=AGGREGATE_COLUMNS, rows=tuple(rows),
    )


def paired_table(artifact: Mapping[str, Any], group: Mapping[str, Any]) -> TextTable:
    """Return the table of one group of a paired artifact."""
    defs = _definitions(artifact)
    rows = []
    for entry in group["metrics"]:
        stats = entry["statistics"]
        where = f"{_label(group)}: {entry['metric']}"
        rows.append(_row(entry["metric"], (
            DIRECTION_LABELS[defs[entry["metric"]]["direction"]], str(stats["n"]), _number(stats["mean"], where),
            _interval(entry["mean_delta_ci"], where), _count(entry["a_better"]), _count(entry["b_better"]),
            _count(entry["ties"]),
        )))
    return TextTable(
        title=f"A = {artifact['model_a']} vs B = {artifact['model_b']} · {_label(group)}",
        caption=(f"delta = {artifact['delta']} · {len(group['paired_indices'])} paired, "
                 f"{len(group['missing_from_a'])} missing from A, {len(group['missing_from_b'])} missing from B "
                 "· counts are per metric only"),
        label_header="metric", columns=PAIRED_COLUMNS, rows=tuple(rows),
    )


def artifact_tables(artifact: Mapping[str, Any], *, groups: Groups | str = Groups.OVERALL) -> list[TextTable]:
    """Return one table per selected group of an aggregate or paired artifact.

    Args:
        artifact: the artifact's dictionary form.
        groups: ``overall`` (the default), ``scenario`` (one table per
            scenario), ``family`` (one per family) or ``all`` (overall, then
            every scenario, then every family).

    Raises:
        ValueError: for an unknown artifact kind or ``groups`` value.
        StatisticsInputError: a mean that is not a finite number, or an
            interval whose bounds are not two finite numbers in order (lower
            not above upper): a forged form is refused, never shown.
    """
    kind = artifact.get("artifact")
    if kind == "aggregate":
        build = aggregate_table
    elif kind == "paired":
        build = paired_table
    else:
        raise ValueError(f"not a statistics artifact: artifact = {kind!r}")
    return [build(artifact, group) for group in _selected_groups(artifact, groups)]


def artifact_lines(artifact: Mapping[str, Any], width: int, *, groups: Groups | str = Groups.OVERALL) -> list[Line]:
    """Every line of the tables of ``artifact`` laid out for ``width`` columns, then the closing note."""
    lines: list[Line] = []
    for k, table in enumerate(artifact_tables(artifact, groups=groups)):
        if k:
            lines.append(Line("", "row"))
        lines += layout(table, width)
    lines.append(Line("", "row"))
    return lines + wrap_lines(NOTE, width, "caption")


def render_text(artifact: Mapping[str, Any], width: int, *, groups: Groups | str = Groups.OVERALL) -> str:
    """The tables of ``artifact`` as plain text for ``width`` columns (what a pipe receives)."""
    return "".join(line.text + "\n" for line in artifact_lines(artifact, width, groups=groups))


def pipe_width(environ: Mapping[str, str] | None = None) -> int:
    """The width of piped output: ``$COLUMNS`` when it is a number of at least 20, else 80."""
    value = (os.environ if environ is None else environ).get("COLUMNS", "")
    return int(value) if value.isdigit() and int(value) >= 20 else PIPE_WIDTH


_STYLES = {"title": "bold", "header": "bold", "rule": "dim", "caption": "dim", "legend": "dim"}


def render_artifact(artifact: Mapping[str, Any], console: Any = None, *, groups: Groups | str = Groups.OVERALL,
                    out: TextIO | None = None) -> None:
    """Print the tables of ``artifact``.

    Args:
        artifact: the artifact's dictionary form.
        console: a rich Console to print to (its width is used; styles and
            box-drawing rules only when it is a terminal). Without one,
            stdout: styled at the terminal's width on a terminal, else plain
            text at :func:`pipe_width`.
        groups: which groups get a table (:class:`Groups`).
        out: where plain text goes when there is no console (stdout).
    """
    stream = out if out is not None else sys.stdout
    if console is None:
        if not stream.isatty():
            stream.write(render_text(artifact, pipe_width(), groups=groups))
            return
        from rich.console import Console

        console = Console(file=stream)
    from rich.text import Text

    terminal = console.is_terminal
    for line in artifact_lines(artifact, console.width, groups=groups):
        text = line.text.replace("-", "─") if terminal and line.role == "rule" else line.text
        console.print(Text(text, style=_STYLES.get(line.role, "") if terminal else ""), no_wrap=True,
                      overflow="ignore", crop=False, soft_wrap=True)
