"""``emberbench stats RESULT`` and ``emberbench compare A B``: statistics artifacts and tables."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from ._common import suite_for_result, user_errors
from .args import ForceOption, parse_output_file, parse_resamples, refuse_existing
from .cluster_cmd import AddressOption, ParallelWorkersOption
from .suite_cmd import SuiteOption

Resamples = Annotated[int, typer.Option("--resamples", parser=parse_resamples, metavar="N",
                                       help="Bootstrap resamples, in [100, 1000000].")]


class GroupChoice(str, Enum):
    """Which groups get a table (the values of :class:`emberbench.statistics.table.Groups`)."""

    OVERALL = "overall"
    SCENARIO = "scenario"
    FAMILY = "family"
    ALL = "all"


Groups = Annotated[GroupChoice, typer.Option(
    "--groups", case_sensitive=False,
    help="Tables to print: overall, scenario (one per scenario), family (one per family) or all.")]


def register(app: typer.Typer) -> None:
    """Add ``stats`` and ``compare`` to ``app``."""
    app.command("stats")(stats)
    app.command("compare")(compare)


@user_errors
def stats(
    result: Annotated[Path, typer.Argument(help="A result artifact.")],
    resamples: Resamples = 2000,
    out: Annotated[Optional[Path], typer.Option("--out", parser=parse_output_file, metavar="FILE", help="Also write the statistics artifact (JSON) here.")] = None,
    force: ForceOption = False,
    groups: Groups = GroupChoice.OVERALL,
    workers: ParallelWorkersOption = None,
    address: AddressOption = None,
    suite: SuiteOption = None,
) -> None:
    """Per-metric aggregate statistics of one result (verified by replay as it is read)."""
    from ..statistics import aggregate_artifact
    from .cluster_cmd import replay_on_ray, resolve_address

    refuse_existing(out, force=force)
    s = suite_for_result(suite, result)
    if not replay_on_ray(workers, address):
        artifact = aggregate_artifact(result, s, resamples)
    else:
        from emberbench.cluster import aggregate_on_ray

        artifact = aggregate_on_ray(result, s, resamples, workers=workers, address=resolve_address(address))
    _save_and_show(artifact, out, groups, "statistics")


@user_errors
def compare(
    a: Annotated[Path, typer.Argument(help="Result artifact A.")],
    b: Annotated[Path, typer.Argument(help="Result artifact B (deltas are A - B).")],
    resamples: Resamples = 2000,
    out: Annotated[Optional[Path], typer.Option("--out", parser=parse_output_file, metavar="FILE", help="Also write the paired statistics artifact (JSON) here.")] = None,
    force: ForceOption = False,
    groups: Groups = GroupChoice.OVERALL,
    workers: ParallelWorkersOption = None,
    address: AddressOption = None,
    suite: SuiteOption = None,
) -> None:
    """Paired per-metric comparison of two results on identical episodes."""
    from ..statistics import paired_artifacts
    from .cluster_cmd import replay_on_ray, resolve_address

    refuse_existing(out, force=force)
    s = suite_for_result(suite, a)
    if not replay_on_ray(workers, address):
        artifact = paired_artifacts(a, b, s, resamples)
    else:
        from emberbench.cluster import paired_on_ray

        artifact = paired_on_ray(a, b, s, resamples, workers=workers, address=resolve_address(address))
    _save_and_show(artifact, out, groups, "paired statistics")


def _save_and_show(artifact: Any, target: Path | None, groups: GroupChoice, what: str) -> None:
    """Write a statistics artifact atomically (streamed, with ``--out``), print its tables and where it went.

    The digest gets a line of its own, indented, so that both lines fit 80
    columns (a SHA-256 in hex is 64 characters).
    """
    from ..statistics import render_artifact, write_artifact

    digest = write_artifact(artifact, target) if target is not None else None
    render_artifact(artifact.table_form(), groups=groups.value)
    if target is not None:
        typer.echo(f"{what} written to {target}")
        typer.echo(f"  sha256 {digest}")
