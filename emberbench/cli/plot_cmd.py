"""``emberbench plot {forest,egress,heatmap}``: the report's figures as PNG, SVG or PDF files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ..viewer.plots import FigureKind
from ._common import user_errors
from .args import parse_output_file, parse_resamples
from .report_cmd import MetricChoice
from .suite_cmd import SuiteOption


def register(app: typer.Typer) -> None:
    """Add ``plot`` to ``app``."""
    app.command("plot")(plot)


@user_errors
def plot(
    kind: Annotated[FigureKind, typer.Argument(help="forest (paired deltas), egress (curves) or heatmap (casualties).")],
    results: Annotated[list[Path], typer.Argument(help="Result artifacts of one manifest.")],
    out: Annotated[Path, typer.Option("--out", parser=parse_output_file, metavar="FILE", help="Figure file: .png, .svg or .pdf.")],
    baseline: Annotated[Optional[str], typer.Option("--baseline", help="forest: model id the others are compared with (default: the first).")] = None,
    metric: Annotated[Optional[MetricChoice], typer.Option("--metric", metavar="METRIC", help="forest: one row per scenario/family for this metric instead of one row per metric.")] = None,
    scenario: Annotated[Optional[str], typer.Option("--scenario", help="egress, heatmap: the scenario to draw.")] = None,
    stats: Annotated[Optional[list[Path]], typer.Option("--stats", help="forest: a paired statistics artifact the recomputed one must equal byte for byte; it sets its resamples (repeatable).")] = None,
    resamples: Annotated[int, typer.Option("--resamples", parser=parse_resamples, metavar="N", help="forest: bootstrap resamples when computing, in [100, 1000000].")] = 2000,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing file.")] = False,
    suite: SuiteOption = None,
) -> None:
    """Draw one of the report's figures with matplotlib (needs the plots extra)."""
    from ..api.presentation import plot as draw
    from ._common import KNOWN_SUITES_FILE

    target = draw(kind, list(results), out, suite=suite, baseline=baseline,
                  metric=None if metric is None else metric.value, scenario=scenario, stats=list(stats or []),
                  resamples=resamples, force=force, known=KNOWN_SUITES_FILE)
    typer.echo(f"figure written to {target}")
