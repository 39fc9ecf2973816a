"""Statistics as tables: in a notebook, in a terminal, and as rows for pandas and Arrow.

:class:`StatisticsView` is mixed into :class:`~.aggregate.AggregateStatistics`
and :class:`~.paired.PairedStatistics`. Every value comes from the
artifact's own output form (``table_form()``: the numbers the statistics
artifact holds, nothing recomputed):

* ``to_table()`` (and so ``to_pandas()``, ``to_arrow()``): one row per
  group and metric, the overall group first, then each scenario and each
  family: :data:`AGGREGATE_COLUMNS` or :data:`PAIRED_COLUMNS`;
* in Jupyter, the overall group's rows as an HTML table;
* in a rich terminal (``rich.print(stats)``), exactly the tables ``emberbench
  stats`` and ``compare`` print, laid out for the console's width.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..records.metric_defs import METRICS_BY_NAME
from ..tables.table import Column, Table, TableView, columns
from .table import artifact_lines

_SUMMARY = (("std", "float"), ("min", "float"), ("p25", "float"), ("median", "float"), ("p75", "float"),
            ("max", "float"))
AGGREGATE_COLUMNS: tuple[Column, ...] = columns(
    "model_id", "group_kind", "group", "metric", "direction", ("scheduled", "int"), ("observed", "int"),
    ("missing", "int"), ("undefined", "int"), ("n", "int"), ("mean", "float"), ("ci_lower", "float"),
    ("ci_upper", "float"), *_SUMMARY,
)
PAIRED_COLUMNS: tuple[Column, ...] = columns(
    "model_a", "model_b", "group_kind", "group", "metric", "direction", ("paired", "int"), ("missing_from_a", "int"),
    ("missing_from_b", "int"), ("undefined", "int"), ("n", "int"), ("mean_delta", "float"), ("ci_lower", "float"),
    ("ci_upper", "float"), ("a_better", "int"), ("b_better", "int"), ("ties", "int"), *_SUMMARY,
)
SHOWN_AGGREGATE = ("metric", "direction", "n", "undefined", "mean", "ci_lower", "ci_upper")
SHOWN_PAIRED = ("metric", "direction", "n", "mean_delta", "ci_lower", "ci_upper", "a_better", "b_better", "ties")


def _groups(form: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield form["overall"]
    yield from form.get("scenarios", ())
    yield from form.get("families", ())


def _summary(statistics: dict[str, Any] | None) -> tuple[Any, ...]:
    s = statistics or {}
    q = s.get("quantiles") or {}
    return (s.get("std"), s.get("min"), q.get("p25"), s.get("median"), q.get("p75"), s.get("max"))


def _interval(ci: dict[str, Any] | None) -> tuple[Any, Any]:
    return (None, None) if not ci else (ci.get("lower"), ci.get("upper"))


def aggregate_rows(form: dict[str, Any]) -> Iterator[tuple[Any, ...]]:
    """The rows of an aggregate artifact's output form (:data:`AGGREGATE_COLUMNS`)."""
    for group in _groups(form):
        for m in group["metrics"]:
            s = m.get("statistics") or {}
            yield (form["model_id"], group["kind"], group["name"], m["metric"],
                   METRICS_BY_NAME[m["metric"]].direction, m["scheduled"], m["observed"], m["missing"],
                   m["undefined"], s.get("n"), s.get("mean"), *_interval(m.get("mean_ci")), *_summary(s))


def paired_rows(form: dict[str, Any]) -> Iterator[tuple[Any, ...]]:
    """The rows of a paired artifact's output form (:data:`PAIRED_COLUMNS`)."""
    for group in _groups(form):
        for m in group["metrics"]:
            s = m.get("statistics") or {}
            yield (form["model_a"], form["model_b"], group["kind"], group["name"], m["metric"],
                   METRICS_BY_NAME[m["metric"]].direction, m["paired"], m["missing_from_a"], m["missing_from_b"],
                   m["undefined"], s.get("n"), s.get("mean"), *_interval(m.get("mean_delta_ci")), m.get("a_better"),
                   m.get("b_better"), m.get("ties"), *_summary(s))


class _CliTables:
    """The tables `stats`/`compare` print, as a rich renderable that takes the console's width."""

    def __init__(self, form: dict[str, Any]) -> None:
        self.form = form

    def __rich_console__(self, console: Any, options: Any) -> Iterator[Any]:
        from rich.text import Text

        for line in artifact_lines(self.form, options.max_width):
            yield Text(line.text, no_wrap=True, overflow="ignore")


class StatisticsView(TableView):
    """Mixin of the statistics artifacts: rows for pandas and Arrow, and the notebook and terminal views."""

    __slots__ = ()

    def to_table(self) -> Table:
        """One row per group and metric (overall, then scenarios, then families), values as in the artifact."""
        form = self.table_form()  # type: ignore[attr-defined]
        if form["artifact"] == "aggregate":
            rows, cols = tuple(aggregate_rows(form)), AGGREGATE_COLUMNS
            title = f"{form['model_id']}: aggregate statistics, {form['observed_episodes']} episodes"
            note = "mean and 95% percentile bootstrap interval of the mean, per metric; never combined"
        else:
            rows, cols = tuple(paired_rows(form)), PAIRED_COLUMNS
            title = (f"A = {form['model_a']} vs B = {form['model_b']}: paired statistics, {form['paired_count']} "
                     "paired episodes")
            note = ("mean_delta = mean of A - B per paired episode, with its 95% percentile bootstrap interval; "
                    "a_better / b_better = episodes where A / B did better")
        return Table(cols, rows, title=title, note=note)

    def _overall(self) -> Table:
        table = self.to_table()
        shown = SHOWN_AGGREGATE if table.columns is AGGREGATE_COLUMNS else SHOWN_PAIRED
        overall = Table(table.columns, tuple(r for r in table.rows if r[table.names.index("group_kind")] == "overall"),
                        title=table.title + " (overall; to_pandas() has every group)", note=table.note)
        return overall.select(*shown)

    def _repr_html_(self) -> str:
        return self._overall()._repr_html_()

    def __rich__(self) -> Any:
        return _CliTables(self.table_form())  # type: ignore[attr-defined]


__all__ = ["AGGREGATE_COLUMNS", "PAIRED_COLUMNS", "StatisticsView", "aggregate_rows", "paired_rows"]
