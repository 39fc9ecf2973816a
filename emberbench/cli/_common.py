"""Helpers shared by CLI commands: error reporting, output, and how the process ends.

Every way a command can end is decided here and in :mod:`.main`, once:

* success: exit status 0;
* an :class:`EmberError`, a store error, or an OS error on a user's path:
  one line ``error: ...`` on stderr, exit status 1;
* a usage error (a bad option value, a missing argument): one line, exit 2;
* SIGINT (Ctrl-C): ``interrupted``, exit 130; SIGTERM: ``terminated``,
  exit 143 (128 + the signal number, as shells report it). Cleanup (``finally``
  blocks: stopping Ray and agent processes) runs in both cases; how a signal
  is handled from the process's first instant is :mod:`.stop_signals`;
* stdout closed by its reader (``emberbench suite list | head -1``): no
  message, exit 141 (as a Unix tool ended by SIGPIPE).
"""

from __future__ import annotations

import functools
import os
import select
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import typer

from ..errors import EmberError
from .stop_signals import EXIT_INTERRUPTED

F = TypeVar("F", bound=Callable[..., Any])

EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print ``message`` as one line on stderr and return the exit to raise."""
    line = " ".join(str(message).split())
    typer.echo(f"error: {line}", err=True)
    return typer.Exit(code)


def _is_store_error(exc: BaseException) -> bool:
    # Imported lazily: the core never imports the store package at module level.
    from emberbench.store.errors import StoreError

    return isinstance(exc, StoreError)


def stdout_is_broken() -> bool:
    """True when stdout is a pipe or socket whose reader has gone (a write would fail with EPIPE)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & select.POLLERR for _, events in poller.poll(0))


def quiet_exit_on_broken_pipe() -> typer.Exit:
    """Silence stdout for good (so the final flush cannot fail again) and return the exit to raise."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (AttributeError, OSError, ValueError):
        pass
    return typer.Exit(EXIT_BROKEN_PIPE)


def user_errors(func: F) -> F:
    """Turn EmberError, StoreError (and OS errors on user paths) into one line and exit 1."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except EmberError as exc:
            _traceback_if_verbose(exc)
            raise fail(str(exc)) from None
        except BrokenPipeError as exc:
            if stdout_is_broken():
                raise quiet_exit_on_broken_pipe() from None
            raise fail(f"{exc.strerror or exc}") from None
        except OSError as exc:
            _traceback_if_verbose(exc)
            where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
            raise fail(f"{exc.strerror or exc}{where}") from None
        except KeyboardInterrupt:  # the line `interrupted` is printed by the root (emberbench.cli.main)
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except Exception as exc:
            if _is_store_error(exc):
                raise fail(str(exc)) from None
            raise

    return wrapper  # type: ignore[return-value]


def _traceback_if_verbose(exc: BaseException) -> None:
    """With ``-v`` (or ``EMBERBENCH_DEBUG``), print the traceback before the one-line error."""
    from .verbosity import show_tracebacks

    if show_tracebacks():
        import traceback

        traceback.print_exception(exc, file=sys.stderr)


@contextmanager
def policy_exceptions_in_one_line(where: str) -> Iterator[None]:
    """Report an exception a policy raised (not an EmberError or OSError) as one EvaluationError line.

    A policy is user code; its bug is reported by name and message; ``-v``
    (or ``EMBERBENCH_DEBUG=1``) also prints the traceback.
    """
    try:
        yield
    except (EmberError, OSError):
        raise
    except Exception as exc:
        from ..errors import EvaluationError

        # Chained, so that -v shows the policy's own traceback as the cause.
        raise EvaluationError(f"{where}: the policy raised {type(exc).__name__}: {exc} "
                              "(-v or EMBERBENCH_DEBUG=1 shows the traceback)") from exc


def is_terminal() -> bool:
    """True when stderr is an interactive terminal (progress bars go there)."""
    return sys.stderr.isatty()


KNOWN_SUITES_FILE = Path(".emberbench") / "suites.json"
"""The known-suites list of the command line (:mod:`emberbench.sim.known_suites`), in the working folder."""


def remember_suite_folder(suite_id: str, suite_version: str, suite_hash: str,
                          given: str | os.PathLike[str] | None) -> None:
    """Remember the folder ``given`` (a ``--suite`` that named a folder) of a suite in the known-suites list."""
    if given is None:
        return
    from ..sim.known_suites import remember_suite

    if remember_suite(KNOWN_SUITES_FILE, suite_id, suite_version, suite_hash, given):
        import logging

        logging.getLogger("emberbench").info("suite %s %s remembered as folder %s (in %s)", suite_id, suite_version,
                                             os.fspath(given), KNOWN_SUITES_FILE)


def suite_named_by_manifest(option: str | os.PathLike[str] | None, suite_id: str | None, *, where: str,
                            suite_hash: str | None = None) -> Any:
    """The suite a command on a manifest's episodes uses: ``--suite`` when given, else the manifest's own.

    Without ``--suite``, a manifest that names a shipped suite (``suite_id``)
    gets that suite; one that names another suite gets the folder remembered
    for its hash in the known-suites list (:data:`KNOWN_SUITES_FILE`); no
    manifest (None) gets the public suite. The suite's version and hash are
    checked against the manifest later, by the reader, as with ``--suite``.

    Raises:
        SuiteError: the manifest names a suite that is neither shipped nor
            remembered and no ``--suite`` is given (``where`` names the file
            in the message); a remembered folder no longer holds it.
    """
    from ..sim.known_suites import suite_for

    return suite_for(suite_id, suite_hash, given=option, known=KNOWN_SUITES_FILE, where=where)


def suite_for_result(option: str | os.PathLike[str] | None, result: str | os.PathLike[str]) -> Any:
    """:func:`suite_named_by_manifest` for a result artifact: its manifest is read from its header (cheap).

    Raises:
        ResultError: the artifact's header is refused (before any replay).
        SuiteError: as :func:`suite_named_by_manifest`.
    """
    from ..api.suites import suite_of_result

    return suite_of_result(result, option, known=KNOWN_SUITES_FILE)


def manifest_and_suite(path: str | os.PathLike[str], option: str | os.PathLike[str] | None) -> tuple[Any, Any]:
    """Read the manifest file ``path``, find its suite (:func:`suite_named_by_manifest`), check one against the other.

    Raises:
        ManifestError: the manifest is refused, or does not match the suite
            (the message names the file).
        SuiteError: as :func:`suite_named_by_manifest`.
    """
    from ..errors import ManifestError
    from ..results.manifest import check_manifest, load_manifest

    manifest = load_manifest(path)
    suite = suite_named_by_manifest(option, manifest.suite_id, where=os.fspath(path), suite_hash=manifest.suite_hash)
    try:
        check_manifest(manifest, suite)
    except ManifestError as exc:
        raise ManifestError(f"{os.fspath(path)}: {exc}") from None
    return manifest, suite


def suite_for_input(option: str | os.PathLike[str] | None, path: str | os.PathLike[str]) -> Any:
    """The suite for a file that is a result artifact or a run record (``view``, ``replay``):
    :func:`emberbench.api.suites.suite_of_file` with the known-suites list of the working folder."""
    from ..api.suites import suite_of_file

    return suite_of_file(path, option, known=KNOWN_SUITES_FILE)
