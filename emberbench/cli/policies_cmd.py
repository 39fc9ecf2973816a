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
            _item(info.name, info.description, width)
    plugins = [info for info in found if info.origin != "built-in"]
    typer.echo(f"installed ({ENTRY_POINT_GROUP} entry points):")
    if not plugins:
        typer.echo("  none")
    for info in plugins:
        mark = "" if info.usable else "  [unusable]"
        _item(info.name, f"{info.description}{mark}", width)
        _item("", f"({info.origin})", width)
    typer.echo("other policy specs:")
    for spec, what in (("module:factory", "a Python factory on the import path"),
                       ("./FILE.py:factory", "a Python factory in a file, loaded by its path"),
                       ("cmd:COMMAND", "an external agent (line protocol: docs/model-interface.md)"),
                       ("openai:MODEL", "a model behind an OpenAI-compatible server (docs/served-models.md)")):
        _item(spec, what, 17)


LINE_WIDTH = 80


def _item(name: str, text: str, width: int) -> None:
    """``  NAME  text``, the text wrapped under itself so that no line passes 80 columns."""
    import textwrap

    indent = " " * (width + 4)
    lines = textwrap.wrap(text, LINE_WIDTH, initial_indent=f"  {name:<{width}}  ", subsequent_indent=indent,
                          break_long_words=False, break_on_hyphens=False)
    for line in lines or [f"  {name}"]:
        typer.echo(line)
