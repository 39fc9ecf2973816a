"""``emberbench report``: a static report (HTML and Markdown) of several results."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..records.metric_defs import METRIC_NAMES

from ._common import user_errors
from .args import parse_embed, parse_resamples
from .suite_cmd import SuiteOption


MetricChoice = enum.Enum("MetricChoice", {name: name for name in METRIC_NAMES}, type=str)  # type: ignore[misc]
"""The metrics of metrics version 1.0, as the choices of ``--order-by`` and ``plot --metric``."""


def register(app: typer.Typer) -> None:
    """Add ``report`` to ``app``."""
    app.command("report")(report)


@user_errors
def report(
    results: Annotated[list[Path], typer.Argument(help="Result artifacts of one manifest.")],
    baseline: Annotated[Optional[str], typer.Option("--baseline", help="Model id every other result is compared with (default: the first).")] = None,
    out: Annotated[Path, typer.Option("--out", help="Report folder to write.")] = Path("report"),
    force: Annotated[bool, typer.Option("--force", help="Write into a folder that is not empty: replace the previous report in it (other files are kept).")] = False,
    stats: Annotated[Optional[list[Path]], typer.Option("--stats", help="A statistics artifact the report's recomputed one must equal byte for byte; it sets that artifact's resamples (repeatable).")] = None,
    resamples: Annotated[int, typer.Option("--resamples", parser=parse_resamples, metavar="N", help="Bootstrap resamples for the statistics computed here, in [100, 1000000].")] = 2000,
    order_by: Annotated[Optional[MetricChoice], typer.Option("--order-by", metavar="METRIC", help="Order the leaderboard by this metric, a name from docs/metrics.md (default: as given).")] = None,
    embed: Annotated[int, typer.Option("--embed", parser=parse_embed, metavar="N", help="Most episodes each viewer page embeds, in [1, 1000].")] = 48,
    suite: SuiteOption = None,
    store: Annotated[Optional[str], typer.Option("--store", metavar="STORE", help="A store (folder or s3:// URL) holding the runs that wrote the results: their run-infos add an execution-accounting section (requests, cache hits, tokens, time). Default: no store is read.")] = None,  # noqa: UP007
) -> None:
    """Write a static report: leaderboard, paired comparisons, egress curves, casualty heat maps, viewers."""
    from ..api.presentation import report as write_report
    from ._common import KNOWN_SUITES_FILE
    from .store_cmd import _open

    built = write_report(list(results), out, suite=suite, baseline=baseline, stats=list(stats or []),
                         resamples=resamples, order_by=None if order_by is None else order_by.value, force=force,
                         embed=embed, known=KNOWN_SUITES_FILE, store=None if store is None else _open(store))
    replaced = "; --force: the report files already there were replaced" if built.replaced else ""
    typer.echo(f"report written to {built.folder / 'index.html'} ({len(built.files)} files; "
               f"tables also in {built.folder / 'report.md'}){replaced}")
