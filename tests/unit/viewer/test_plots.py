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
