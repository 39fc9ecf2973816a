"""docs/gym.md runs as a test: its Python cells, the policy module it shows, and its commands.

In one empty folder and in document order: a ``python`` block whose first
line is ``# <name>.py`` is written to that file (it is a module the page
tells the reader to save); every other ``python`` block runs, each ``print``
showing the ``# ...`` lines under it; every ``console`` block runs its
``$ emberbench ...`` commands (an environment prefix such as ``PYTHONPATH=.``
is honoured by putting the folder on the import path), each output matching
the lines shown (``…`` as in docs/user-guide.md's test).
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import sys
from pathlib import Path

import pytest

pytest.importorskip("gymnasium")

from typer.testing import CliRunner  # noqa: E402

from emberbench.cli.main import app  # noqa: E402
from tests.unit.test_api_walkthrough import _expected_outputs  # noqa: E402
from tests.unit.test_user_guide import _pattern  # noqa: E402

PAGE = Path(__file__).resolve().parents[2] / "docs" / "gym.md"
BLOCK = re.compile(r"^```(?P<kind>python|console)\n(?P<body>.*?)^```", re.S | re.M)
MODULE = re.compile(r"# (?P<name>\w+\.py)\n")


def blocks() -> list[tuple[str, str]]:
    """(kind, body) of every python and console block of the page, in order."""
    return [(m["kind"], m["body"]) for m in BLOCK.finditer(PAGE.read_text(encoding="utf-8"))]


def _commands(body: str) -> list[tuple[list[str], list[str]]]:
    found: list[tuple[list[str], list[str]]] = []
    for row in body.splitlines():
        if row.startswith("$ "):
            words = shlex.split(row[2:])
            while words and "=" in words[0]:  # environment assignments before the command
                words.pop(0)
            assert words[0] == "emberbench", row
            found.append((words[1:], []))
        elif found:
            found[-1][1].append(row)
    return found


def test_the_page_has_a_module_a_training_loop_and_commands() -> None:
    """The extraction finds what the test must run (a guard for the parser)."""
    kinds = [kind for kind, _ in blocks()]
    assert kinds.count("console") >= 1 and kinds.count("python") >= 4
    assert any(MODULE.match(body) for kind, body in blocks() if kind == "python")


def test_the_training_loop_and_the_evaluation_run_as_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every block of docs/gym.md, in order, in an empty folder: prints and command outputs are the ones shown."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for key in ("EMBERBENCH_STORE", "RAY_ADDRESS", "EMBERBENCH_DEBUG"):
        monkeypatch.delenv(key, raising=False)
    namespace: dict[str, object] = {"__name__": "__gym_guide__"}
    runner = CliRunner()
    try:
        for number, (kind, body) in enumerate(blocks(), 1):
            module = MODULE.match(body)
            if kind == "python" and module:
                (tmp_path / module["name"]).write_text(body, encoding="utf-8")
            elif kind == "python":
                printed = io.StringIO()
                with contextlib.redirect_stdout(printed):
                    exec(compile(body, f"docs/gym.md block {number}", "exec"), namespace)  # noqa: S102 - our own doc
                assert printed.getvalue().splitlines() == _expected_outputs(body), number
            else:
                for args, expected in _commands(body):
                    while expected and not expected[-1]:
                        expected.pop()
                    result = runner.invoke(app, args, env={"COLUMNS": "80"})
                    where = f"docs/gym.md block {number}: emberbench {' '.join(args)}"
                    assert result.exit_code == 0, f"{where}: exit {result.exit_code}\n{result.output}"
                    assert _pattern(expected).fullmatch(result.output), f"{where}: output differs\n{result.output}"
    finally:
        sys.modules.pop("linear_policy", None)
    assert (tmp_path / "linear.json").is_file()
