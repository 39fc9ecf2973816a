"""The report as one static HTML page: findings first, then tables, inline SVG figures, provenance last.

Order: a summary in words (:mod:`.report_summary`), the leaderboard (one
metric kind's columns at a time, so it fits a laptop screen; the best mean
of each column marked), the paired comparisons, egress curves and casualty
heat maps, and the provenance (digests and statistics sources) folded at the
end. Nothing is fetched: figures are inline SVG, the script is inline.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from ..records.metric_defs import METRIC_NAMES, METRICS_BY_NAME
from .figures import egress_curves, group_forest, heat_maps, metric_forest, scenario_ids
from .findings import best_of, table_cells
from .page import asset_text
from .report_summary import DIRECTION_WORDS, summary_html
from .summary import Cell
from .svg import WLT_WORDS, egress_svg, forest_svg, heatmap_svg, wlt_svg
from .tables import ARROW, KINDS, group_cells, groups_of, ordered_inputs, viewer_link
from .text import fmt, interval_text
from .report_model import ACCOUNTING_COLUMNS, ACCOUNTING_NOTE, accounting_rows

if TYPE_CHECKING:
    from .report_model import Report


def _cell_html(metric: str, cell: Cell | None, best: bool) -> str:
    kind = METRICS_BY_NAME[metric].kind
    if cell is None or cell.mean is None:
        return f'<td class="k-{kind}" title="undefined">-</td>'
    mark = '<span class="star" aria-label="best">\u2605</span>' if best else ""
    title = f"n {cell.n}, undefined {cell.undefined}" + ("; best mean of this column" if best else "")
    return (f'<td class="k-{kind}{" best" if best else ""}" title="{title}">{mark}<span class="mean">'
            f'{escape(fmt(cell.mean))}</span><span class="ci">{escape(interval_text(cell))}</span></td>')


def _header(metric: str) -> str:
    m = METRICS_BY_NAME[metric]
    name = escape(metric).replace("_", "_<wbr>")
    arrow = ARROW[m.direction]
    return (f'<th class="k-{m.kind}" data-metric="{metric}" data-kind="{m.kind}" data-direction="{m.direction}" '
            f'title="{escape(m.definition)}; {escape(DIRECTION_WORDS[m.direction])}">{name}'
            f'{" " + arrow if arrow else ""}</th>')


def _leaderboard(report: Report, kind: str, name: str) -> str:
    head = "".join(_header(m) for m in METRIC_NAMES)
    best = {m: set(b.models) if (b := best_of(table_cells(report, kind, name, m), m)) else set()
            for m in METRIC_NAMES}
    rows = []
    for item in ordered_inputs(report, kind, name):
        g = group_cells(report, item.model_id, kind, name)
        cells = []
        attrs = []
        for m in METRIC_NAMES:
            c = None if g is None else g.cells[m]
            value = "" if c is None or c.mean is None else repr(c.mean)
            attrs.append(f'data-{m.replace("_", "-")}="{value}"')
            cells.append(_cell_html(m, c, item.model_id in best[m]))
        link = escape(viewer_link(item, kind, name))
        rows.append(f'<tr {" ".join(attrs)}><th scope="row"><a href="{link}">{escape(item.model_id)}</a></th>'
                    f'{"".join(cells)}</tr>')
    return (f'<div class="scroll"><table class="leaderboard"><thead><tr><th>model</th>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def _kind_switch(report: Report) -> str:
    """Radio buttons that show one metric kind's columns at a time (pure CSS, so it works without script)."""
    counts = {k: sum(1 for m in METRIC_NAMES if METRICS_BY_NAME[m].kind == k) for k in KINDS}
    radios = "".join(f'<input type="radio" name="metric-kind" class="kind-radio" id="show-{k}" value="{k}"'
                     f'{" checked" if k == "outcome" else ""}>' for k in (*KINDS, "all"))
    labels = "".join(f'<label for="show-{k}">{k} ({counts[k]})</label>' for k in KINDS)
    options = "".join(f'<option value="{m}"{" selected" if m == report.order_by else ""}>{escape(m)}</option>'
                      for m in METRIC_NAMES)
    return (f'{radios}<div class="board-controls"><span class="kinds" role="group" aria-label="metric columns">'
            f'metrics: {labels}<label for="show-all">all ({len(METRIC_NAMES)})</label></span>'
            f'<label class="order">order by <select id="order-by"><option value="">results as given</option>'
            f"{options}</select></label></div>")


def _leaderboard_section(report: Report) -> str:
    groups = "".join(f"<details><summary>{escape(kind)} {escape(name)}</summary>{_leaderboard(report, kind, name)}"
                     "</details>" for kind, name in groups_of(report))
    return ('<section id="leaderboard"><h2>Leaderboard</h2><p class="note">Each cell is the mean over the '
            "episodes and, below it, its 95 % bootstrap interval. \u2605 marks the best mean of a column by the "
            "metric's direction (\u2191 higher, \u2193 lower is better; descriptive metrics have none). A best "
            "mean is not a significant difference: compare the intervals, or the paired comparisons below. The "
            "buttons choose which metrics are shown.</p>"
            + _kind_switch(report)
            + '<div class="boards">' + _leaderboard(report, "overall", "overall")
            + f"<h3>By scenario and family</h3>{groups}</div></section>")


def _provenance(report: Report) -> str:
    first = report.inputs[0].collection
    rows = "".join(
        f'<tr><td><a href="{escape(i.viewer)}">{escape(i.model_id)}</a></td><td>{escape(i.collection.path.name)}</td>'
        f"<td><code>{i.collection.digest}</code></td><td>{len(i.collection.values)}</td></tr>" for i in report.inputs)
    stats = "".join(
        f"<tr><td>{s.artifact}</td><td>{escape(' - '.join(s.models))}</td><td>{escape(s.origin)}</td>"
        f"<td>{s.resamples}</td><td><code>{s.digest}</code></td></tr>"
        for s in (*report.aggregates.values(), *report.comparisons.values()))
    return (
        '<section id="provenance"><details><summary><h2>Built from</h2> suite, manifest, result and statistics '
        "digests</summary><ul>"
        f"<li>suite <code>{escape(report.suite.id)}</code> {escape(report.suite.version)}, sha256 "
        f"<code>{report.suite.hash}</code></li>"
        f"<li>evaluation manifest sha256 <code>{first.manifest.hash}</code> ({len(first.manifest.episodes)} "
        f"episodes)</li><li>baseline <b>{escape(report.baseline)}</b></li></ul>"
        '<div class="scroll"><table><thead><tr><th>model (viewer)</th><th>result file</th><th>result sha256</th>'
        f"<th>episodes</th></tr></thead><tbody>{rows}</tbody></table></div>"
        '<div class="scroll"><table><thead><tr><th>statistics</th><th>models</th><th>source</th><th>resamples</th>'
        f"<th>sha256</th></tr></thead><tbody>{stats}</tbody></table></div></details></section>")


def _comparisons(report: Report) -> str:
    parts = [f'<section id="comparisons"><h2>Paired comparisons against {escape(report.baseline)}</h2>'
             "<p>Deltas are model minus baseline on the same episodes, with 95 % bootstrap intervals. Green: the "
             "interval shows the model better by the metric's direction; red: worse; grey: the interval contains "
             "0, or the metric has no direction.</p>"]
    for item in report.inputs:
        summary = report.comparisons.get(item.model_id)
        if summary is None:
            continue
        rows = metric_forest(summary)
        title = f"{item.model_id} - {report.baseline}"
        parts.append(f'<div class="comparison" data-model="{escape(item.model_id)}"><h3>{escape(title)}</h3>')
        parts.append(forest_svg(rows, title=f"{title}: mean delta per metric", shared_axis=False))
        parts.append(wlt_svg(rows, title=f"{title}: paired episodes {WLT_WORDS}"))
        for metric in METRIC_NAMES:
            parts.append(f"<details><summary>{escape(metric)} by scenario and family</summary>")
            parts.append(forest_svg(group_forest(summary, metric), title=f"{title}: {metric}", shared_axis=True))
            parts.append("</details>")
        parts.append("</div>")
    return "".join(parts) + "</section>"


def _scenarios(report: Report) -> str:
    collections = [i.collection for i in report.inputs]
    order = [s.id for s in report.suite.scenarios]
    by_id = {s.id: s for s in report.suite.scenarios}
    egress = ['<section id="egress"><h2>Egress curves</h2><p>Share of all people of a scenario\'s episodes '
              "evacuated by the end of each step.</p>"]
    heat = ['<section id="heatmaps"><h2>Casualty heat maps</h2><p>Where casualties died: casualties per cell per '
            "episode, one colour scale per scenario; walls grey, exits green.</p>"]
    for sid in scenario_ids(collections, order):
        egress.append(egress_svg(egress_curves(collections, sid), title=sid))
        heat.append(heatmap_svg(heat_maps(collections, by_id[sid]), title=sid))
    return "".join(egress) + "</section>" + "".join(heat) + "</section>"


def _accounting(report: Report) -> str:
    rows = accounting_rows(report)
    if not rows:
        return ""
    head = "".join(f"<th>{escape(c)}</th>" for c in ACCOUNTING_COLUMNS)
    body = "".join("<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in rows)
    return (f'<section id="accounting"><h2>Execution accounting</h2><p>{escape(ACCOUNTING_NOTE)}</p>'
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></section>")


def report_html(report: Report) -> bytes:
    """The report page: summary, leaderboard, comparisons, curves and maps, then the provenance (folded)."""
    first = report.inputs[0].collection
    nav = "".join(f'<a href="#{a}">{t}</a>' for a, t in (
        ("summary", "Summary"), ("leaderboard", "Leaderboard"), ("comparisons", "Comparisons"),
        ("egress", "Egress curves"), ("heatmaps", "Heat maps"),
        *((("accounting", "Execution accounting"),) if report.accounting else ()), ("provenance", "Built from")))
    body = (
        f"<header><h1>EMBERBench report</h1><p>{len(report.inputs)} results on the same "
        f"{len(first.manifest.episodes)} episodes of suite <code>{escape(report.suite.id)}</code> "
        f"{escape(report.suite.version)}; baseline <b>{escape(report.baseline)}</b>. Every number comes from "
        "results verified by replaying every record. Metrics are never combined into one score: each metric "
        f"has its own 95 % interval.</p><nav>{nav}</nav></header>"
        + summary_html(report)
        + _leaderboard_section(report)
        + _comparisons(report) + _scenarios(report) + _accounting(report)
        + _provenance(report))
    page = asset_text("report.html").replace("@@STYLE@@", asset_text("report.css"))
    page = page.replace("@@SCRIPT@@", asset_text("report.js")).replace("@@BODY@@", body)
    return page.encode("utf-8")
