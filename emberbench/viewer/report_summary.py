"""The report's opening summary in words, as HTML and as Markdown lines (the same sentences in both).

What it says comes from :func:`.findings.findings`: the best mean on each
metric with a direction, the paired differences whose interval excludes
zero, how many comparisons are unclear, and why identical values can show
different intervals.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from ..records.metric_defs import METRIC_NAMES, METRICS_BY_NAME
from .findings import SAME_VALUES_WHY, Difference, Findings, findings
from .text import cell_text, interval_text, signed

if TYPE_CHECKING:
    from .report_model import Report

DIRECTION_WORDS = {"higher": "higher is better", "lower": "lower is better", "none": "no direction"}
ARROWS = {"higher": "\u2191", "lower": "\u2193", "none": ""}


def _metric(name: str) -> str:
    arrow = ARROWS[METRICS_BY_NAME[name].direction]
    return f"{name} {arrow}".strip()


def _delta(d: Difference) -> str:
    """``+0.4167 [+0.25, +0.5833]``: the mean delta and its interval, signed."""
    return f"{signed(d.cell.mean)} {interval_text(d.cell, signed)}"


def _undirected() -> list[str]:
    return [m for m in METRIC_NAMES if METRICS_BY_NAME[m].direction == "none"]


def _by_model(f: Findings) -> list[tuple[str, list[Difference], list[Difference]]]:
    """Per compared model (report order): its clear improvements and its clear regressions."""
    out: dict[str, tuple[list[Difference], list[Difference]]] = {}
    for d in f.differences:
        better, worse = out.setdefault(d.model, ([], []))
        (better if d.verdict == "better" else worse).append(d)
    return [(m, b, w) for m, (b, w) in out.items()]


def _intro(report: Report, f: Findings) -> str:
    models = len(report.inputs)
    if models == 1:
        return "One result: nothing to compare; its means and intervals are in the leaderboard."
    return (f"Against the baseline {report.baseline}, {len(f.differences)} of {f.compared} paired comparisons "
            f"(model, metric with a direction) have a 95 % interval that excludes 0; the other {f.unclear} do not "
            "show a difference on these episodes.")


def summary_html(report: Report) -> str:
    """The ``<section id="summary">`` of the report page."""
    f = findings(report)
    parts = [f'<section id="summary"><h2>Summary</h2><p class="lede">{escape(_intro(report, f))}</p>']
    if f.best:
        rows = "".join(
            f'<tr data-metric="{b.metric}"><th scope="row">{escape(_metric(b.metric))}</th>'
            f'<td class="who">{escape(", ".join(b.models))}</td><td class="num">{escape(cell_text(b.cell))}</td></tr>'
            for b in f.best)
        parts.append("<h3>Best mean on each metric</h3>"
                     '<div class="scroll"><table class="best-means"><thead><tr><th>metric</th><th>best mean</th>'
                     f"<th>mean [95 % interval]</th></tr></thead><tbody>{rows}</tbody></table></div>"
                     f"<p class=\"note\">{escape(', '.join(_undirected()))} describe how exits were used and have "
                     "no direction: no model is best on them. A best mean alone does not make a model better; "
                     "the paired comparisons below say which differences are clear.</p>")
    pairs = _by_model(f)
    if len(report.inputs) > 1:
        parts.append(f"<h3>Clear paired differences against {escape(report.baseline)}</h3>")
        if pairs:
            items = []
            for model, better, worse in pairs:
                said = []
                for word, ds in (("better", better), ("worse", worse)):
                    if ds:
                        listed = "".join(f"<li>{escape(_metric(d.metric))}: {escape(_delta(d))}</li>" for d in ds)
                        said.append(f'<span class="{word}">{word}</span> than {escape(report.baseline)} on '
                                    f"{len(ds)} metric{'s' if len(ds) > 1 else ''}:<ul>{listed}</ul>")
                items.append(f'<li data-model="{escape(model)}"><b>{escape(model)}</b> is {"and ".join(said)}</li>')
            parts.append(f'<ul class="differences">{"".join(items)}</ul>')
            parts.append('<p class="note">Each difference is the mean of model minus baseline over the same '
                         "episodes, with its 95 % bootstrap interval; \u201cbetter\u201d means the interval "
                         "excludes 0 on the side the metric's direction prefers.</p>")
        else:
            parts.append("<p>No paired difference has a 95 % interval that excludes 0.</p>")
    parts.extend(f'<p class="caveat">{escape(line)}</p>' for line in caveats(f))
    parts.append("</section>")
    return "".join(parts)


def caveats(f: Findings) -> list[str]:
    """Sentences the summary must not leave out: identical values with different intervals, and what an
    interval describes."""
    out = []
    grouped: dict[tuple[str, ...], list[str]] = {}
    for s in f.same_values:
        grouped.setdefault(s.models, []).append(s.metric)
    for models, metrics in grouped.items():
        out.append(f"{', '.join(models)} have identical per-episode values of {', '.join(metrics)}, yet their "
                   f"intervals differ. {SAME_VALUES_WHY}")
    out.append("Intervals describe this sample of scenarios and seeds; they do not say how the models compare on "
               "other scenarios or seeds.")
    return out


def summary_markdown(report: Report, md) -> list[str]:  # noqa: ANN001
    """The summary as Markdown lines (``md`` escapes text for a table cell)."""
    f = findings(report)
    out = ["## Summary", "", _intro(report, f), ""]
    if f.best:
        out += ["### Best mean on each metric", "", "| metric | best mean | mean [95 % interval] |", "|---|---|---|"]
        out += [f"| {_metric(b.metric)} | {md(', '.join(b.models))} | {md(cell_text(b.cell))} |" for b in f.best]
        out += ["", f"{', '.join(_undirected())} have no direction: no model is best on them.", ""]
    if len(report.inputs) > 1:
        out += [f"### Clear paired differences against {md(report.baseline)}", ""]
        pairs = _by_model(f)
        for model, better, worse in pairs:
            for word, ds in (("better", better), ("worse", worse)):
                if ds:
                    out.append(f"- **{md(model)}** is {word} than {md(report.baseline)} on:")
                    out += [f"  - {_metric(d.metric)}: {_delta(d)}" for d in ds]
        if not pairs:
            out.append("No paired difference has a 95 % interval that excludes 0.")
        out.append("")
    for line in caveats(f):
        out += [f"> {line}", ""]
    return out


__all__ = ["DIRECTION_WORDS", "caveats", "summary_html", "summary_markdown"]
