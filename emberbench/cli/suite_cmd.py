"""``emberbench suite list`` and ``emberbench suite show ID``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ._common import user_errors

SuiteOption = Annotated[
    Optional[Path],
    typer.Option("--suite", help="Suite folder (or its suite.json); default: the public suite."),
]


def register(app: typer.Typer) -> None:
    """Add the ``suite`` command group to ``app``."""
    suite_app = typer.Typer(help="List and inspect scenario suites.", no_args_is_help=True)
    suite_app.command("list")(suite_list)
    suite_app.command("show")(suite_show)
    app.add_typer(suite_app, name="suite")


@user_errors
def suite_list(suite: SuiteOption = None) -> None:
    """List the suite's scenarios: id, families and content hash."""
    from ..suite import load_suite

    s = load_suite(suite)
    typer.echo(f"{s.id} {s.version}  suite hash {s.hash}")
    for sc in s.scenarios:
        fams = ",".join(s.families_of(sc.id)) or "-"
        typer.echo(f"{sc.id}  families={fams}  hash={sc.content_hash}")


@user_errors
def suite_show(
    scenario_id: Annotated[str, typer.Argument(help="Scenario id, e.g. v1-pub-01-single-exit-sparse.")],
    suite: SuiteOption = None,
) -> None:
    """Show one scenario: its map (people P, exits E, fire *) and parameters."""
    from ..suite import load_suite

    s = load_suite(suite)
    sc = s.scenario(scenario_id)
    rows = [list(r) for r in sc.map]
    for e in sc.exits:
        rows[e.row][e.col] = "E"
    for r, c in sc.fire:
        rows[r][c] = "*"
    for p in sc.people:
        rows[p.row][p.col] = "P"
    typer.echo(f"{sc.id}: {sc.description}")
    typer.echo(f"  size {sc.height}x{sc.width}, people {sc.population}, max_steps {sc.max_steps}, "
               f"spread {sc.spread_numerator}/{sc.spread_denominator}"
               f"{' (deterministic)' if sc.deterministic_fire else ''}, dev seed {sc.seed}")
    typer.echo(f"  exits: {', '.join(f'{e.id}@({e.row},{e.col})' for e in sc.exits)}")
    typer.echo(f"  families: {', '.join(s.families_of(sc.id)) or '-'}")
    typer.echo(f"  content hash {sc.content_hash}")
    for row in rows:
        typer.echo("  " + "".join(row))
