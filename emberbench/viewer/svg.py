"""The report's figures as inline SVG text (no plotting library needed to build a report).

Every string that comes from data (model ids, scenario ids) is escaped.
Each figure marks its parts with classes (``forest-row``, ``egress-line``,
``heat-cell``...) so tests can count them.
"""

from __future__ import annotations

import math
from html import escape

from .figures import EgressCurve, ForestRow, HeatMap
from .summary import Cell
from .text import cell_text, fmt

VERDICT_COLOR = {"better": "#1a7f37", "worse": "#cf222e", "unclear": "#57606a", "none": "#8c959f"}
PALETTE = ("#0969da", "#cf222e", "#1a7f37", "#8250df", "#bc4c00", "#1b7c83", "#bf3989", "#6e7781")
FONT = 'font-family="system-ui, sans-serif" font-size="12"'


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
    height = top + row_h * len(rows) + 46
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
        out.append(f"<title>{escape(row.label)}: mean {escape(cell_text(c))}, n {c.n}, {row.verdict}</title>")
        if i % 2 == 0:
            out.append(f'<rect x="0" y="{y - row_h / 2:.1f}" width="{width}" height="{row_h}" fill="#f6f8fa"/>')
        out.append(f'<text x="4" y="{y + 4:.1f}">{escape(row.label)}</text>')
        if c.lower is not None and c.upper is not None:
            out.append(f'<line x1="{x0 + c.lower * scale:.1f}" y1="{y:.1f}" x2="{x0 + c.upper * scale:.1f}" '
                       f'y2="{y:.1f}" stroke="{color}" stroke-width="2"/>')
        if c.mean is not None:
            out.append(f'<circle cx="{x0 + c.mean * scale:.1f}" cy="{y:.1f}" r="4" fill="{color}"/>')
        text = cell_text(c) if c.mean is not None else f"undefined (n {c.n})"
        out.append(f'<text x="{label_w + plot_w + 8}" y="{y + 4:.1f}" fill="{color}">{escape(text)}</text></g>')
    axis_y = top + row_h * len(rows) + 16
    note = (f"shared scale, \u00b1{fmt(shared, 3)}" if shared_axis else "each row on its own scale around 0")
    out.append(f'<text x="{x0}" y="{axis_y}" text-anchor="middle" fill="#57606a">0 ({escape(note)})</text>')
    out.append(_verdict_legend(4, axis_y + 18))
    out.append("</svg>")
    return "".join(out)


VERDICT_WORDS = {"better": "model better", "worse": "model worse", "unclear": "interval contains 0",
                 "none": "no direction"}


def _verdict_legend(x: float, y: float) -> str:
    """The colour key of a forest plot: one swatch and its meaning per verdict."""
    out = ['<g class="forest-legend">']
    for verdict, words in VERDICT_WORDS.items():
        out.append(f'<rect x="{x:.0f}" y="{y - 9:.0f}" width="10" height="10" fill="{VERDICT_COLOR[verdict]}"/>'
                   f'<text x="{x + 14:.0f}" y="{y:.0f}">{words}</text>')
        x += 24 + 7 * len(words)
    out.append("</g>")
    return "".join(out)


WLT_ORDER = (("better", "wins", "#1a7f37"), ("tied", "ties", "#d0d7de"), ("worse", "losses", "#cf222e"))
"""The outcomes of paired episodes in the order every label, bar and number of the report uses."""
WLT_WORDS = " / ".join(word for word, _, _ in WLT_ORDER)


DOT = " \u00b7 "


def wlt_text(cell: Cell, sep: str = ", ") -> str:
    """``N better, N tied, N worse``: paired episode counts, in :data:`WLT_ORDER` and each with its word."""
    return sep.join(f"{getattr(cell, attr)} {word}" for word, attr, _ in WLT_ORDER)


def wlt_svg(rows: list[ForestRow], *, title: str) -> str:
    """Better/tied/worse bars: per metric with a direction, the share of paired episodes of each outcome.

    The bar segments, the numbers beside them and the title all follow
    :data:`WLT_ORDER` (better, tied, worse), and every number carries its word.
    """
    rows = [r for r in rows if r.cell.wins is not None]
    label_w, bar_w, text_w, row_h, top = 250, 320, 230, 20, 30
    width, height = label_w + bar_w + text_w, top + row_h * len(rows) + 24
    out = [_open(width, height, title), f'<text x="4" y="18" font-weight="600">{escape(title)}</text>']
    for i, row in enumerate(rows):
        c = row.cell
        total = (c.wins or 0) + (c.losses or 0) + (c.ties or 0)
        y = top + row_h * i
        out.append(f'<g class="wlt-row" data-metric="{escape(row.metric)}">')
        out.append(f"<title>{escape(row.metric)}: {wlt_text(c)}</title>")
        out.append(f'<text x="4" y="{y + 14}">{escape(row.metric)}</text>')
        x = float(label_w)
        for word, attr, color in WLT_ORDER:
            count = getattr(c, attr) or 0
            w = bar_w * count / total if total else 0
            out.append(f'<rect class="wlt-{word}" data-count="{count}" x="{x:.1f}" y="{y + 3}" width="{w:.1f}" '
                       f'height="{row_h - 6}" fill="{color}"/>')
            x += w
        out.append(f'<text class="wlt-numbers" x="{label_w + bar_w + 8}" y="{y + 14}">{wlt_text(c, DOT)}'
                   "</text></g>")
    out.append(f'<text x="{label_w}" y="{height - 6}" fill="#57606a">green: model better, grey: tied, red: '
               "model worse than the baseline</text></svg>")
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
    gap = max(1, steps // 8)
    for k, curve in enumerate(curves):
        color, dash, marker = PALETTE[k % len(PALETTE)], DASHES[k % len(DASHES)], MARKERS[k % len(MARKERS)]
        dashing = f' stroke-dasharray="{dash}"' if dash else ""
        xy = [(left + plot_w * t / max(1, steps), top + plot_h * (1 - s)) for t, s in enumerate(curve.shares)]
        pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
        out.append(f'<g class="egress-model" data-model="{escape(curve.model)}">')
        out.append(f'<polyline class="egress-line" data-model="{escape(curve.model)}" points="{pts}" fill="none" '
                   f'stroke="{color}" stroke-width="2"{dashing}><title>{escape(curve.model)}: '
                   f"{fmt(curve.shares[-1])} evacuated at the step limit ({curve.episodes} episodes)"
                   "</title></polyline>")
        # Markers at a spacing shifted per model, so identical curves still show every model.
        start = (k * gap) // max(1, len(curves))
        out.extend(_marker(marker, x, y, color, "egress-marker") for x, y in xy[start::gap])
        ly = top + 14 + 16 * k
        out.append(f'<line x1="{left + plot_w + 8}" y1="{ly - 4}" x2="{left + plot_w + 32}" y2="{ly - 4}" '
                   f'stroke="{color}" stroke-width="2"{dashing}/>{_marker(marker, left + plot_w + 20, ly - 4, color)}'
                   f'<text x="{left + plot_w + 36}" y="{ly}">{escape(_short(curve.model))}</text></g>')
    out.append("</svg>")
    return "".join(out)


DASHES = ("", "7,3", "2,3", "9,3,2,3", "4,4", "12,4,2,4,2,4")
"""Dash pattern of each model's egress line, in the order given (solid first)."""
MARKERS = ("circle", "square", "triangle", "diamond", "down", "cross")
"""Marker of each model's egress line, in the order given."""


def _marker(kind: str, x: float, y: float, color: str, cls: str = "") -> str:
    """One marker shape centred on (x, y)."""
    r = 3.5
    c = f' class="{cls}"' if cls else ""
    if kind == "circle":
        return f'<circle{c} cx="{x:.1f}" cy="{y:.1f}" r="{r}" fill="{color}"/>'
    if kind == "square":
        return f'<rect{c} x="{x - r:.1f}" y="{y - r:.1f}" width="{2 * r}" height="{2 * r}" fill="{color}"/>'
    points = {
        "triangle": ((0, -r - 1), (r + 0.5, r), (-r - 0.5, r)),
        "down": ((0, r + 1), (r + 0.5, -r), (-r - 0.5, -r)),
        "diamond": ((0, -r - 1), (r + 1, 0), (0, r + 1), (-r - 1, 0)),
    }.get(kind)
    if points is not None:
        pts = " ".join(f"{x + dx:.1f},{y + dy:.1f}" for dx, dy in points)
        return f'<polygon{c} points="{pts}" fill="{color}"/>'
    return (f'<path{c} d="M{x - r:.1f} {y - r:.1f}L{x + r:.1f} {y + r:.1f}M{x + r:.1f} {y - r:.1f}L{x - r:.1f} '
            f'{y + r:.1f}" stroke="{color}" stroke-width="2"/>')


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
