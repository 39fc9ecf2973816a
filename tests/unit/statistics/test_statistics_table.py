"""Terminal tables: one row per metric, intervals shown, no cross-metric totals, every number whole at any width."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from emberbench.records.metric_defs import METRIC_NAMES
from emberbench.statistics import aggregate_from_values, artifact_tables, paired_from_values, render_artifact
from emberbench.statistics.table import ABBREVIATIONS, Groups, pipe_width, render_text
from emberbench.statistics.table_layout import Column, Row, TextTable, layout
from stats_factory import DIGEST_A, DIGEST_B, all_episodes, make_ctx
from tests.table_check import assert_whole_numbers

WIDTHS = (200, 120, 80, 60, 40)


@pytest.fixture(scope="module")
def artifacts():
    """An aggregate and a paired artifact (dictionary form), with missing episodes and undefined values."""
    ctx = make_ctx()
    a, b = all_episodes(ctx), all_episodes(ctx, shift=2, skip=(1,))
    return (
        aggregate_from_values(ctx, "model-a", DIGEST_A, a, resamples=100).to_dict(),
        paired_from_values(ctx, "model-a", "model-b", DIGEST_A, DIGEST_B, a, b, resamples=100).to_dict(),
    )


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("groups", ["overall", "all"])
@pytest.mark.parametrize("kind", ["aggregate", "paired"])
def test_every_number_appears_whole_within_the_width(artifacts, kind, groups, width) -> None:  # noqa: ANN001
    """At every width each line fits, no line ends in a space, nothing is cut, and every number is there."""
    artifact = artifacts[0] if kind == "aggregate" else artifacts[1]
    text = render_text(artifact, width, groups=groups)
    for line in text.splitlines():
        assert len(line) <= width, line
        assert line == line.rstrip(), repr(line)
    assert "…" not in text and "\x1b" not in text
    assert_whole_numbers(artifact, text, groups, width)


def test_wide_terminals_get_full_names_and_narrow_ones_a_legend(artifacts) -> None:  # noqa: ANN001
    """The paired table keeps full names and headers at 120 columns, shortens headers at 80, abbreviates at 70."""
    _, paired = artifacts
    wide = render_text(paired, 120)
    assert re.search(r"^congestion_block_rate  ", wide, re.M) and "A better" in wide and "A+ /" not in wide
    short_headers = render_text(paired, 80)
    assert re.search(r"^congestion_block_rate  ", short_headers, re.M)
    assert "A+ / B+ = episodes where A / B did better" in short_headers and "congest =" not in short_headers
    narrow = render_text(paired, 70)
    assert re.search(r"^congest  ", narrow, re.M) and "congest = congestion_block_rate" in narrow


def test_aggregate_table_lists_every_metric_with_mean_and_interval(artifacts) -> None:  # noqa: ANN001
    """Each metric has a row with its n, mean and interval (or a dash when n < 5)."""
    aggregate, _ = artifacts
    text = render_text(aggregate, 200)
    for name in METRIC_NAMES:
        assert name in text
    evac = aggregate["overall"]["metrics"][0]
    assert f"{evac['statistics']['mean']:.4g}" in text
    assert f"[{evac['mean_ci']['lower']:.3g}, {evac['mean_ci']['upper']:.3g}]" in text
    assert "total" not in text.lower() and "score" not in text.lower()


def test_paired_table_shows_direction_and_per_metric_counts(artifacts) -> None:  # noqa: ANN001
    """Rows show the direction and A better / B better / ties; exit metrics show dashes."""
    _, paired = artifacts
    text = render_text(paired, 200)
    assert "A better" in text and "B better" in text and "ties" in text
    rows = {line.split()[0]: line for line in text.splitlines() if line.strip()}
    assert "higher" in rows["evacuated_rate"] and "lower" in rows["casualty_rate"]
    assert "none" in rows["exit_balance"] and rows["exit_balance"].count("—") == 3
    assert "—" not in rows["casualty_rate"]
    assert "A - B" in text


@pytest.mark.parametrize(("groups", "count"), [("overall", 1), ("scenario", 2), ("family", 2), ("all", 5)])
def test_group_choices_select_tables(artifacts, groups, count) -> None:  # noqa: ANN001
    """overall, scenario, family and all give the overall table, one per scenario, one per family, or all."""
    aggregate, _ = artifacts
    assert len(artifact_tables(aggregate, groups=groups)) == count
    assert len(artifact_tables(aggregate, groups=Groups(groups))) == count


def test_unknown_group_choice_and_artifact_kind_are_refused(artifacts) -> None:  # noqa: ANN001
    """A non-statistics dict and an unknown group choice are refused with ValueError naming the choices."""
    aggregate, _ = artifacts
    with pytest.raises(ValueError, match="artifact"):
        artifact_tables({"artifact": "result"})
    with pytest.raises(ValueError, match="overall, scenario, family, all"):
        artifact_tables(aggregate, groups="some")


def test_terminal_rendering_is_styled_within_the_console_width(artifacts) -> None:  # noqa: ANN001
    """On a terminal console the rules are drawn with box characters and no line passes the width."""
    _, paired = artifacts
    console = Console(record=True, width=80, force_terminal=True, color_system="standard", file=io.StringIO())
    render_artifact(paired, console)
    text = console.export_text(styles=False, clear=False)
    assert "─" * 20 in text and all(len(line) <= 80 for line in text.splitlines())
    assert "\x1b[" in console.export_text(styles=True)


def test_piped_output_is_plain_at_columns_or_80(artifacts, monkeypatch) -> None:  # noqa: ANN001
    """Without a terminal the tables are plain text at $COLUMNS, or 80 columns when it is unset or unusable."""
    aggregate, _ = artifacts
    assert pipe_width({}) == 80 and pipe_width({"COLUMNS": "132"}) == 132 and pipe_width({"COLUMNS": "x"}) == 80
    monkeypatch.setenv("COLUMNS", "60")
    out = io.StringIO()
    render_artifact(aggregate, out=out)
    assert out.getvalue() == render_text(aggregate, 60)


def test_layout_never_cuts_a_cell_wider_than_the_width() -> None:
    """A cell wider than the whole width stays whole in the stacked layout (the line may overflow)."""
    table = TextTable("t", "", "metric", (Column("value", "v"),), (Row("m", "m", ("x" * 30,)),))
    lines = [line.text for line in layout(table, 10)]
    assert any("x" * 30 in line for line in lines)


def test_rows_must_have_one_cell_per_column() -> None:
    """A row with the wrong number of cells is refused when the table is built."""
    with pytest.raises(ValueError, match="2 cells for 1 columns"):
        TextTable("t", "", "metric", (Column("value", "v"),), (Row("m", "m", ("1", "2")),))


def test_abbreviations_cover_every_metric_once() -> None:
    """Each metric has a distinct abbreviation no longer than 9 characters."""
    assert set(ABBREVIATIONS) == set(METRIC_NAMES)
    assert len(set(ABBREVIATIONS.values())) == len(METRIC_NAMES)
    assert all(len(short) <= 9 for short in ABBREVIATIONS.values())
