"""Shared builders for the grouped-rates tests (and a check that they build valid inputs)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

from emberbench.grouped_rates import build_report, parse_input, render

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "task-grouped-rates"
SCRIPT = ROOT / "scripts" / "check_grouped_rates.py"

Counts = dict[str, tuple[tuple[int, int, int], tuple[int, int, int]]]

EXAMPLE_COUNTS: Counts = {
    "T01": ((8, 2, 0), (2, 8, 0)),
    "T02": ((3, 1, 0), (1, 3, 0)),
    "T03": ((0, 2, 0), (1, 1, 0)),
    "T04": ((1, 1, 1), (0, 2, 1)),
}


def make_document(
    counts: Counts,
    resampling: dict[str, Any] | None = None,
    arms: tuple[str, str] = ("attack", "benign"),
    clones: int = 1,
) -> dict[str, Any]:
    """Return an input document with (failure, success, unresolved) counts per task and arm.

    ``clones`` repeats every episode that many times within its task.
    """
    episodes = []
    for task, per_arm in counts.items():
        for arm, triple in zip(arms, per_arm):
            k = 0
            for label, n in zip(("failure", "success", "unresolved"), triple):
                for _ in range(n * clones):
                    k += 1
                    episodes.append({"id": f"{task}/{arm}/{k}", "task": task, "arm": arm, "label": label})
    return {
        "format": "emberbench.grouped-rates.input",
        "version": "1.0",
        "description": "test input",
        "population": {"description": "test tasks", "tasks": list(counts)},
        "dependence": "test: none declared",
        "arms": list(arms),
        "matching": {
            "shared": {"agent": "a", "environment": "e", "budget": "b", "outcome_rubric": "r"},
            "varied": {"condition": "intervention", "per_arm": {arms[0]: "on", arms[1]: "off"}},
        },
        "rubric": {"failure": "f", "success": "s", "unresolved": "u"},
        "resampling": resampling or {"mode": "exact"},
        "episodes": episodes,
    }


def report_of(document: dict[str, Any]) -> dict[str, Any]:
    """Return the report of ``document`` rendered to bytes."""
    return build_report(render(document))


def frac(value: dict[str, Any] | None) -> Fraction | None:
    """Return the exact Fraction of a report value (None stays None)."""
    if value is None:
        return None
    num, den = value["exact"].split("/")
    return Fraction(int(num), int(den))


def stat(report: dict[str, Any], estimand: str, quantity: str, arm: str | None) -> dict[str, Any]:
    """Return the interval entry of one statistic of ``report``."""
    for entry in report["intervals"]["statistics"]:
        if (entry["estimand"], entry["quantity"], entry["arm"]) == (estimand, quantity, arm):
            return entry
    raise KeyError((estimand, quantity, arm))


def example_document() -> dict[str, Any]:
    """Return the committed worked-example input as parsed JSON."""
    return json.loads((EXAMPLE / "input.json").read_text())


def test_make_document_builds_a_valid_input_with_the_example_counts() -> None:
    """The builder's example document validates and has the worked example's 38 episodes."""
    parsed = parse_input(make_document(EXAMPLE_COUNTS))
    assert len(parsed.episodes) == 38
    assert parsed.tasks == ("T01", "T02", "T03", "T04")
