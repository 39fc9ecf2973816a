"""Task-grouped failure rates with a matched control, by paired task-cluster resampling.

The whole public surface of the reader. Everything here uses only the Python
standard library, so ``python3 scripts/check_grouped_rates.py`` runs without
installing anything; ``emberbench grouped-rates`` calls the same functions.
The method, the formats and the caps are stated in :mod:`.contract` (written
out as ``contract.json``) and explained in ``docs/grouped-rates.md``.
"""

from __future__ import annotations

from .contract import contract_document
from .documents import first_difference, render
from .from_results import FAILURE_RULES, input_from_results
from .inputs import GroupedInput, parse_input
from .reader import Outcome, check_file, evaluate, main, summary, write_contract
from .report import build_report

__all__ = [
    "FAILURE_RULES",
    "GroupedInput",
    "Outcome",
    "build_report",
    "check_file",
    "contract_document",
    "evaluate",
    "first_difference",
    "input_from_results",
    "main",
    "parse_input",
    "render",
    "summary",
    "write_contract",
]
