"""The ``emberbench`` console script (and ``python -m emberbench``): signal handling first, then the CLI.

Importing the CLI takes a while (typer, rich and every command module; a
second or more on a loaded machine). A signal in that time used to find the
interpreter's defaults: SIGTERM ended the process without a word, SIGINT
printed a traceback out of an import. So the handlers of
:mod:`emberbench.cli.stop_signals` are installed before anything else is
imported.
"""

from __future__ import annotations


def main() -> None:
    """Install the start-up signal handlers, then run the command line (:func:`emberbench.cli.main.main`)."""
    from .stop_signals import install_early

    install_early()
    from .main import main as run

    run()
