"""``emberbench policies``: the policies ``--policy`` can name, with a one-line description each."""

from __future__ import annotations

import typer

from ._common import user_errors


def register(app: typer.Typer) -> None:
    """Add ``policies`` to ``app``."""
    app.command("policies")(policies)


@user_errors
def policies() -> None:
    """List the built-in policies and the installed ones (entry points), with what each does."""
    from ..policies.catalog import ENTRY_POINT_GROUP, available_policies

    found = available_policies()
    width = max(len(p.name) for p in found)
    typer.echo("built-in:")
    for info in found:
        if info.origin == "built-in":
            typer.echo(f"  {info.name:<{width}}  {info.description}")
    plugins = [info for info in found if info.origin != "built-in"]
    typer.echo(f"installed ({ENTRY_POINT_GROUP} entry points):")
    if not plugins:
        typer.echo("  none")
    for info in plugins:
        mark = "" if info.usable else "  [unusable]"
        typer.echo(f"  {info.name:<{width}}  {info.description}{mark}")
        typer.echo(f"  {'':<{width}}  ({info.origin})")
    typer.echo("other policy specs:")
    typer.echo("  module:factory  a Python factory on the import path")
    typer.echo("  cmd:COMMAND     an external agent speaking the line protocol (docs/model-interface.md)")
    typer.echo("  openai:MODEL    a model behind an OpenAI-compatible server (docs/served-models.md)")
