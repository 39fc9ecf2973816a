"""The report's figures as inline SVG text (no plotting library needed to build a report).

Every string that comes from data (model ids, scenario ids) is escaped.
Each figure marks its parts with classes (``forest-row``, ``egress-line``,
``heat-cell``...) so tests can count them.
"""

from __future__ import annotations

import math
from html import escape

from .figures import EgressCurve, ForestRow, HeatMap

VERDICT_COLOR = {"better": "#1a7f37", "worse": "#cf222e", "unclear": "#57606a", "none": "#8c959f"}
PALETTE = ("#0969da", "#cf222e", "#1a7f37", "#8250df", "#bc4c00", "#1b7c83", "#bf3989", "#6e7781")
FONT = 'font-family="system-ui, sans-serif" font-size="12"'


def fmt(value: float | None, digits: int = 4) -> str:
    """A number for a label: 4 significant digits, ``-`` when undefined."""
    if value is None:
        return "-"
    if value == 0:
        return "0"
    return f"{value:.{digits}g}"


def _open(width: float, height: float, label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="{escape(label)}" {FONT}>')


def forest_svg(rows: list[ForestRow], *, title: str, shared_axis: bool) -> str:
    """A forest plot: a point and an interval per row, and a zero line.

    With ``shared_axis`` all rows use one x scale (one metric across groups);
    otherwise each row has its own symmetric scale around zero (metrics of
    different units), and the numbers are printed beside it.
    """
    label_w, plot_w, text_w, row_h, top = 250, 320, 230, 22, 30
    height = top + row_h * len(rows) + 26
    width = label_w + plot_w + text_w
    out = [_open(width, height, title), f'<text x="4" y="18" font-weight="600">{escape(title)}</text>']
    bounds = [abs(v) for r in rows for v in (r.cell.lower, r.cell.upper, r.cell.mean) if v is not None]
    shared = max(bounds) * 1.1 if bounds and max(bounds) > 0 else 1.0
    x0 = label_w + plot_w / 2
    out.append(f'<line x1="{x0}" y1="{top - 4}" x2="{x0}" y2="{top + row_h * len(rows)}" stroke="#999" '
               'stroke-dasharray="3,3"/>')
    for i, row in enumerate(rows):
        y = top + row_h * i + row_h / 2
        c = row.cell
        own = [abs(v) for v in (c.lower, c.upper, c.mean) if v is not None]
        span = shared if shared_axis else (max(own) * 1.1 if own and max(own) > 0 else 1.0)
        scale = (plot_w / 2 - 6) / span
        color = VERDICT_COLOR[row.verdict]
        out.append(f'<g class="forest-row" data-metric="{escape(row.metric)}" data-label="{escape(row.label)}">')
        out.append(f'<title>{escape(row.label)}: mean {fmt(c.mean)} [{fmt(c.lower)}, {fmt(c.upper)}], '
                   f'n {c.n}, {row.verdict}</title>')
        if i % 2 == 0:
            out.append(f'<rect x="0" y="{y - row_h / 2:.1f}" width="{width}" height="{row_h}" fill="#f6f8fa"/>')
        out.append(f'<text x="4" y="{y + 4:.1f}">{escape(row.label)}</text>')
        if c.lower is not None and c.upper is not None:
            out.append(f'<line x1="{x0 + c.lower * scale:.1f}" y1="{y:.1f}" x2="{x0 + c.upper * scale:.1f}" '
                       f'y2="{y:.1f}" stroke="{color}" stroke-width="2"/>')
        if c.mean is not None:
            out.append(f'<circle cx="{x0 + c.mean * scale:.1f}" cy="{y:.1f}" r="4" fill="{color}"/>')
        text = f"{fmt(c.mean)} [{fmt(c.lower)}, {fmt(c.upper)}]" if c.mean is not None else "undefined"
        out.append(f'<text x="{label_w + plot_w + 8}" y="{y + 4:.1f}" fill="{color}">{escape(text)}</text></g>')
    axis_y = top + row_h * len(rows) + 16
    note = (f"shared scale, \u00b1{fmt(shared, 3)}" if shared_axis else "each row on its own scale around 0")
    out.append(f'<text x="{x0}" y="{axis_y}" text-anchor="middle" fill="#57606a">0 ({escape(note)})</text>')
    out.append("</svg>")
    return "".join(out)


def wlt_svg(rows: list[ForestRow], *, title: str) -> str:
    """Win/loss/tie bars: per metric with a direction, the share of paired episodes of each outcome."""
    rows = [r for r in rows if r.cell.wins is not None]
    label_w, bar_w, text_w, row_h, top = 250, 320, 230, 20, 30
    width, height = label_w + bar_w + text_w, top + row_h * len(rows) + 24
    out = [_open(width, height, title), f'<text x="4" y="18" font-weight="600">{escape(title)}</text>']
    for i, row in enumerate(rows):
        c = row.cell
        total = (c.wins or 0) + (c.losses or 0) + (c.ties or 0)
        y = top + row_h * i
        out.append(f'<g class="wlt-row" data-metric="{escape(row.metric)}">')
        out.append(f'<title>{escape(row.metric)}: {c.wins} better, {c.losses} worse, {c.ties} tied</title>')
        out.append(f'<text x="4" y="{y + 14}">{escape(row.metric)}</text>')
        x = float(label_w)
        for count, color in ((c.wins, "#1a7f37"), (c.ties, "#d0d7de"), (c.losses, "#cf222e")):
            w = bar_w * (count or 0) / total if total else 0
            out.append(f'<rect x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="{row_h - 6}" fill="{color}"/>')
            x += w
        out.append(f'<text x="{label_w + bar_w + 8}" y="{y + 14}">{c.wins} / {c.losses} / {c.ties}</text></g>')
    out.append(f'<text x="{label_w}" y="{height - 6}" fill="#57606a">green: model better, grey: tie, red: '
               'baseline better (wins / losses / ties)</text></svg>')
    return "".join(out)


def egress_svg(curves: list[EgressCurve], *, title: str) -> str:
    """Egress curves: share evacuated (0 to 1) against the step, one line per model."""
    left, right, top, bottom, plot_w, plot_h = 48, 170, 28, 34, 420, 200
    width, height = left + plot_w + right, top + plot_h + bottom
    steps = max(len(c.shares) for c in curves) - 1
    out = [_open(width, height, title), f'<text x="4" y="16" font-weight="600">{escape(title)}</text>']
    out.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#d0d7de"/>')
    for frac in (0, 0.25, 0.5, 0.75, 1):
        y = top + plot_h * (1 - frac)
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{frac:g}</text>')
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="#eaeef2"/>')
    for tick in _ticks(steps):
        x = left + plot_w * tick / max(1, steps)
        out.append(f'<text x="{x:.1f}" y="{top + plot_h + 16}" text-anchor="middle">{tick}</text>')
    out.append(f'<text x="{left + plot_w / 2}" y="{height - 2}" text-anchor="middle" fill="#57606a">step</text>')
    for k, curve in enumerate(curves):
        color = PALETTE[k % len(PALETTE)]
        pts = " ".join(f"{left + plot_w * t / max(1, steps):.1f},{top + plot_h * (1 - s):.1f}"
                       for t, s in enumerate(curve.shares))
        out.append(f'<polyline class="egress-line" data-model="{escape(curve.model)}" points="{pts}" fill="none" '
                   f'stroke="{color}" stroke-width="2"><title>{escape(curve.model)}: {fmt(curve.shares[-1])} '
                   f'evacuated at the step limit ({curve.episodes} episodes)</title></polyline>')
        ly = top + 14 + 16 * k
        out.append(f'<line x1="{left + plot_w + 10}" y1="{ly - 4}" x2="{left + plot_w + 26}" y2="{ly - 4}" '
                   f'stroke="{color}" stroke-width="2"/><text x="{left + plot_w + 30}" y="{ly}">'
                   f'{escape(_short(curve.model))}</text>')
    out.append("</svg>")
    return "".join(out)


def heatmap_svg(maps: list[HeatMap], *, title: str, max_width: int = 900) -> str:
    """Casualty heat maps side by side, one per model, on one colour scale (darker red: more casualties)."""
    sc = maps[0].scenario
    cell = max(3, min(12, int((max_width - 20) / (len(maps) * (sc.width + 2)))))
    panel_w, panel_h = sc.width * cell, sc.height * cell
    gap, top = 2 * cell + 8, 30
    width = max(320, len(maps) * (panel_w + gap))
    height = top + panel_h + 36
    peak = max((v for m in maps for v in m.per_episode), default=0.0) or 1.0
    out = [_open(width, height, title), f'<text x="4" y="16" font-weight="600">{escape(title)}</text>']
    for k, hm in enumerate(maps):
        x0 = k * (panel_w + gap)
        out.append(f'<g class="heat-panel" data-model="{escape(hm.model)}" transform="translate({x0},{top})">')
        out.append(f'<rect width="{panel_w}" height="{panel_h}" fill="#ffffff" stroke="#d0d7de"/>')
        out.append(f'<path d="{_wall_path(sc.map, cell)}" fill="#57606a"/>')
        for i, v in enumerate(hm.per_episode):
            if v > 0:
                r, c = divmod(i, sc.width)
                alpha = 0.15 + 0.85 * math.sqrt(v / peak)
                out.append(f'<rect class="heat-cell" x="{c * cell}" y="{r * cell}" width="{cell}" height="{cell}" '
                           f'fill="#b3261e" fill-opacity="{alpha:.3f}"><title>({r}, {c}): {fmt(v)} casualties '
                           'per episode</title></rect>')
        for e in sc.exits:
            out.append(f'<rect x="{e.col * cell}" y="{e.row * cell}" width="{cell}" height="{cell}" fill="none" '
                       f'stroke="#1a7f37" stroke-width="{max(1, cell // 4)}"/>')
        out.append(f'<text y="{panel_h + 14}">{escape(_short(hm.model))}</text>')
        out.append(f'<text y="{panel_h + 28}" fill="#57606a">{hm.casualties} casualties in {hm.episodes} '
                   'episodes</text></g>')
    out.append("</svg>")
    return "".join(out)


def _wall_path(rows: tuple[str, ...], cell: int) -> str:
    """One SVG path for every wall cell, each horizontal run of walls one rectangle."""
    parts = []
    for r, row in enumerate(rows):
        c = 0
        while c < len(row):
            if row[c] != "#":
                c += 1
                continue
            start = c
            while c < len(row) and row[c] == "#":
                c += 1
            parts.append(f"M{start * cell} {r * cell}h{(c - start) * cell}v{cell}h{-(c - start) * cell}z")
    return "".join(parts)


def _ticks(steps: int) -> list[int]:
    if steps <= 0:
        return [0]
    raw = steps / 5
    base = 10 ** math.floor(math.log10(raw)) if raw >= 1 else 1
    step = next(m * base for m in (1, 2, 5, 10) if m * base >= raw)
    return list(range(0, steps + 1, int(step)))


def _short(text: str, limit: int = 24) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"
