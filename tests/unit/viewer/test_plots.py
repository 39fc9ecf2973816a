"""plot: the report's figures through matplotlib, checked by opening the files."""

from __future__ import annotations

import pytest

from emberbench.errors import PresentationError
from emberbench.viewer.plots import FigureKind, plot_figure

PIL = pytest.importorskip("PIL.Image", reason="the plots extra (matplotlib, pillow) is not installed")


def test_forest_svg_has_one_row_per_metric(results, suite, tmp_path) -> None:  # noqa: ANN001
    """Two comparisons, twelve metric rows each."""
    out = plot_figure(FigureKind.forest, [results["stay"], results["greedy"], results["fire-aware"]], suite,
                      tmp_path / "f.svg", resamples=200)
    text = out.read_text()
    assert text.startswith("<?xml")
    for metric in ("evacuated_rate", "exit_balance"):
        assert text.count(f'id="forest-row-{metric}"') == 2


def test_group_forest_png_opens(results, suite, tmp_path) -> None:  # noqa: ANN001
    """A per-group forest for one metric is a real PNG of a plausible size."""
    out = plot_figure(FigureKind.forest, [results["stay"], results["greedy"]], suite, tmp_path / "g.png",
                      metric="casualty_rate", resamples=200)
    with PIL.open(out) as image:
        assert image.format == "PNG" and image.size[0] > 500 and image.size[1] > 300


def test_egress_and_heatmap(results, suite, tmp_path) -> None:  # noqa: ANN001
    """Egress: one line per model; heat map: a PDF with a page."""
    paths = [results["stay"], results["greedy"]]
    svg = plot_figure(FigureKind.egress, paths, suite, tmp_path / "e.svg", scenario="v1-pub-01-single-exit-sparse")
    text = svg.read_text()
    assert 'id="egress-stay"' in text and 'id="egress-greedy"' in text
    pdf = plot_figure(FigureKind.heatmap, paths, suite, tmp_path / "h.pdf", scenario="v1-pub-12-smouldering-two-exits")
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF") and b"/Type /Page" in data


@pytest.mark.parametrize(("kind", "name", "kwargs", "message"), [
    (FigureKind.egress, "x.jpg", {"scenario": "v1-pub-01-single-exit-sparse"}, "must end in"),
    (FigureKind.heatmap, "x.png", {}, "needs --scenario"),
    (FigureKind.egress, "x.png", {"scenario": "nope"}, "is not a scenario"),
])
def test_plot_refusals(results, suite, tmp_path, kind, name, kwargs, message) -> None:  # noqa: ANN001
    """Bad suffixes, a missing or unknown scenario are one clear error."""
    with pytest.raises(PresentationError, match=message):
        plot_figure(kind, [results["stay"]], suite, tmp_path / name, **kwargs)


def test_identical_egress_curves_stay_distinguishable(results, suite, tmp_path) -> None:  # noqa: ANN001
    """Issue 27 (defect 9): two models with the same curve each get their own line style and marker, with the
    markers at shifted steps, in the matplotlib figure and in the report's SVG."""
    from matplotlib.figure import Figure

    from emberbench.viewer.figures import EgressCurve
    from emberbench.viewer.plots import _draw_egress
    from emberbench.viewer.svg import egress_svg

    shares = tuple(min(1.0, t / 20) for t in range(41))
    curves = [EgressCurve(model=m, shares=shares, episodes=2) for m in ("a", "b", "c")]
    fig = Figure()
    _draw_egress(fig, curves, "same")
    lines = fig.axes[0].get_lines()
    styles = {(line.get_linestyle(), line.get_marker()) for line in lines}
    assert len(styles) == 3 and all(marker not in ("None", "", None) for _, marker in styles)
    assert len({str(line.get_markevery()) for line in lines}) == 3
    svg = egress_svg(curves, title="same")
    import re

    dashes = re.findall(r'<polyline class="egress-line"[^>]*?(?: stroke-dasharray="([^"]+)")?>', svg)
    assert len(dashes) == 3 and len(set(dashes)) == 3
    groups = svg.split('<g class="egress-model"')[1:]
    firsts = [re.search(r'class="egress-marker"[^>]*?(?:cx|x|points)="([0-9.]+)', g).group(1) for g in groups]
    assert len(set(firsts)) == 3


def test_forest_png_has_a_legend_and_tick_values(results, suite, tmp_path) -> None:  # noqa: ANN001
    """Issue 27 (defect 9): the per-metric forest has a colour legend and numbers on its axes (each metric on
    its own scale, each with its own ticks); a row without an interval says n < 5 instead of [-, -]."""
    from matplotlib.figure import Figure

    from emberbench.viewer.figures import ForestRow
    from emberbench.viewer.plots import _draw_forest
    from emberbench.viewer.summary import Cell

    rows = [ForestRow("evacuated_rate", "evacuated_rate", Cell(0.25, 0.1, 0.4, 30, 0, 9, 1, 20), "better"),
            ForestRow("casualty_rate", "casualty_rate", Cell(0.02, None, None, 3, 0, 1, 1, 1), "unclear")]
    fig = Figure(layout="constrained")
    _draw_forest(fig, [("m - base: mean delta per metric", rows)], shared_axis=False)
    legends = fig.legends + [ax.get_legend() for ax in fig.get_axes() if ax.get_legend()]
    labels = [t.get_text() for leg in legends for t in leg.get_texts()]
    assert {"model better", "model worse", "interval contains 0", "no direction"} <= set(labels)
    ticks = [t.get_text() for ax in fig.get_axes() for t in ax.get_xticklabels()]
    numbers = [t for t in ticks if any(ch.isdigit() for ch in t) and t.replace("\u2212", "-") not in ("0",)]
    assert len(numbers) >= 4, ticks
    texts = [t.get_text() for ax in fig.get_axes() for t in ax.texts]
    assert "0.02 (no interval: n 3 < 5)" in texts and not any("[-, -]" in t for t in texts)


def test_forest_png_of_results_opens(results, suite, tmp_path) -> None:  # noqa: ANN001
    """The per-metric forest of real results is a PNG of a plausible size."""
    out = plot_figure(FigureKind.forest, [results["stay"], results["greedy"], results["fire-aware"]], suite,
                      tmp_path / "f.png", resamples=200)
    with PIL.open(out) as image:
        assert image.format == "PNG" and image.size[0] > 500 and image.size[1] > 600
