"""The report in Markdown, for pasting into papers and pull requests: the same order as the page.

Summary, leaderboard (the best mean of each column in bold), paired
comparisons, then the provenance folded in a ``<details>`` block (which
GitHub and most Markdown viewers render). The figures are in ``index.html``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..records.metric_defs import METRIC_NAMES
from .figures import metric_forest
from .findings import best_of, table_cells
from .report_summary import summary_markdown
from .svg import WLT_WORDS, wlt_text
from .tables import cell_text, group_cells, groups_of, metric_header, ordered_inputs, viewer_link
from .report_model import ACCOUNTING_COLUMNS, ACCOUNTING_NOTE, accounting_rows

if TYPE_CHECKING:
    from .report_model import Report


def _md(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return out + [""]


def _leaderboard(report: Report, kind: str, name: str) -> list[str]:
    best = {m: set(b.models) if (b := best_of(table_cells(report, kind, name, m), m)) else set()
            for m in METRIC_NAMES}
    rows = []
    for item in ordered_inputs(report, kind, name):
        g = group_cells(report, item.model_id, kind, name)
        link = f"[{_md(item.model_id)}]({viewer_link(item, kind, name)})"
        cells = []
        for m in METRIC_NAMES:
            text = _md(cell_text(None if g is None else g.cells[m]))
            cells.append(f"**{text}**" if item.model_id in best[m] else text)
        rows.append([link] + cells)
    return _table(["model"] + [metric_header(m) for m in METRIC_NAMES], rows)


def provenance_lines(report: Report) -> list[str]:
    """Where the report's numbers come from: suite, manifest, results and statistics, with digests."""
    first = report.inputs[0].collection
    lines = [
        f"- suite: `{report.suite.id}` {report.suite.version}, sha256 `{report.suite.hash}`",
        f"- evaluation manifest: sha256 `{first.manifest.hash}` ({len(first.manifest.episodes)} episodes)",
        f"- baseline: `{report.baseline}`",
        "",
    ]
    rows = [[_md(i.model_id), _md(i.collection.path.name), f"`{i.collection.digest}`", str(len(i.collection.values))]
            for i in report.inputs]
    lines += _table(["model", "result file", "result sha256", "episodes"], rows)
    stats = [*report.aggregates.values(), *report.comparisons.values()]
    rows = [[s.artifact, _md(" - ".join(s.models)), _md(s.origin), str(s.resamples), f"`{s.digest}`"] for s in stats]
    lines += _table(["statistics", "models", "source", "resamples", "sha256"], rows)
    return lines


def _comparisons(report: Report) -> list[str]:
    out = [f"## Paired comparisons against {_md(report.baseline)}", "",
           f"Deltas are model minus baseline on the same episodes; {WLT_WORDS} count paired episodes by the "
           "metric's direction.", ""]
    for item in report.inputs:
        summary = report.comparisons.get(item.model_id)
        if summary is None:
            continue
        out += [f"### {_md(item.model_id)} - {_md(report.baseline)}", ""]
        rows = []
        for row in metric_forest(summary):
            c = row.cell
            wlt = "-" if c.wins is None else wlt_text(c)
            rows.append([metric_header(row.metric), _md(cell_text(c)), wlt, row.verdict])
        out += _table(["metric", "mean delta [95 % interval]", f"paired episodes ({WLT_WORDS})", "verdict"], rows)
        rows = []
        for g in summary.groups[1:]:
            rows.append([_md(f"{g.kind} {g.name}")] + [_md(cell_text(g.cells[m])) for m in METRIC_NAMES])
        out += _table(["group"] + [metric_header(m) for m in METRIC_NAMES], rows)
    return out


def report_markdown(report: Report) -> bytes:
    """The Markdown file of the report."""
    order = f"ordered by {report.order_by}" if report.order_by else "in the order given"
    out = ["# EMBERBench report", "",
           "Every number comes from results verified by replaying every record. Metrics are never combined: "
           "each column is one metric with its own 95 % bootstrap interval (mean [lower, upper]); "
           "\u2191 means higher is better, \u2193 lower is better. Figures are in index.html.", ""]
    out += summary_markdown(report, _md)
    out += [f"## Leaderboard (all episodes, {order})", "",
            "Bold: the best mean of a column by the metric's direction (descriptive metrics have none).", ""]
    out += _leaderboard(report, "overall", "overall")
    for kind, name in groups_of(report):
        out += [f"### {kind} {_md(name)}", ""]
        out += _leaderboard(report, kind, name)
    out += _comparisons(report)
    out += ["## Built from", "", "<details><summary>Suite, manifest, result and statistics digests</summary>", ""]
    out += provenance_lines(report)
    out += ["</details>"]
    accounting = accounting_rows(report)
    if accounting:
        out += ["## Execution accounting", "", ACCOUNTING_NOTE, ""]
        out += _table(list(ACCOUNTING_COLUMNS), [[_md(row[0])] + row[1:] for row in accounting])
    return ("\n".join(out).rstrip() + "\n").encode("utf-8")
