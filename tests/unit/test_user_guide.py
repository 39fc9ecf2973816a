"""The examples of docs/user-guide.md run as tests (issue 16: "The examples in docs/user-guide.md run as tests").

Every fenced ``console`` block whose first line is ``$ emberbench ...`` runs,
in document order, in one temporary folder (so later blocks see the files
earlier ones wrote), at 80 columns. A block preceded by the line
``<!-- user-guide-test: skip -->`` is left out (it needs Node.js, a killed
process, or writes outside the folder). Each command's output must match
the lines shown under it, where ``…`` stands for any text within a line and
a line holding only ``…`` for any number of lines; a shown ``error:`` line
means the command must fail.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from emberbench.cli.main import app

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "user-guide.md"
SKIP = "<!-- user-guide-test: skip -->"
BLOCK = re.compile(r"(?P<before>[^\n]*)\n```console\n(?P<body>.*?)^```", re.S | re.M)


def commands() -> list[tuple[int, list[str], list[str]]]:
    """(line number, arguments, expected output lines) of every command the guide shows, in order."""
    text = GUIDE.read_text(encoding="utf-8")
    found = []
    for block in BLOCK.finditer(text):
        body = block["body"].splitlines()
        if block["before"].strip() == SKIP or not body or not body[0].startswith("$ emberbench "):
            continue
        line = text.count("\n", 0, block.start("body")) + 1
        current: tuple[int, list[str], list[str]] | None = None
        for offset, row in enumerate(body):
            if row.startswith("$ "):
                assert row.startswith("$ emberbench "), f"user-guide.md:{line + offset}: a block mixes commands"
                current = (line + offset, shlex.split(row[2:])[1:], [])
                found.append(current)
            elif current is not None:
                current[2].append(row)
    for _, _, expected in found:  # a blank line between two commands belongs to neither
        while expected and not expected[-1]:
            expected.pop()
    return found


def _pattern(expected: list[str]) -> re.Pattern[str]:
    parts = []
    for row in expected:
        if row.strip() == "…":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(r"[^\n]*?".join(re.escape(piece) for piece in row.split("…")) + r"\n")
    return re.compile("".join(parts))


def test_the_guide_has_examples_to_run() -> None:
    """The extraction finds the guide's walkthrough (a regression guard for the parser itself)."""
    shown = [" ".join(args[:2]) for _, args, _ in commands()]
    assert {"suite list", "manifest build", "run --manifest", "stats greedy.json", "pair greedy.json"} <= set(shown)


def test_every_example_runs_as_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each command of the guide, in order, in one folder: its exit status and its output are the ones shown."""
    monkeypatch.chdir(tmp_path)
    for key in ("EMBERBENCH_STORE", "RAY_ADDRESS", "EMBERBENCH_DEBUG"):
        monkeypatch.delenv(key, raising=False)
    runner = CliRunner()
    for line, args, expected in commands():
        result = runner.invoke(app, args, env={"COLUMNS": "80"})
        where = f"user-guide.md:{line}: emberbench {' '.join(args)}"
        fails = any(row.startswith("error: ") for row in expected)
        assert (result.exit_code != 0) == fails, f"{where}: exit {result.exit_code}\n{result.output}"
        assert _pattern(expected).fullmatch(result.output), f"{where}: output differs\n{result.output}"
