"""The report: one verified pass per result, statistics identical to stats/compare, tables and provenance."""

from __future__ import annotations

import json
import re

import pytest

from emberbench.errors import PresentationError
from emberbench.metric_defs import METRIC_NAMES
from emberbench.pairing import load_pair
from emberbench.results import load_result
from emberbench.statistics import aggregate_statistics, paired_statistics
from emberbench.viewer.report import build_report, model_slug


@pytest.fixture(scope="module")
def report(results, suite, tmp_path_factory):  # noqa: ANN001
    """A report of stay (baseline), greedy and fire-aware with 200 resamples."""
    out = tmp_path_factory.mktemp("report") / "r"
    paths = [results["stay"], results["greedy"], results["fire-aware"]]
    return build_report(paths, suite, out, resamples=200)


def test_report_files(report) -> None:  # noqa: ANN001
    """The folder holds the page, the Markdown, a viewer per result and the computed statistics."""
    files = set(report.files)
    assert {"index.html", "report.md"} <= files
    assert {f"viewer/{model_slug(m)}.html" for m in ("stay", "greedy", "fire-aware")} <= files
    assert sum(f.endswith(".stats.json") for f in files) == 3
    assert sum(f.endswith(".compare.json") for f in files) == 2
    listed = json.loads((report.folder / "report-files.json").read_text())["files"]
    assert listed == sorted(files)


def test_statistics_are_byte_identical_to_stats_and_compare(report, results, suite) -> None:  # noqa: ANN001
    """The artifacts the report computed are the bytes ``stats`` and ``compare`` write."""
    agg = aggregate_statistics(load_result(results["greedy"], suite), suite, 200)
    assert (report.folder / f"stats/{model_slug('greedy')}.stats.json").read_bytes() == agg.to_json_bytes()
    a, b = load_pair(results["greedy"], results["stay"], suite)
    paired = paired_statistics(a, b, suite, 200)
    name = f"stats/{model_slug('greedy')}-vs-{model_slug('stay')}.compare.json"
    assert (report.folder / name).read_bytes() == paired.to_json_bytes()


def test_markdown_sets_metrics_side_by_side(report) -> None:  # noqa: ANN001
    """The leaderboard has the model and the twelve metrics as columns, no combined score, a link per row."""
    md = (report.folder / "report.md").read_text()
    board = md.split("## Leaderboard")[1].split("\n\n")[1].splitlines()
    header = [c.strip() for c in board[0].strip("|").split("|")]
    assert header[0] == "model" and [h.split()[0] for h in header[1:]] == list(METRIC_NAMES)
    assert len(board) == 2 + 3
    for row in board[2:]:
        assert re.match(r"\| \[[a-z-]+\]\(viewer/[a-z-]+-[0-9a-f]{8}\.html\)", row)
    assert "score" not in md.lower()


def test_provenance_names_every_digest(report, results, suite) -> None:  # noqa: ANN001
    """Suite hash, manifest hash, every result digest and statistics digest appear in both outputs."""
    md = (report.folder / "report.md").read_text()
    html = (report.folder / "index.html").read_text()
    digests = [suite.hash, report.inputs[0].collection.manifest.hash]
    digests += [i.collection.digest for i in report.inputs]
    digests += [s.digest for s in (*report.aggregates.values(), *report.comparisons.values())]
    for d in digests:
        assert d in md and d in html


def test_html_figures(report) -> None:  # noqa: ANN001
    """One forest row per metric per comparison, one egress line per model per scenario."""
    html = (report.folder / "index.html").read_text()
    overall = html.split("by scenario and family</summary>")[0]
    assert overall.count('class="forest-row"') == 12
    assert html.count('class="egress-line"') == 3 * 3
    assert html.count('class="heat-panel"') == 3 * 3
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_given_statistics_are_used_and_named(report, results, suite, tmp_path) -> None:  # noqa: ANN001
    """A matching statistics artifact is read instead of computed, and the report names its file."""
    given = tmp_path / "greedy.stats.json"
    given.write_bytes((report.folder / f"stats/{model_slug('greedy')}.stats.json").read_bytes())
    built = build_report([results["stay"], results["greedy"]], suite, tmp_path / "r2", stats=[given], resamples=200)
    assert built.aggregates["greedy"].origin == str(given)
    assert f"stats/{model_slug('greedy')}.stats.json" not in built.files


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"baseline": "nobody"}, "is not the model id"),
    ({"order_by": "score"}, "unknown metric"),
])
def test_bad_arguments(results, suite, tmp_path, kwargs, message) -> None:  # noqa: ANN001
    """An unknown baseline or ordering metric is one clear error."""
    with pytest.raises(PresentationError, match=message):
        build_report([results["stay"], results["greedy"]], suite, tmp_path / "r", resamples=200, **kwargs)


def test_repeated_model_and_foreign_statistics_are_refused(results, suite, tmp_path, report) -> None:  # noqa: ANN001
    """The same model twice, or a statistics artifact of another result, is refused."""
    with pytest.raises(PresentationError, match="appears twice"):
        build_report([results["stay"], results["stay"]], suite, tmp_path / "a", resamples=200)
    other = report.folder / f"stats/{model_slug('fire-aware')}.stats.json"
    with pytest.raises(PresentationError, match="matches none"):
        build_report([results["stay"], results["greedy"]], suite, tmp_path / "b", stats=[other], resamples=200)


def test_order_by_puts_the_best_first(results, suite, tmp_path) -> None:  # noqa: ANN001
    """--order-by casualty_rate lists the model with the fewest casualties first."""
    built = build_report([results["stay"], results["greedy"]], suite, tmp_path / "r", resamples=200,
                         order_by="casualty_rate")
    md = (built.folder / "report.md").read_text()
    board = md.split("## Leaderboard")[1]
    assert board.index("[greedy]") < board.index("[stay]")
