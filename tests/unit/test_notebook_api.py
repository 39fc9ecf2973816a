"""The notebook API (issue 27): results, statistics and the run catalog as tables in Jupyter, in a terminal and in
pandas and Arrow; evaluate() with progress and the executor options of `run`; report, view and plot as calls."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

import emberbench as eb
from emberbench.cli.main import app
from emberbench.errors import PolicyError
from emberbench.results.episode_rows import EPISODE_COLUMNS
from emberbench.statistics.notebook import AGGREGATE_COLUMNS, PAIRED_COLUMNS
from emberbench.statistics.table import render_text
from tests.run_support import small_manifest


@pytest.fixture(scope="module")
def made(suite):  # noqa: ANN001, ANN201
    """greedy and fire-aware in memory on four episodes, and their statistics."""
    manifest = small_manifest(suite, seeds=(0, 1, 2))
    greedy = eb.evaluate(manifest, suite, "greedy", "greedy")
    aware = eb.evaluate(manifest, suite, "fire-aware", "fire-aware")
    return (manifest, greedy, aware, eb.aggregate_statistics(greedy, suite, resamples=200),
            eb.paired_statistics(aware, greedy, suite, resamples=200))


def _terminal(renderable: object, width: int = 80) -> str:
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    console.print(renderable)
    return console.export_text()


def test_a_result_is_a_table_of_its_episodes(made) -> None:  # noqa: ANN001
    """A result shows its episodes in Jupyter and a terminal; to_pandas() and to_arrow() give every count and
    metric beside the manifest's scenario, seed and families (from the shipped suite), seeds as uint64."""
    manifest, greedy, *_ = made
    html = greedy._repr_html_()
    assert "<table>" in html and html.count("<tr>") == len(manifest.episodes) + 1 and "greedy: 6/6 episodes" in html
    assert "v1-pub-10-route-invalidation" in _terminal(greedy, 120) and "v1-pub-10-route-inval" in _terminal(greedy)
    frame = greedy.to_pandas()
    assert list(frame.columns) == [c.name for c in EPISODE_COLUMNS] and len(frame) == 6
    assert list(frame["seed"]) == [e.seed for e in manifest.episodes]
    assert frame["families"][0] == "single-exit,stochastic-fire"
    assert str(greedy.to_arrow().schema.field("seed").type) == "uint64"
    assert list(frame["casualties"]) == [e.metrics.count("casualties") for e in greedy.episodes]


def test_statistics_are_tables_and_print_as_the_cli_prints_them(made) -> None:  # noqa: ANN001
    """Statistics: one row per group and metric in pandas (overall, scenarios, families), the overall rows in
    Jupyter, and in a rich terminal exactly the table `emberbench stats`/`compare` prints at that width."""
    *_, aggregate, paired = made
    rows = aggregate.to_pandas()
    assert list(rows.columns) == [c.name for c in AGGREGATE_COLUMNS]
    groups = 1 + 2 + len({f for f in rows["group"] if f not in ("overall",)}) - 2
    assert len(rows) == 12 * groups and rows["group_kind"][0] == "overall"
    overall = aggregate.to_dict()["overall"]["metrics"][0]
    assert rows["mean"][0] == overall["statistics"]["mean"] and rows["ci_lower"][0] == overall["mean_ci"]["lower"]
    assert aggregate._repr_html_().count("<tr>") == 13
    for stats in (aggregate, paired):
        assert _terminal(stats).splitlines() == render_text(stats.table_form(), 80).splitlines()
    deltas = paired.to_pandas()
    assert list(deltas.columns) == [c.name for c in PAIRED_COLUMNS]
    first = paired.to_dict()["overall"]["metrics"][0]
    assert (deltas["mean_delta"][0], deltas["a_better"][0], deltas["ties"][0]) == (
        first["statistics"]["mean"], first["a_better"], first["ties"])


def test_evaluate_reports_progress_and_takes_the_executor_options_of_run(made, suite, tmp_path: Path,  # noqa: ANN001
                                                                         capsys) -> None:  # noqa: ANN001
    """evaluate() calls a progress function before the first episode and after each one, draws nothing when
    stderr is not a terminal, plays through a store like `run` (same digest; a second call resumes), and refuses
    what cannot work (a factory object on Ray, an unknown executor)."""
    manifest, greedy, *_ = made
    seen = []
    again = eb.evaluate(manifest, suite, "greedy", "greedy", progress=lambda done, total: seen.append((done, total)))
    assert seen == [(k, 6) for k in range(7)] and again.digest == greedy.digest
    capsys.readouterr()
    eb.evaluate(manifest, suite, "greedy", "greedy")
    assert capsys.readouterr().err == ""
    stored = eb.evaluate(manifest, suite, "greedy", "greedy", store=tmp_path / "store", progress=False)
    assert stored.digest == greedy.digest and stored.to_pandas().equals(greedy.to_pandas())
    counts = []
    resumed = eb.evaluate(manifest, suite, "greedy", "greedy", store=tmp_path / "store",
                          progress=lambda done, total: counts.append(done))
    assert resumed.digest == greedy.digest and counts[0] == 6  # everything came from the store's journal
    with pytest.raises(PolicyError, match="cannot run on Ray"):
        eb.evaluate(manifest, suite, lambda: None, "x", executor="ray")
    with pytest.raises(ValueError, match="executor must be 'local' or 'ray'"):
        eb.evaluate(manifest, suite, "greedy", "greedy", executor="threads")


def test_evaluate_draws_the_cli_bar_when_asked(made, suite, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """progress=True draws the bar the command line draws (rich, on stderr)."""
    from emberbench.evaluation import progress

    drawn = []
    monkeypatch.setattr(progress.Bar, "__call__", lambda self, done, total: drawn.append((self.description, done)))
    manifest, *_ = made
    eb.evaluate(manifest, suite, "greedy", "g", progress=True)
    assert drawn[0] == ("evaluate g", 0) and drawn[-1] == ("evaluate g", 6)


def test_the_run_catalog_is_a_table(made, suite, tmp_path: Path) -> None:  # noqa: ANN001
    """eb.run_catalog(store): one row per run in pandas, the `runs ls` columns in Jupyter and a terminal."""
    manifest, *_ = made
    eb.evaluate(manifest, suite, "greedy", "greedy", store=tmp_path / "store", progress=False)
    catalog = eb.run_catalog(tmp_path / "store")
    frame = catalog.to_pandas()
    assert list(frame["model_id"]) == ["greedy"] and list(frame["episodes_done"]) == [6]
    assert "greedy" in catalog._repr_html_() and "complete" in _terminal(catalog, 120)


def test_report_view_and_plot_are_calls_the_commands_use(made, suite, tmp_path: Path,  # noqa: ANN001
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """eb.report, eb.view and eb.plot write what the commands write, finding the suite from the manifest; the
    commands call them (the same files for the same inputs)."""
    manifest, *_ = made
    monkeypatch.chdir(tmp_path)
    for name in ("greedy", "fire-aware"):
        eb.run_evaluation(manifest, suite, name, name, f"{name}.json")
    built = eb.report(["greedy.json", "fire-aware.json"], "rep", resamples=200)
    assert (built.folder / "index.html").is_file() and (built.folder / "report.md").is_file()
    page = eb.view("greedy.json", episode=2)
    assert page == Path("greedy.episode-2.view.html") and page.read_bytes().startswith(b"<!DOCTYPE html>")
    figure = eb.plot("egress", ["greedy.json"], "e.svg", scenario="v1-pub-10-route-invalidation")
    assert figure.read_bytes().lstrip().startswith(b"<?xml")
    cli = CliRunner().invoke(app, ["view", "greedy.json", "--episode", "2", "--out", "cli.html"])
    assert cli.exit_code == 0 and Path("cli.html").read_bytes() == page.read_bytes()
    with pytest.raises(eb.EmberError, match="exists"):
        eb.view("greedy.json", episode=2)


def test_the_public_names_are_exported() -> None:
    """The notebook calls are public names, and the lazy import keeps `import emberbench` light."""
    for name in ("report", "view", "plot", "export_episodes", "run_catalog", "Table", "evaluate"):
        assert name in eb.__all__ and callable(getattr(eb, name))
    import subprocess

    code = "import sys, emberbench as eb; eb.report; eb.Table; print('pandas' in sys.modules, 'pyarrow' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]  # pandas and pyarrow load only for to_pandas()/to_arrow()
