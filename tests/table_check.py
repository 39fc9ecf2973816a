"""Checking rendered statistics tables: every number of the artifact appears whole, in its metric's rows."""

from __future__ import annotations

import re

from emberbench.records.metric_defs import METRIC_NAMES
from emberbench.statistics import artifact_tables
from emberbench.statistics.table import ABBREVIATIONS
from emberbench.statistics.table_layout import wrap_lines


def _expected_cells(artifact: dict, entry: dict) -> list[str]:
    """The numbers one metric row must show: n, (undefined,) mean to 4 and bounds to 3 significant digits."""
    stats = entry["statistics"]
    cells = [str(stats["n"]), "—" if stats["mean"] is None else f"{stats['mean']:.4g}"]
    ci = entry.get("mean_ci", entry.get("mean_delta_ci"))
    cells.append("— (n<5)" if ci is None else f"[{ci['lower']:.3g}, {ci['upper']:.3g}]")
    if artifact["artifact"] == "aggregate":
        cells.append(str(entry["undefined"]))
    else:
        cells += ["—" if entry[k] is None else str(entry[k]) for k in ("a_better", "b_better", "ties")]
    return cells


def _blocks(text: str, group_titles: list[str], width: int) -> list[dict[str, str]]:
    """Split rendered text into tables (by title) and each table into one text block per metric."""
    lines = text.splitlines()
    firsts = [wrap_lines(title, width, "title")[0].text for title in group_titles]
    starts = []
    for first in firsts:
        starts.append(lines.index(first, starts[-1] + 1 if starts else 0))
    assert len(starts) == len(group_titles), text
    tables = []
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        body = lines[start:end]
        labels = {name: i for i, line in enumerate(body) for name in METRIC_NAMES
                  if line.split(" ")[0] in (name, ABBREVIATIONS[name]) and not line.split()[1:2] == ["="]}
        order = sorted(labels.items(), key=lambda item: item[1])
        assert [name for name, _ in order] == list(METRIC_NAMES), "\n".join(body)
        blocks = {}
        for j, (name, first) in enumerate(order):
            last = order[j + 1][1] if j + 1 < len(order) else len(body)
            blocks[name] = "\n".join(body[first:last])
        tables.append(blocks)
    return tables


def assert_whole_numbers(artifact: dict, text: str, groups: str, width: int) -> None:
    """Every number of every selected group's metrics appears whole in that metric's part of ``text``."""
    selected = {
        "overall": [artifact["overall"]],
        "scenario": artifact["scenarios"],
        "family": artifact["families"],
        "all": [artifact["overall"], *artifact["scenarios"], *artifact["families"]],
    }[groups]
    tables = artifact_tables(artifact, groups=groups)
    for group, table, blocks in zip(selected, tables, _blocks(text, [t.title for t in tables], width)):
        for entry in group["metrics"]:
            block = blocks[entry["metric"]]
            for cell in _expected_cells(artifact, entry):
                assert re.search(rf"(?<![\w.\-\[]){re.escape(cell)}(?![\w.])", block), (cell, block)
