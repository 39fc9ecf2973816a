"""stats and compare at the command line: tables within $COLUMNS, every number whole, plain when piped."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from emberbench.cli.main import app
from emberbench.cli.stats_cmd import GroupChoice
from emberbench.results.manifest import EvaluationManifest, ManifestEntry
from emberbench.evaluation.runner import run_evaluation
from emberbench.statistics.table import Groups
from tests.table_check import assert_whole_numbers

runner = CliRunner()


@pytest.fixture(scope="module")
def results(tmp_path_factory, suite):  # noqa: ANN001
    """Results of greedy and fire-aware on six episodes of two scenarios."""
    folder = tmp_path_factory.mktemp("tables")
    entries = []
    for sid in ("v1-pub-01-single-exit-sparse", "v1-pub-09-threatened-nearest-exit"):
        for seed in (0, 1, 2):
            entries.append(ManifestEntry(len(entries), sid, suite.scenario(sid).content_hash, seed))
    manifest = EvaluationManifest(suite.id, suite.version, suite.hash, tuple(entries))
    for policy in ("greedy", "fire-aware"):
        run_evaluation(manifest, suite, policy, policy, folder / f"{policy}.json")
    return folder


def _table_lines(output: str) -> list[str]:
    # The last line names the written file and its digest; it is not part of the tables.
    return [line for line in output.splitlines() if " written to " not in line]


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize(("command", "groups"), [("stats", "overall"), ("compare", "all"), ("stats", "scenario")])
def test_tables_fit_columns_and_show_every_number(results, tmp_path, command, groups, columns) -> None:  # noqa: ANN001
    """Piped output at $COLUMNS: every line fits, no trailing spaces or escape codes, every number whole."""
    out = tmp_path / "s.json"
    inputs = [str(results / "fire-aware.json")] + ([str(results / "greedy.json")] if command == "compare" else [])
    result = runner.invoke(app, [command, *inputs, "--resamples", "100", "--groups", groups, "--out", str(out)],
                           env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    lines = _table_lines(result.output)
    assert all(len(line) <= columns and line == line.rstrip() for line in lines), result.output
    assert "\x1b" not in result.output and "…" not in result.output
    assert_whole_numbers(json.loads(out.read_bytes()), "\n".join(lines), groups, columns)


def test_stats_groups_scenario_is_not_a_traceback(results, tmp_path) -> None:  # noqa: ANN001
    """Issue 16: `stats --groups scenario` printed a ValueError traceback; now it prints one table per scenario."""
    out = tmp_path / "s.json"
    result = runner.invoke(app, ["stats", str(results / "greedy.json"), "--resamples", "100", "--groups", "scenario",
                                 "--out", str(out)])
    assert result.exit_code == 0 and result.exception is None, result.output
    assert "greedy · scenario v1-pub-01-single-exit-sparse" in result.output
    assert "greedy · scenario v1-pub-09-threatened-nearest-exit" in result.output
    assert "greedy · overall" not in result.output


def test_unknown_groups_value_is_a_usage_error_before_any_work(results, tmp_path) -> None:  # noqa: ANN001
    """An unknown --groups value exits 2, names the choices and writes nothing."""
    out = tmp_path / "s.json"
    result = runner.invoke(app, ["stats", str(results / "greedy.json"), "--groups", "scenarios", "--out", str(out)])
    assert result.exit_code == 2 and "overall" in result.output and "family" in result.output
    assert not out.exists() and "Traceback" not in result.output


def test_cli_group_choices_are_the_table_choices() -> None:
    """The --groups choice type offers exactly the groups the table renderer knows."""
    assert [c.value for c in GroupChoice] == [g.value for g in Groups]
