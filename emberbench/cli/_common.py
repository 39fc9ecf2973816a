"""Helpers shared by CLI commands: error reporting and output."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import typer

from ..errors import EmberError

F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print ``message`` as one line on stderr and return the exit to raise."""
    line = " ".join(str(message).split())
    typer.echo(f"error: {line}", err=True)
    return typer.Exit(code)


def _is_store_error(exc: BaseException) -> bool:
    # Imported lazily: the core never imports the store package at module level.
    from emberbench.store.errors import StoreError

    return isinstance(exc, StoreError)


def user_errors(func: F) -> F:
    """Turn EmberError, StoreError (and OS errors on user paths) into one line and exit 1."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except EmberError as exc:
            _traceback_if_verbose(exc)
            raise fail(str(exc)) from None
        except OSError as exc:
            _traceback_if_verbose(exc)
            where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
            raise fail(f"{exc.strerror or exc}{where}") from None
        except KeyboardInterrupt:
            typer.echo("interrupted", err=True)
            raise typer.Exit(130) from None
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


def is_terminal() -> bool:
    """True when stderr is an interactive terminal (progress bars go there)."""
    return sys.stderr.isatty()
