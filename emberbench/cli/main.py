"""Entry point of the ``emberbench`` command: the root options, then the commands' registration.

The root callback takes ``--version`` and the verbosity flags ``-v``/``-q``
(:mod:`emberbench.cli.verbosity`). Each command module exposes
``register(app)``. A command parses its options, calls one library function
and prints; every :class:`EmberError` becomes one line on stderr and exit
status 1 (see :mod:`emberbench.cli._common`).
"""

from __future__ import annotations

import importlib

import typer

from . import verbosity
from ._typer_compat import hide_flag_value_types

app = typer.Typer(
    name="emberbench",
    help="EMBERBench: evaluate evacuation policies on a deterministic fire simulator.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Command modules, in the order their commands appear in --help.
_COMMAND_MODULES = (
    "emberbench.cli.suite_cmd",
    "emberbench.cli.policies_cmd",
    "emberbench.cli.episode_cmd",
    "emberbench.cli.eval_cmd",
    "emberbench.cli.stats_cmd",
    "emberbench.cli.view_cmd",
    "emberbench.cli.report_cmd",
    "emberbench.cli.plot_cmd",
    "emberbench.cli.grouped_rates_cmd",
    "emberbench.cli.store_cmd",
    "emberbench.cli.cluster_cmd",
    "emberbench.cli.completion_cmd",
)



def _print_version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"emberbench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", is_eager=True, callback=_print_version,
                                 help="Print the EMBERBench version and exit."),
    verbose: int = typer.Option(0, "--verbose", "-v", count=True,
                                help="Say more on stderr: INFO messages, and the traceback of a failure after its "
                                     "one-line error (-vv: DEBUG messages too). EMBERBENCH_DEBUG=1 also shows "
                                     "tracebacks."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Say less on stderr: no progress bars, only errors."),
) -> None:
    """EMBERBench: evaluate evacuation policies on a deterministic fire simulator."""
    try:
        level = verbosity.level_of(verbose, quiet)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="-q/-v") from None
    verbosity.configure(level)


hide_flag_value_types()
for _name in _COMMAND_MODULES:
    importlib.import_module(_name).register(app)


def main() -> None:
    """Run the CLI (console-script entry point)."""
    app()


if __name__ == "__main__":  # ``python -m emberbench.cli.main``: the entrypoint of submitted Ray Jobs
    main()
