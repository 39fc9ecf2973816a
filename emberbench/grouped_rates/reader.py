"""The stand-alone reader: recompute a report, write it, compare it with an expected one.

``python3 scripts/check_grouped_rates.py --input IN [--expect REPORT]
[--output OUT] [--contract CONTRACT]`` and ``emberbench grouped-rates`` both
call :func:`evaluate`, so they produce the same bytes. The reader needs only
the Python standard library.

Exit status of :func:`main`: 0 when the report was computed (and matches
``--expect`` when given); 1 when the input is refused or the recomputed
report differs from ``--expect`` (one line on stderr names the reason or the
first difference); 2 for a usage error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..io.atomic import atomic_write_bytes
from ..errors import EmberError, GroupedRatesError
from .contract import MAX_DRAW_CELLS, MAX_INPUT_BYTES, MAX_REPORT_BYTES, contract_document
from .documents import first_difference, parse_json, read_capped, render
from .report import build_report

MAX_REPORT_VALUES = 2 * MAX_DRAW_CELLS + 1_000_000
"""Most JSON values an ``--expect`` report may hold: a report holds at most ``max_draw_cells``
draw cells plus their rows and a fixed part, so twice that is room to spare (it bounds
the memory a hostile expected report can take, under the input policy)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """A computed report and, when one was expected, how it compared.

    Attributes:
        report: the report as a JSON-ready mapping.
        data: its rendered bytes (what ``--output`` receives).
        compared: whether an expected report was given.
        difference: where the recomputed report first differs from the
            expected one, or None when it matches (or nothing was expected).
    """

    report: dict[str, Any]
    data: bytes
    compared: bool
    difference: str | None

    @property
    def mismatch_message(self) -> str | None:
        """The one-line message for a mismatch, or None."""
        if self.difference is None:
            return None
        return f"recomputed report differs from --expect at {self.difference}"


def evaluate(
    input_bytes: bytes,
    *,
    where: str = "input",
    expect: str | Path | None = None,
    output: str | Path | None = None,
) -> Outcome:
    """Compute the report of ``input_bytes``, write it, then compare with ``expect``.

    The report is written (atomically) before the comparison so that a
    mismatch can be inspected; a mismatch is returned, not raised.

    Args:
        input_bytes: the exact input bytes (refused over ``max_input_bytes``).
        where: names the input in messages.
        expect: an expected report to compare with, or None.
        output: where to write the report, or None.

    Raises:
        GroupedRatesError: if the input, or the expected report, is invalid or
            over a cap.
        OSError: if a file cannot be read or written.
    """
    if len(input_bytes) > MAX_INPUT_BYTES:
        raise GroupedRatesError(
            f"{where}: larger than the cap max_input_bytes = {MAX_INPUT_BYTES} bytes"
        )
    report = build_report(input_bytes, where=where)
    data = render(report)
    if output is not None:
        atomic_write_bytes(output, data)
    difference = None
    if expect is not None:
        raw = read_capped(expect, MAX_REPORT_BYTES, "max_report_bytes", "expected report")
        expected = parse_json(raw, where=str(expect), max_values=MAX_REPORT_VALUES)
        difference = first_difference(expected, parse_json(data, where="recomputed report"))
    return Outcome(report, data, expect is not None, difference)


def check_file(
    input_path: str | Path,
    *,
    expect: str | Path | None = None,
    output: str | Path | None = None,
) -> Outcome:
    """Read ``input_path`` within ``max_input_bytes`` and :func:`evaluate` it."""
    data = read_capped(input_path, MAX_INPUT_BYTES, "max_input_bytes", "grouped-rates input")
    return evaluate(data, where=str(input_path), expect=expect, output=output)


def write_contract(path: str | Path) -> None:
    """Write ``contract.json`` (the rendered contract document) to ``path``."""
    atomic_write_bytes(path, render(contract_document()))


def summary(outcome: Outcome) -> str:
    """Return a one-line summary of a computed report."""
    report = outcome.report
    estimates = report["estimates"]

    def contrast(name: str) -> str:
        value = estimates[name]["contrast"]
        return "null" if value is None else value["exact"]

    line = (
        f"{report['task_clusters']} task clusters; episode-weighted contrast "
        f"{contrast('episode_weighted')}; equal-task contrast {contrast('equal_task')}; "
        f"{report['resampling']['mode']} resampling, {report['resampling']['rows']} draws"
    )
    if outcome.compared and outcome.difference is None:
        line += "; matches --expect"
    return line


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="check_grouped_rates.py",
        description="Recompute a task-grouped rates report (standard library only).",
    )
    parser.add_argument("--input", required=True, help="grouped-rates input JSON")
    parser.add_argument("--expect", help="expected report: exit 1 naming the first difference")
    parser.add_argument("--output", help="write the recomputed report here (default: stdout)")
    parser.add_argument("--contract", help="also write the calculation contract here")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the reader on ``argv``; return the exit status (see the module doc)."""
    args = _parser().parse_args(argv)
    try:
        if args.contract:
            write_contract(args.contract)
        outcome = check_file(args.input, expect=args.expect, output=args.output)
    except EmberError as exc:
        print("error: " + " ".join(str(exc).split()), file=sys.stderr)
        return 1
    except OSError as exc:
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        print(f"error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 1
    if args.output is None:
        sys.stdout.write(outcome.data.decode("ascii"))
    if outcome.mismatch_message is not None:
        print(f"error: {outcome.mismatch_message}", file=sys.stderr)
        return 1
    print(summary(outcome), file=sys.stderr if args.output is None else sys.stdout)
    return 0
