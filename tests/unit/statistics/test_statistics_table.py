"""Terminal tables: one row per metric, intervals shown, no cross-metric totals."""

from __future__ import annotations

import pytest
from rich.console import Console

from emberbench.metric_defs import METRIC_NAMES
from emberbench.statistics import aggregate_from_values, artifact_tables, paired_from_values, render_artifact
from stats_factory import DIGEST_A, DIGEST_B, all_episodes, make_ctx


def _text(artifact, groups="overall"):
    console = Console(record=True, width=200)
    render_artifact(artifact, console, groups=groups)
    return console.export_text()


@pytest.fixture(scope="module")
def artifacts():
    """An aggregate and a paired artifact (dictionary form)."""
    ctx = make_ctx()
    a, b = all_episodes(ctx), all_episodes(ctx, shift=2, skip=(1,))
    return (
        aggregate_from_values(ctx, "model-a", DIGEST_A, a, resamples=100).to_dict(),
        paired_from_values(ctx, "model-a", "model-b", DIGEST_A, DIGEST_B, a, b, resamples=100).to_dict(),
    )


def test_aggregate_table_lists_every_metric_with_mean_and_interval(artifacts):
    """Each metric has a row with its n, mean and interval (or a dash when n < 5)."""
    aggregate, _ = artifacts
    text = _text(aggregate)
    for name in METRIC_NAMES:
        assert name in text
    evac = aggregate["overall"]["metrics"][0]
    assert f"{evac['statistics']['mean']:.4g}" in text
    assert f"[{evac['mean_ci']['lower']:.3g}, {evac['mean_ci']['upper']:.3g}]" in text
    assert "total" not in text.lower() and "score" not in text.lower()


def test_paired_table_shows_direction_and_per_metric_counts(artifacts):
    """Rows show the direction and A better / B better / ties; exit metrics show dashes."""
    _, paired = artifacts
    text = _text(paired)
    assert "A better" in text and "B better" in text and "ties" in text
    rows = {line.split()[0]: line for line in text.splitlines() if line.strip()}
    assert "higher" in rows["evacuated_rate"] and "lower" in rows["casualty_rate"]
    assert "none" in rows["exit_balance"] and rows["exit_balance"].count("—") == 3
    assert "—" not in rows["casualty_rate"]
    assert "A - B" in text


def test_groups_all_renders_every_group_and_unknown_kind_is_refused(artifacts):
    """groups='all' gives one table per group; a non-statistics dict is refused."""
    aggregate, _ = artifacts
    tables = artifact_tables(aggregate, groups="all")
    assert len(tables) == 1 + len(aggregate["scenarios"]) + len(aggregate["families"])
    with pytest.raises(ValueError, match="artifact"):
        artifact_tables({"artifact": "result"})
    with pytest.raises(ValueError, match="groups"):
        artifact_tables(aggregate, groups="some")
