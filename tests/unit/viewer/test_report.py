"""The report: one verified pass per result, statistics identical to stats/compare, tables and provenance."""

from __future__ import annotations

import json
import re

import pytest

from emberbench.errors import PresentationError, StatisticsInputError
from emberbench.records.metric_defs import METRIC_NAMES
from emberbench.results.pairing import load_pair
from emberbench.results.artifact import load_result
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
    board = md.split("## Leaderboard")[1].split("\n\n")[2].splitlines()
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


def _tree(folder) -> dict[str, tuple[int, int, int, int]]:  # noqa: ANN001
    """Every path under ``folder``: mode, inode and, for files, size and modification time."""
    import os
    import stat

    seen = {}
    for root, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            info = os.lstat(os.path.join(root, name))
            # a folder's own size and time change when a staging folder inside it comes and goes
            size, mtime = (0, 0) if stat.S_ISDIR(info.st_mode) else (info.st_size, info.st_mtime_ns)
            seen[os.path.relpath(os.path.join(root, name), folder)] = (info.st_mode, info.st_ino, size, mtime)
    return seen


@pytest.fixture(scope="module")
def genuine(report, tmp_path_factory):  # noqa: ANN001
    """greedy's aggregate artifact and its paired artifact against stay, as the report wrote them."""
    folder = tmp_path_factory.mktemp("genuine")
    agg = folder / "greedy.stats.json"
    agg.write_bytes((report.folder / f"stats/{model_slug('greedy')}.stats.json").read_bytes())
    paired = folder / "greedy-vs-stay.compare.json"
    paired.write_bytes((report.folder / f"stats/{model_slug('greedy')}-vs-{model_slug('stay')}.compare.json")
                       .read_bytes())
    return agg, paired


def _forge(source, target, mutate):  # noqa: ANN001, ANN202
    form = json.loads(source.read_bytes())
    mutate(form)
    from emberbench.io.canonical import canonical_bytes

    target.write_bytes(canonical_bytes(form) + b"\n")
    return target


def _swap_bounds(form) -> None:  # noqa: ANN001
    """The forgery of the issue: evacuated_rate shown as "0.999 [0.998, 0.9029]"."""
    form["overall"]["metrics"][0]["mean_ci"].update(lower=0.998, upper=0.9029)
    form["overall"]["metrics"][0]["statistics"]["mean"] = 0.999


def _mean_at_min(form) -> None:  # noqa: ANN001
    stats = form["overall"]["metrics"][0]["statistics"]
    stats["mean"] = stats["min"]


@pytest.mark.parametrize(("mutate", "error", "message"), [
    (_swap_bounds, StatisticsInputError, "is above upper bound"),
    (_mean_at_min, PresentationError, r"differs from the statistics recomputed from the verified results at "
                                      r"overall\.metrics\[0\]\.statistics\.mean"),
    (lambda f: f["overall"]["metrics"][0]["statistics"].update(mean="x"), StatisticsInputError, "must be a finite"),
    (lambda f: f["overall"]["metrics"][0]["statistics"].update(mean=[0.5]), StatisticsInputError, "must be a finite"),
], ids=["lower above upper", "another mean", "mean is a string", "mean is a list"])
def test_given_statistics_must_be_the_recomputed_ones(results, suite, tmp_path, genuine, mutate, error,  # noqa: ANN001
                                                      message) -> None:
    """Issue 22 (defects 6 and 15): a --stats file with impossible or merely different values is refused in one
    line, never shown; and nothing of the report is left on disk (no folder, no missing parent created)."""
    forged = _forge(genuine[0], tmp_path / "forged.stats.json", mutate)
    out = tmp_path / "deep" / "r"
    with pytest.raises(error, match=message):
        build_report([results["stay"], results["greedy"]], suite, out, stats=[forged], resamples=200)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["forged.stats.json"]


def test_a_refused_stats_file_leaves_a_previous_report_as_it_was(results, suite, tmp_path, genuine) -> None:  # noqa: ANN001
    """Issue 22 (defect 6): a refusal found only after every result was verified (a paired artifact that is
    not the recomputation) leaves the previous report's folder exactly as it was: no file added, changed or removed."""
    out = tmp_path / "r"
    build_report([results["stay"], results["greedy"]], suite, out, resamples=200)
    forged = _forge(genuine[1], tmp_path / "forged.compare.json", _mean_at_min)
    before = _tree(tmp_path)
    with pytest.raises(PresentationError, match="differs from the statistics recomputed"):
        build_report([results["stay"], results["greedy"]], suite, out, baseline="stay", stats=[forged],
                     resamples=200, force=True)
    assert _tree(tmp_path) == before
    assert forged.exists()


def test_given_statistics_in_other_json_text_are_refused(results, suite, tmp_path, genuine) -> None:  # noqa: ANN001
    """The same values pretty-printed are not the bytes stats writes: refused, naming the reason."""
    pretty = tmp_path / "pretty.stats.json"
    pretty.write_text(json.dumps(json.loads(genuine[0].read_bytes()), indent=1))
    with pytest.raises(PresentationError, match="not as the exact bytes"):
        build_report([results["stay"], results["greedy"]], suite, tmp_path / "r", stats=[pretty], resamples=200)


def test_given_statistics_set_their_own_resample_count(results, suite, tmp_path) -> None:  # noqa: ANN001
    """A --stats artifact computed with 300 resamples is checked against a recomputation with 300 and shown so;
    the rest of the report uses --resamples."""
    from emberbench.statistics import aggregate_artifact, write_artifact

    given = tmp_path / "greedy-300.stats.json"
    write_artifact(aggregate_artifact(results["greedy"], suite, 300), given)
    built = build_report([results["stay"], results["greedy"]], suite, tmp_path / "r", stats=[given], resamples=200)
    assert built.aggregates["greedy"].resamples == 300 and built.aggregates["greedy"].origin == str(given)
    assert built.aggregates["stay"].resamples == 200


def test_a_new_report_folder_appears_whole_with_ordinary_permissions(results, suite, tmp_path) -> None:  # noqa: ANN001
    """The staging folder is renamed into place: nothing else is left beside it, and its mode is a mkdir's."""
    import os

    out = tmp_path / "a" / "b" / "r"
    build_report([results["stay"]], suite, out, resamples=200)
    mask = os.umask(0)
    os.umask(mask)
    assert os.stat(out).st_mode & 0o777 == 0o777 & ~mask
    assert [p.name for p in (tmp_path / "a" / "b").iterdir()] == ["r"]
    assert (out / "report-files.json").is_file()


def _wlt_charts(html: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """Each paired bar chart of the page: its title, and per row the metric and the text beside the bar."""
    charts = []
    for svg in re.findall(r"<svg[^>]*>.*?</svg>", html, re.S):
        if 'class="wlt-row"' not in svg:
            continue
        title = re.search(r'aria-label="([^"]*)"', svg).group(1)
        rows = re.findall(r'<g class="wlt-row" data-metric="([^"]+)">.*?<text[^>]*>[^<]*</text>.*?'
                          r'<text[^>]*x="\d+"[^>]*>([^<]*)</text></g>', svg, re.S)
        charts.append((title, rows))
    return charts


def test_paired_bar_numbers_follow_its_title(report) -> None:  # noqa: ANN001
    """Issue 27 (defect 1): the paired bar's numbers read in the order its title names them, so 32 better and
    4 worse is never read as 4 tied. Every number also carries its word."""
    html = (report.folder / "index.html").read_text()
    charts = _wlt_charts(html)
    assert len(charts) == 2
    attr = {"better": "wins", "worse": "losses", "tied": "ties"}
    checked_unequal = False
    for title, rows in charts:
        words = re.search(r"paired episodes (\w+) / (\w+) / (\w+)", title).groups()
        assert sorted(words) == ["better", "tied", "worse"]
        model = title.split(" - ")[0]
        assert rows
        for metric, text in rows:
            cell = report.comparisons[model].overall.cells[metric]
            numbers = [int(n) for n in re.findall(r"\d+", text)]
            assert numbers == [getattr(cell, attr[w]) for w in words], (title, metric, text)
            assert re.findall(r"[a-z]+", text) in ([], list(words))
            checked_unequal |= cell.losses != cell.ties
    assert checked_unequal, "the fixture must hold a metric whose worse and tied counts differ"


def _positions(text: str, marks: list[str]) -> list[int]:
    return [text.index(m) for m in marks]


def test_report_leads_with_findings(report) -> None:  # noqa: ANN001
    """Issue 27: the page and the Markdown open with a summary (best mean per metric, clear paired differences
    in words with their intervals), then the leaderboard, comparisons and figures; provenance last, folded."""
    html = (report.folder / "index.html").read_text()
    order = ['id="summary"', 'id="leaderboard"', 'id="comparisons"', 'id="egress"', 'id="heatmaps"',
             'id="provenance"']
    assert _positions(html, order) == sorted(_positions(html, order))
    provenance = html[html.index('id="provenance"'):]
    assert provenance.index("<details>") < provenance.index(report.suite.hash)
    summary = html[html.index('id="summary"'):html.index('id="leaderboard"')]
    # the best mean of every metric with a direction, and none for the exit metrics
    assert summary.count('<tr data-metric="') == 9 and 'data-metric="exit_balance"' not in summary
    best = re.search(r'<tr data-metric="casualty_rate"><th scope="row">[^<]*</th><td class="who">([^<]*)</td>',
                     summary).group(1)
    means = {m: report.aggregates[m].overall.cells["casualty_rate"].mean for m in report.aggregates}
    assert set(best.split(", ")) == {m for m, v in means.items() if v == min(means.values())}
    # every clear paired difference is said in words, with its interval
    clear = [(m, metric, c) for m, s in report.comparisons.items() for metric, c in s.overall.cells.items()
             if c.lower is not None and (c.lower > 0 or c.upper < 0) and metric not in ("exits_used", "max_exit_share",
                                                                                      "exit_balance")]
    assert clear, "the fixture must hold a clear paired difference"
    for model, metric, _ in clear:
        item = re.search(rf'<li data-model="{model}">(.*?)</ul></li>', summary).group(1)
        assert re.search(rf"<li>{metric} [\u2191\u2193]: [+-]?[0-9.e-]+ \[[+-]?[0-9.e-]+, ", item)
    md = (report.folder / "report.md").read_text()
    heads = ["## Summary", "## Leaderboard", "## Paired comparisons", "## Built from"]
    assert _positions(md, heads) == sorted(_positions(md, heads))
    assert "<details>" in md[md.index("## Built from"):]


def test_leaderboard_marks_the_best_and_groups_columns(report) -> None:  # noqa: ANN001
    """The best mean of each directed column is marked (page: a star, Markdown: bold); columns carry their kind."""
    html = (report.folder / "index.html").read_text()
    board = html[html.index('id="leaderboard"'):html.index("<h3>By scenario")]
    for kind in ("outcome", "behaviour", "proxy", "descriptive", "all"):
        assert f'id="show-{kind}"' in board
    assert board.count('class="k-outcome best"') >= 5
    assert 'class="k-descriptive best"' not in board
    md = (report.folder / "report.md").read_text()
    table = md.split("## Leaderboard")[1].split("\n\n")[2].splitlines()
    col = 1 + list(METRIC_NAMES).index("evacuated_rate")
    cells = {r.split("|")[1].strip(): r.split("|")[1 + col].strip() for r in table[2:]}
    means = {m: report.aggregates[m].overall.cells["evacuated_rate"].mean for m in report.aggregates}
    top = max(means.values())
    for row_link, text in cells.items():
        model = re.match(r"\[([^\]]+)\]", row_link).group(1)
        assert text.startswith("**") == (means[model] == top)


def test_a_missing_interval_says_why(report) -> None:  # noqa: ANN001
    """Issue 27 (defect 9): a scenario group of 2 episodes has no interval; page and Markdown say n 2 < 5
    instead of printing [-, -]."""
    html = (report.folder / "index.html").read_text()
    md = (report.folder / "report.md").read_text()
    assert "[-, -]" not in html and "[-, -]" not in md
    assert "no interval: n 2 &lt; 5" in html and "no interval: n 2 < 5" in md


def test_identical_values_with_different_intervals_are_explained(results, suite, tmp_path) -> None:  # noqa: ANN001
    """Issue 27 (defect 9): two results with identical per-episode values get different intervals, because the
    statistics specification seeds each interval's bootstrap by its result digest. The report says so, naming
    the models, instead of leaving the difference unexplained."""
    from emberbench.evaluation.runner import run_evaluation
    from tests.viewer_data import small_manifest

    twin = tmp_path / "greedy-twin.json"
    run_evaluation(small_manifest(suite), suite, "greedy", "greedy-twin", twin)
    built = build_report([results["stay"], results["greedy"], twin], suite, tmp_path / "r", resamples=200)
    differ = [m for m in METRIC_NAMES
              if (a := built.aggregates["greedy"].overall.cells[m]).mean == (b := built.aggregates["greedy-twin"]
                                                                            .overall.cells[m]).mean
              and (a.lower, a.upper) != (b.lower, b.upper)]  # the statistics are left as specified
    assert differ, "the fixture must hold a metric whose intervals differ"
    for text in ((built.folder / "index.html").read_text(), (built.folder / "report.md").read_text()):
        note = re.search(r"greedy, greedy-twin have identical per-episode values of ([a-z_, ]+), yet their "
                         r"intervals differ\.[^<\n]*", text)
        assert note and "seeded by its result" in note.group(0)
        assert set(differ) <= set(note.group(1).split(", "))


def test_a_failed_report_leaves_nothing_and_the_corrected_rerun_is_accepted(results, suite, tmp_path) -> None:  # noqa: ANN001
    """Issue 27 (defect 3), the reported case: results of two manifests fail only after the first result was
    verified and its viewer page written; nothing reaches --out (nor beside it), and the corrected rerun into
    the same --out is accepted without --force."""
    from emberbench.evaluation.runner import run_evaluation
    from tests.viewer_data import small_manifest

    other = tmp_path / "inputs" / "other-manifest.json"
    other.parent.mkdir()
    run_evaluation(small_manifest(suite, seeds=(7,)), suite, "greedy", "greedy", other)
    for existing in (False, True):
        out = tmp_path / "work" / "r240"
        if existing:
            out.mkdir(parents=True)
        with pytest.raises(PresentationError, match="only results of one manifest compare"):
            build_report([results["stay"], other], suite, out, resamples=200)
        assert sorted(p.relative_to(tmp_path).as_posix() for p in (tmp_path / "work").rglob("*")) == (
            ["work/r240"] if existing else [])
    built = build_report([results["stay"], results["greedy"]], suite, out, resamples=200)
    assert (built.folder / "index.html").is_file() and not built.replaced


def test_rerunning_with_fewer_results_needs_force(results, suite, tmp_path) -> None:  # noqa: ANN001
    """Issue 27 (defect 3): a rerun into a report's folder is refused without --force (the previous report,
    viewer pages included, stays whole); with --force it replaces the previous report whole."""
    out = tmp_path / "r"
    build_report([results["stay"], results["greedy"], results["fire-aware"]], suite, out, resamples=200)
    before = _tree(tmp_path)
    with pytest.raises(PresentationError, match="holds a previous report; give --force"):
        build_report([results["stay"], results["greedy"]], suite, out, resamples=200)
    assert _tree(tmp_path) == before
    built = build_report([results["stay"], results["greedy"]], suite, out, resamples=200, force=True)
    assert built.replaced and not (out / f"viewer/{model_slug('fire-aware')}.html").exists()
    present = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert present == sorted([*built.files, "report-files.json"])
