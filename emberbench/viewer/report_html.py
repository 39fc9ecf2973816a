"""The report as one static HTML page: tables, inline SVG figures, links to the viewer pages."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from ..records.metric_defs import METRIC_NAMES, METRICS_BY_NAME
from .figures import egress_curves, group_forest, heat_maps, metric_forest, scenario_ids
from .page import asset_text
from .svg import egress_svg, forest_svg, heatmap_svg, wlt_svg
from .tables import cell_text, group_cells, groups_of, metric_header, ordered_inputs, viewer_link
from .report_model import ACCOUNTING_COLUMNS, ACCOUNTING_NOTE, accounting_rows

if TYPE_CHECKING:
    from .report_model import Report


def _leaderboard(report: Report, kind: str, name: str) -> str:
    head = "".join(f'<th data-metric="{m}" title="{escape(METRICS_BY_NAME[m].definition)}">'
                   f"{escape(metric_header(m))}</th>" for m in METRIC_NAMES)
    rows = []
    for item in ordered_inputs(report, kind, name):
        g = group_cells(report, item.model_id, kind, name)
        cells = []
        attrs = []
        for m in METRIC_NAMES:
            c = None if g is None else g.cells[m]
            value = "" if c is None or c.mean is None else repr(c.mean)
            attrs.append(f'data-{m.replace("_", "-")}="{value}"')
            n = "" if c is None else f' title="n {c.n}, undefined {c.undefined}"'
            cells.append(f"<td{n}>{escape(cell_text(c))}</td>")
        link = escape(viewer_link(item, kind, name))
        rows.append(f'<tr {" ".join(attrs)}><th><a href="{link}">{escape(item.model_id)}</a></th>{"".join(cells)}</tr>')
    return (f'<table class="leaderboard"><thead><tr><th>model</th>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


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
        '<section id="provenance"><h2>Built from</h2><ul>'
        f"<li>suite <code>{escape(report.suite.id)}</code> {escape(report.suite.version)}, sha256 "
        f"<code>{report.suite.hash}</code></li>"
        f"<li>evaluation manifest sha256 <code>{first.manifest.hash}</code> ({len(first.manifest.episodes)} "
        f"episodes)</li><li>baseline <b>{escape(report.baseline)}</b></li></ul>"
        "<table><thead><tr><th>model (viewer)</th><th>result file</th><th>result sha256</th><th>episodes</th></tr>"
        f"</thead><tbody>{rows}</tbody></table>"
        "<table><thead><tr><th>statistics</th><th>models</th><th>source</th><th>resamples</th><th>sha256</th></tr>"
        f"</thead><tbody>{stats}</tbody></table></section>")


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
        parts.append(wlt_svg(rows, title=f"{title}: paired episodes better / tied / worse"))
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
    """The report page."""
    options = "".join(f'<option value="{m}"{" selected" if m == report.order_by else ""}>{escape(m)}</option>'
                      for m in METRIC_NAMES)
    groups = "".join(f"<details><summary>{escape(kind)} {escape(name)}</summary>{_leaderboard(report, kind, name)}"
                     "</details>" for kind, name in groups_of(report))
    body = (
        "<header><h1>EMBERBench report</h1><p>Every number comes from results verified by replaying every "
        "record. Metrics are never combined into one score: each column is one metric with its own 95 % "
        "interval, written mean [lower, upper]; \u2191 higher is better, \u2193 lower is better.</p></header>"
        + _provenance(report)
        + '<section id="leaderboard"><h2>Leaderboard</h2><label>order by <select id="order-by">'
        f'<option value="">results as given</option>{options}</select></label>'
        + _leaderboard(report, "overall", "overall")
        + f"<h3>By scenario and family</h3>{groups}</section>"
        + _comparisons(report) + _scenarios(report) + _accounting(report))
    page = asset_text("report.html").replace("@@STYLE@@", asset_text("report.css"))
    page = page.replace("@@SCRIPT@@", asset_text("report.js")).replace("@@BODY@@", body)
    return page.encode("utf-8")
