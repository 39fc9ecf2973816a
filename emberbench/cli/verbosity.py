"""How much the command line says on stderr: ``-q``, the default, ``-v`` and ``-vv``.

The root command sets the level once per invocation (:func:`configure`);
commands ask :func:`show_progress` and :func:`show_tracebacks`. The level
also sets the ``emberbench`` logger's threshold, so library modules can log
at INFO or DEBUG without printing anything by default.

========  =====================================================================
level     effect
========  =====================================================================
quiet     no progress bars; only errors (one line each) on stderr
normal    progress bars on a terminal; warnings
verbose   also INFO messages; a failure prints its traceback after its line
debug     also DEBUG messages
========  =====================================================================

``EMBERBENCH_DEBUG`` set to anything but empty or ``0`` (read here, in the CLI
layer) means at least ``verbose`` tracebacks, whatever the flags say.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from enum import IntEnum

DEBUG_ENV_VAR = "EMBERBENCH_DEBUG"
LOGGER = "emberbench"


class Verbosity(IntEnum):
    """The verbosity levels, ordered."""

    QUIET = -1
    NORMAL = 0
    VERBOSE = 1
    DEBUG = 2


_LOG_LEVELS = {
    Verbosity.QUIET: logging.ERROR,
    Verbosity.NORMAL: logging.WARNING,
    Verbosity.VERBOSE: logging.INFO,
    Verbosity.DEBUG: logging.DEBUG,
}
_state = {"level": Verbosity.NORMAL}
_HANDLER_NAME = "emberbench-cli"


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is at the time of each message (tests swap it)."""

    @property  # type: ignore[override]
    def stream(self):  # noqa: ANN201
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:  # noqa: ANN001
        pass


def level_of(verbose: int, quiet: bool) -> Verbosity:
    """The level asked for by ``-v`` (repeatable) and ``-q``.

    Raises:
        ValueError: both were given.
    """
    if quiet and verbose:
        raise ValueError("-q and -v contradict each other; give one of them")
    if quiet:
        return Verbosity.QUIET
    return Verbosity(min(verbose, Verbosity.DEBUG))


def debug_env(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``EMBERBENCH_DEBUG`` asks for tracebacks."""
    value = (os.environ if environ is None else environ).get(DEBUG_ENV_VAR, "")
    return value not in ("", "0")


def configure(level: Verbosity) -> None:
    """Set the level for this invocation and the ``emberbench`` logger's threshold and stderr handler."""
    _state["level"] = level
    logger = logging.getLogger(LOGGER)
    logger.setLevel(_LOG_LEVELS[level])
    if not any(h.get_name() == _HANDLER_NAME for h in logger.handlers):
        handler = _StderrHandler()
        handler.set_name(_HANDLER_NAME)
        handler.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
        logger.addHandler(handler)


def current() -> Verbosity:
    """The level of this invocation."""
    return _state["level"]


def show_progress() -> bool:
    """Whether progress bars may be drawn (never with ``-q``)."""
    return current() > Verbosity.QUIET


def show_tracebacks() -> bool:
    """Whether a failure prints its traceback (``-v`` or ``EMBERBENCH_DEBUG``)."""
    return current() >= Verbosity.VERBOSE or debug_env()
