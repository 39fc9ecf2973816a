"""``emberbench completion SHELL``: the shell script that completes emberbench commands and options.

The script calls ``emberbench`` back with ``_EMBERBENCH_COMPLETE`` set; typer
answers such calls before any command runs. Registering this module also
registers typer's completion classes, which answer those calls (the app is
built without typer's own ``--install-completion`` option, which would edit
shell start-up files).
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

PROG = "emberbench"
COMPLETE_VAR = "_EMBERBENCH_COMPLETE"


class Shell(str, Enum):
    """Shells typer can complete for."""

    BASH = "bash"
    ZSH = "zsh"
    FISH = "fish"
    POWERSHELL = "powershell"


def register(app: typer.Typer) -> None:
    """Add ``completion`` to ``app`` and make completion requests answerable."""
    from typer.completion import completion_init

    completion_init()
    app.command("completion")(completion)


def completion(
    shell: Annotated[Shell, typer.Argument(help="bash, zsh, fish or powershell.", case_sensitive=False)],
) -> None:
    """Print the completion script for SHELL (see docs/user-guide.md for where to put it)."""
    from typer.completion import get_completion_script

    typer.echo(get_completion_script(prog_name=PROG, complete_var=COMPLETE_VAR, shell=shell.value))
