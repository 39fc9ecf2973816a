"""Entry point of the ``emberbench`` command: the root options, the commands, and how the process ends.

The root callback takes ``--version`` and the verbosity flags ``-v``/``-q``
(:mod:`emberbench.cli.verbosity`). Each command module exposes
``register(app)``; the console script registers only the module of the
command named on its command line (:func:`command_module`), so that a
command imports what it uses and not what the others do (numpy, the viewer),
while ``app``, the root with every command, is built on first use (help,
completion, tests). A command parses its options, calls one library function
and prints; every :class:`EmberError` becomes one line on stderr and exit
status 1 (see :mod:`emberbench.cli._common`). The root group
(:class:`EmberGroup`) turns everything else that can end a run into one line
too: a usage error (exit 2), SIGINT (130), SIGTERM (143), a closed stdout
(141, silently).

The console script is :func:`emberbench.cli.entry.main`, which installs the
start-up signal handlers before this module's imports; run as a program
(``python -m emberbench.cli.main``, the entrypoint of submitted Ray Jobs),
this module does the same first.
"""

from __future__ import annotations

if __name__ == "__main__":  # before the slow imports below (docs/evaluation.md, "Exit statuses")
    from .stop_signals import install_early

    install_early()

import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import typer
from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError  # typer vendors click
from typer.core import TyperGroup

from ..errors import EmberError
from . import verbosity
from ._common import fail, quiet_exit_on_broken_pipe, stdout_is_broken
from ._typer_compat import hide_flag_value_types, plain_help, types_as_words
from .completion_cmd import COMPLETE_VAR
from .stop_signals import EXIT_INTERRUPTED, EXIT_TERMINATED, Terminated, exit_status, signals_raise


class EmberGroup(TyperGroup):
    """The root command group: runs a command and maps every way it ends to one exit status and one line."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,  # type: ignore[override]
             complete_var: str | None = None, standalone_mode: bool = True, **extra: Any) -> Any:
        """Run the command line; exit (or, with ``standalone_mode=False``, return) its status."""
        code = run_to_exit_status(lambda: super(EmberGroup, self).main(
            args, prog_name, complete_var, standalone_mode=False, **extra))
        if not standalone_mode:
            return code
        sys.exit(code)


def run_to_exit_status(call: Callable[[], Any]) -> int:
    """Run ``call`` (a non-standalone click main) with SIGINT and SIGTERM raising; return the exit status.

    A stop signal decides the status (130 or 143, and the one line
    ``interrupted`` or ``terminated``, printed here and nowhere else) however
    its exception travelled: raised through the command, turned by typer
    into a silent exit 130, or swallowed on the way (see
    :mod:`.stop_signals`) while the command went on to succeed. A command
    that failed with its own one-line error keeps that error and status.
    """
    try:
        with signals_raise() as latch:
            code = _status_of(call)
    except Terminated:  # a second signal while the first was being mapped
        code = EXIT_TERMINATED
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    if latch.signum is not None and code in (0, EXIT_INTERRUPTED, EXIT_TERMINATED):
        code = exit_status(latch.signum)
    if code in (EXIT_INTERRUPTED, EXIT_TERMINATED):
        typer.echo("interrupted" if code == EXIT_INTERRUPTED else "terminated", err=True)
    return code


def _status_of(call: Callable[[], Any]) -> int:
    """Run ``call``; map every way it ends to an exit status (printing the one line of an error)."""
    try:
        result = call()
    except NoArgsIsHelpError as exc:
        exc.show()
        return exc.exit_code
    except UsageError as exc:
        from .suggest import usage_message

        where = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
        return _line(f"{usage_message(exc)}{where}", exc.exit_code)
    except ClickException as exc:
        return _line(exc.format_message(), exc.exit_code)
    except EmberError as exc:  # raised outside a command body (an option's parser or callback)
        return _line(str(exc), 1)
    except Terminated:
        return EXIT_TERMINATED
    except (KeyboardInterrupt, typer.Abort):
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        if not stdout_is_broken():
            raise
        return quiet_exit_on_broken_pipe().exit_code
    return result if isinstance(result, int) and not isinstance(result, bool) else 0


def _line(message: str, code: int) -> int:
    return fail(message, code).exit_code


# Command modules, in the order their commands appear in --help, each with the top-level commands it
# registers (tests/unit/test_cli_startup.py checks this table against what each module registers).
_COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "emberbench.cli.suite_cmd": ("suite",),
    "emberbench.cli.policies_cmd": ("policies",),
    "emberbench.cli.episode_cmd": ("episode", "replay"),
    "emberbench.cli.eval_cmd": ("manifest", "run", "verify", "pair"),
    "emberbench.cli.stats_cmd": ("stats", "compare"),
    "emberbench.cli.view_cmd": ("view",),
    "emberbench.cli.report_cmd": ("report",),
    "emberbench.cli.plot_cmd": ("plot",),
    "emberbench.cli.export_cmd": ("export",),
    "emberbench.cli.grouped_rates_cmd": ("grouped-rates",),
    "emberbench.cli.store_cmd": ("store",),
    "emberbench.cli.runs_cmd": ("runs",),
    "emberbench.cli.keys_cmd": ("keys",),
    "emberbench.cli.cluster_cmd": ("submit",),
    "emberbench.cli.completion_cmd": ("completion",),
}
_MODULE_OF = {command: module for module, commands in _COMMAND_MODULES.items() for command in commands}
_ROOT_FLAGS = frozenset({"-v", "--verbose", "-q", "--quiet"})
"""Root options that take no value: they may stand before the command's name."""


def _print_version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"emberbench {__version__}")
        raise typer.Exit()


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


def build_app(modules: Sequence[str] | None = None) -> typer.Typer:
    """The root app with the commands of ``modules`` (keys of :data:`_COMMAND_MODULES`; None: every one)."""
    built = typer.Typer(
        name="emberbench",
        help="EMBERBench: evaluate evacuation policies on a deterministic fire simulator.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        cls=EmberGroup,
    )
    built.callback()(_root)
    hide_flag_value_types()
    types_as_words()
    for name in _COMMAND_MODULES if modules is None else modules:
        importlib.import_module(name).register(built)
    plain_help(built)  # every command's help within 80 columns, descriptions about 48 wide
    return built


def command_module(args: Sequence[str]) -> str | None:
    """The one command module that ``args`` (a command line, without the program) needs, or None for all.

    The command's name is the first word after the root's flags. Every
    command module is needed when there is none (the root's help), when
    something else stands before it (``--help``, ``--version``, an unknown
    option: the root answers), when the name is no command (the error
    suggests the nearest of them all), and when the shell asks for
    completions (they cover every command).
    """
    if os.environ.get(COMPLETE_VAR):
        return None
    for arg in args:
        if not _is_root_flag(arg):
            return None if arg.startswith("-") else _MODULE_OF.get(arg)
    return None


def _is_root_flag(arg: str) -> bool:
    """``-v``, ``--verbose``, ``-q``, ``--quiet``, or short ones run together (``-vv``)."""
    return arg in _ROOT_FLAGS or (len(arg) > 1 and arg[0] == "-" and arg[1] != "-" and set(arg[1:]) <= {"v", "q"})


_APP: typer.Typer | None = None


def __getattr__(name: str) -> Any:
    """``app``: the root app with every command (built on first use; the console script builds less)."""
    global _APP
    if name == "app":
        if _APP is None:
            _APP = build_app()
        return _APP
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Run the CLI (console-script entry point), with only the command module the command line names.

    Importing every command module costs more than most commands do (the
    plot and view modules alone pull in numpy and the viewer); a command
    needs its own module only, and gets the same parser, help and errors
    from it.
    """
    module = command_module(sys.argv[1:])
    try:
        (build_app([module]) if module is not None else __getattr__("app"))()
    finally:
        _quick_exit()


def _quick_exit() -> None:
    """Leave what the process still holds to the end of the process, not to the garbage collector.

    The interpreter's shutdown runs full collections while it clears the
    modules, each walking every object still alive (the command's data, the
    modules of typer and botocore): about 0.3 s of `runs ls` on a loaded
    machine, after its output was complete. Frozen (:func:`gc.freeze`), they
    are skipped; everything else shutdown does (``atexit`` handlers, flushing
    the standard streams, closing files) is unchanged, and the command's own
    work is over: its files are written and closed, its locks released.
    """
    import gc

    gc.freeze()


if __name__ == "__main__":  # ``python -m emberbench.cli.main``: the entrypoint of submitted Ray Jobs
    main()
