"""``emberbench export``: per-episode metrics of results as CSV, JSON lines or Parquet (and the table format options
``runs export --table`` shares)."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from ._common import user_errors
from .args import ForceOption, parse_output_file
from .suite_cmd import SuiteOption


class TableFormat(str, enum.Enum):
    """The file formats of a table export (:data:`emberbench.tables.writers.FORMATS`)."""

    csv = "csv"
    jsonl = "jsonl"
    parquet = "parquet"


FormatOption = Annotated[Optional[TableFormat], typer.Option(  # noqa: UP007
    "--format", case_sensitive=False,
    help="csv, jsonl (JSON lines) or parquet (needs the tables extra); default: by the --out suffix.")]


def table_format(chosen: TableFormat | None, out: Path) -> str:
    """``--format``, else the format the suffix of ``--out`` names.

    Raises:
        typer.BadParameter: neither says (a usage error naming --format).
    """
    if chosen is not None:
        return chosen.value
    suffix = out.suffix.lower().lstrip(".")
    if suffix in TableFormat.__members__:
        return suffix
    raise typer.BadParameter(f"give --format csv, jsonl or parquet (the suffix of {out} does not say)",
                             param_hint="--format")


def register(app: typer.Typer) -> None:
    """Add ``export`` to ``app``."""
    app.command("export")(export)


@user_errors
def export(
    results: Annotated[list[Path], typer.Argument(help="Result artifacts (any manifests; each row names its model).")],
    out: Annotated[Path, typer.Option("--out", parser=parse_output_file, metavar="FILE", help="Table file to write.")],
    format: FormatOption = None,
    force: ForceOption = False,
    suite: SuiteOption = None,
) -> None:
    """Write one row per episode of each result, with the manifest's scenario, seed and families and every count
    and metric (each result verified by replay as it streams; the file appears only if all pass)."""
    from ..api.exports import export_episodes
    from ._common import KNOWN_SUITES_FILE

    chosen = table_format(format, out)
    done = export_episodes(results, out, format=chosen, suite=suite, force=force, known=KNOWN_SUITES_FILE)
    typer.echo(f"{done.path}: {done.rows} episodes of {len(results)} result(s) ({done.format})")
