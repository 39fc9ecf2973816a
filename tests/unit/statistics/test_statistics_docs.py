"""The worked example in docs/statistics.md runs as a doctest."""

from __future__ import annotations

import doctest
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "statistics.md"


def test_docs_worked_example_passes_as_doctest():
    """Every example in docs/statistics.md passes, and there is at least the section 4 one."""
    result = doctest.testfile(str(DOC), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 5
    assert result.failed == 0
