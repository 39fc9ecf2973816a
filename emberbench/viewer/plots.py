"""``emberbench plot``: the report's figures as PNG, SVG or PDF files, drawn with matplotlib.

matplotlib is the optional extra ``emberbench[plots]``: the viewer and the
report draw their own figures and need no plotting library, so a cluster
worker or a head node installs the core without it. The figure data comes
from :mod:`emberbench.viewer.figures`, exactly as in the report.

Each drawn element carries a ``gid`` (``forest-row-<label>``,
``egress-<model>``, ``heat-<model>``), which the SVG output keeps as an
element id, so a test can count rows.
"""

from __future__ import annotations

import enum
import io
from pathlib import Path
from typing import Any

from ..errors import PresentationError
from ..sim.suite import Suite
from .figures import ForestRow, egress_curves, group_forest, heat_maps, metric_forest
from .outputs import claim_output_file
from .report import DEFAULT_RESAMPLES, choose_baseline, gather_inputs, report_statistics
from .summary import read_given_statistics
from .svg import VERDICT_COLOR, VERDICT_WORDS
from .text import cell_text, fmt

FORMATS = ("png", "svg", "pdf")


class FigureKind(str, enum.Enum):
    """The figures ``plot`` draws."""

    forest = "forest"
    egress = "egress"
    heatmap = "heatmap"


def _figure_class() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg", force=True)
        matplotlib.rcParams["svg.hashsalt"] = "emberbench"  # stable element ids from run to run
        from matplotlib.figure import Figure
    except ImportError:
        raise PresentationError("plot needs matplotlib: pip install 'emberbench[plots]'") from None
    return Figure


def _verdict_handles() -> list[Any]:
    """Legend entries for the colours of a forest plot (one per verdict)."""
    from matplotlib.lines import Line2D

    return [Line2D([0], [0], color=VERDICT_COLOR[v], marker="o", linewidth=2, label=words)
            for v, words in VERDICT_WORDS.items()]


def _row_text(c: Any) -> str:
    return cell_text(c) if c.mean is not None else f"undefined (n {c.n})"


def _forest_row(ax: Any, row: ForestRow, y: float, span: float) -> None:
    """One row: the interval as a line, the mean as a dot (a grey cross at 0 when undefined), numbers at the right."""
    c = row.cell
    color = VERDICT_COLOR[row.verdict]
    gid = f"forest-row-{row.label}"
    if c.lower is not None and c.upper is not None:
        ax.plot([c.lower / span, c.upper / span], [y, y], color=color, linewidth=2, gid=f"{gid}-ci")
    if c.mean is not None:
        ax.plot([c.mean / span], [y], "o", color=color, gid=gid)
    else:
        ax.plot([0], [y], marker="x", color=VERDICT_COLOR["none"], gid=gid)
    ax.annotate(_row_text(c), xy=(1.02, y), xycoords=("axes fraction", "data"), va="center", fontsize=8,
                color=color)


def _draw_forest(fig: Any, panels: list[tuple[str, list[ForestRow]]], *, shared_axis: bool) -> None:
    """Forest plots, one panel per comparison, with tick values and a colour legend.

    With ``shared_axis`` (one metric over groups) a panel is one axis with
    one scale. Otherwise (one row per metric, metrics of different units)
    every row is its own small axis with its own symmetric scale and tick
    values, so each row can be read on its own.
    """
    figures = fig.subfigures(len(panels), 1, squeeze=False)[:, 0]
    for sub, (title, rows) in zip(figures, panels):
        sub.suptitle(title, fontsize=10, x=0.01, ha="left")
        if shared_axis:
            ax = sub.subplots()
            bounds = [abs(v) for r in rows for v in (r.cell.lower, r.cell.upper, r.cell.mean) if v is not None]
            shared = max(bounds) * 1.1 if bounds and max(bounds) > 0 else 1.0
            for i, row in enumerate(rows):
                _forest_row(ax, row, len(rows) - 1 - i, 1.0)
            ax.axvline(0, color="#999999", linestyle="--", linewidth=1)
            ax.set_yticks(range(len(rows)), [r.label for r in reversed(rows)], fontsize=8)
            ax.set_ylim(-0.7, len(rows) - 0.3)
            ax.set_xlim(-shared, shared)
            ax.tick_params(axis="x", labelsize=8)
            ax.set_xlabel("mean delta (model - baseline), 95 % interval", fontsize=8)
            continue
        axes = sub.subplots(len(rows), 1, squeeze=False)[:, 0]
        for ax, row in zip(axes, rows):
            c = row.cell
            own = [abs(v) for v in (c.lower, c.upper, c.mean) if v is not None]
            span = max(own) * 1.1 if own and max(own) > 0 else 1.0
            _forest_row(ax, row, 0, 1.0)
            ax.axvline(0, color="#999999", linestyle="--", linewidth=1)
            ax.set_xlim(-span, span)
            ax.set_xticks([-span, 0, span], [fmt(-span, 2), "0", fmt(span, 2)], fontsize=7)
            ax.set_yticks([0], [row.label], fontsize=8)
            ax.set_ylim(-0.6, 0.6)
            for side in ("top", "right", "left"):
                ax.spines[side].set_visible(False)
        axes[-1].set_xlabel("mean delta (model - baseline), 95 % interval; each metric on its own scale",
                            fontsize=8)
    fig.legend(handles=_verdict_handles(), loc="outside lower center", ncols=4, fontsize=8, frameon=False)


LINE_STYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2)))
"""Line style of each model's egress curve, in the order given (solid first)."""
MARKER_STYLES = ("o", "s", "^", "D", "v", "x")
"""Marker of each model's egress curve, in the order given."""


def _draw_egress(fig: Any, curves: list[Any], title: str) -> None:
    """Egress curves with a distinct line style and marker per model, markers shifted per model so that
    identical curves stay visible."""
    ax = fig.subplots()
    steps = max(len(c.shares) for c in curves) - 1
    gap = max(1, steps // 8)
    for k, curve in enumerate(curves):
        ax.plot(range(len(curve.shares)), curve.shares, linewidth=2, label=curve.model, gid=f"egress-{curve.model}",
                linestyle=LINE_STYLES[k % len(LINE_STYLES)], marker=MARKER_STYLES[k % len(MARKER_STYLES)],
                markevery=((k * gap) // len(curves), gap), markersize=5)
    ax.set_ylim(0, 1)
    ax.set_xlabel("step")
    ax.set_ylabel("share evacuated")
    ax.set_title(title, fontsize=10, loc="left")
    ax.legend(fontsize=8)


def _draw_heatmap(fig: Any, maps: list[Any], title: str) -> None:
    import numpy as np

    axes = fig.subplots(1, len(maps), squeeze=False)[0]
    peak = max((v for m in maps for v in m.per_episode), default=0.0) or 1.0
    for ax, hm in zip(axes, maps):
        sc = hm.scenario
        grid = np.array(hm.per_episode, dtype=float).reshape(sc.height, sc.width)
        walls = np.array([[ch == "#" for ch in row] for row in sc.map])
        shown = np.ma.masked_where(walls, grid)
        cmap = _reds()
        image = ax.imshow(shown, cmap=cmap, vmin=0, vmax=peak, interpolation="nearest")
        image.set_gid(f"heat-{hm.model}")
        for e in sc.exits:
            ax.plot([e.col], [e.row], "s", markerfacecolor="none", markeredgecolor="#1a7f37", markersize=5)
        ax.set_title(f"{hm.model}\n{hm.casualties} casualties, {hm.episodes} episodes", fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.colorbar(image, ax=list(axes), shrink=0.8, label="casualties per episode")
    fig.suptitle(title, fontsize=10)


def _reds() -> Any:
    from matplotlib import colormaps

    return colormaps["Reds"].with_extremes(bad="#57606a")


def _save(fig: Any, out: Path, fmt_name: str) -> bytes:
    buf = io.BytesIO()
    metadata: dict[str, Any] = {"svg": {"Date": None}, "pdf": {"CreationDate": None}, "png": {}}[fmt_name]
    fig.savefig(buf, format=fmt_name, bbox_inches="tight", dpi=110, metadata=metadata)
    return buf.getvalue()


def plot_figure(kind: FigureKind, results: list[Path], suite: Suite, out: Path, *, baseline: str | None = None,
                metric: str | None = None, scenario: str | None = None, stats: list[Path] | None = None,
                resamples: int = DEFAULT_RESAMPLES, force: bool = False) -> Path:
    """Draw one figure of the report for ``results`` and write it to ``out`` (PNG, SVG or PDF by suffix).

    * ``forest``: each result against the baseline, one row per metric (or,
      with ``metric``, one row per group for that metric);
    * ``egress``: the egress curves of ``scenario``;
    * ``heatmap``: the casualty heat maps of ``scenario``.

    Raises:
        PresentationError: a bad argument, an unknown format, matplotlib missing.
    """
    fmt_name = out.suffix.lower().lstrip(".")
    if fmt_name not in FORMATS:
        raise PresentationError(f"{out}: the file name must end in .png, .svg or .pdf")
    if kind is not FigureKind.forest and scenario is None:
        raise PresentationError(f"plot {kind.value} needs --scenario")
    if kind is FigureKind.forest and len(results) < 2:
        raise PresentationError("plot forest needs two or more results (each compared with the baseline)")
    target = claim_output_file(out, force=force)
    figure = _figure_class()
    given = read_given_statistics(list(stats or []))  # checked before the results are read
    inputs = gather_inputs(results, suite)
    if kind is FigureKind.forest:
        base = choose_baseline(inputs, baseline)
        _, comparisons = report_statistics(inputs, base, suite, stats=given, resamples=resamples)
        panels = []
        for item in inputs:
            if item is base:
                continue
            summary = comparisons[item.model_id]
            rows = group_forest(summary, metric) if metric else metric_forest(summary)
            what = metric or "mean delta per metric"
            panels.append((f"{item.model_id} - {base.model_id}: {what}", rows))
        rows_each = 0.3 if metric else 0.42
        fig = figure(figsize=(9, sum(rows_each * len(r) + 0.9 for _, r in panels) + 0.6), layout="constrained")
        _draw_forest(fig, panels, shared_axis=metric is not None)
    else:
        by_id = {s.id: s for s in suite.scenarios}
        if scenario not in by_id:
            raise PresentationError(f"--scenario {scenario!r} is not a scenario of suite {suite.id}")
        collections = [i.collection for i in inputs]
        if kind is FigureKind.egress:
            fig = figure(figsize=(7, 4), layout="constrained")
            _draw_egress(fig, egress_curves(collections, scenario), scenario)
        else:
            maps = heat_maps(collections, by_id[scenario])
            fig = figure(figsize=(3.2 * len(maps) + 1, 3.6), layout="constrained")
            _draw_heatmap(fig, maps, scenario)
    from ..io.atomic import atomic_write_bytes

    atomic_write_bytes(target, _save(fig, target, fmt_name))
    return target
