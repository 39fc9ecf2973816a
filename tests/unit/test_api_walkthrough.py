"""The public Python API: every exported name resolves and is documented; docs/api.md runs (issue 16, item 7)."""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

import emberbench

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"
CELL = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _cells() -> list[str]:
    return CELL.findall(DOC.read_text(encoding="utf-8"))


def _expected_outputs(cell: str) -> list[str]:
    """The ``# ...`` lines that directly follow a ``print`` line: what the cell must print."""
    lines = cell.splitlines()
    return [lines[i + 1][2:] for i, line in enumerate(lines[:-1])
            if line.lstrip().startswith("print(") and lines[i + 1].startswith("# ")]


@pytest.mark.parametrize("name", emberbench.__all__)
def test_every_public_name_resolves_and_is_documented(name: str) -> None:
    """Each name of ``__all__`` is importable from ``emberbench`` and named in docs/api.md."""
    assert getattr(emberbench, name) is not None
    assert f"`{name}`" in DOC.read_text(encoding="utf-8")


def test_unknown_names_are_attribute_errors() -> None:
    """The lazy loader refuses what it does not export (so ``hasattr`` and typos behave)."""
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        emberbench.nothing_here  # noqa: B018
    assert set(emberbench.__all__) <= set(dir(emberbench))


def test_import_stays_light() -> None:
    """``import emberbench`` loads neither numpy, ray nor the store; a public name loads its module."""
    code = ("import sys, emberbench; heavy = {'numpy', 'ray', 'emberbench.store'} & set(sys.modules); "
            "emberbench.Observation; print(sorted(heavy), 'emberbench.sim.observation' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["[]", "True"]


def test_the_walkthrough_runs_cell_by_cell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every python cell of docs/api.md runs, in order, in an empty folder; each print shows the documented
    output (``…`` stands for the rest of a line)."""
    monkeypatch.chdir(tmp_path)
    cells = _cells()
    assert len(cells) >= 6
    namespace: dict[str, object] = {"__name__": "__walkthrough__"}
    for number, cell in enumerate(cells, 1):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(cell, f"docs/api.md cell {number}", "exec"), namespace)  # noqa: S102 - our own doc
        got = printed.getvalue().splitlines()
        want = _expected_outputs(cell)
        assert len(got) == len(want), (number, got, want)
        for line, expected in zip(got, want):
            if expected.endswith("…"):
                assert line.startswith(expected[:-1]), (number, line, expected)
            else:
                assert line == expected, (number, line, expected)
