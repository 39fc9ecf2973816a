"""How SIGINT and SIGTERM end the ``emberbench`` process, from its first instant to its exit.

Standard library only, and nothing slow: the entry points import this module
before anything else (:func:`install_early`), so that no signal finds the
interpreter's defaults (SIGTERM killing the process without a word, SIGINT a
traceback out of an import).

Two phases:

* **Start-up and exit** (:func:`install_early`): while modules are being
  imported, nothing exists that would need cleaning up (no process started,
  no file half-written), and once the command has ended its cleanup is done.
  A signal then ends the process at once with one line (``interrupted`` or
  ``terminated``) and exit status 130 or 143; it raises nothing, so nothing
  can swallow it. (Exit handlers are skipped then; the one that matters, an
  S3 writer lease's release, is only a courtesy: a lease expires by itself.)
* **The command** (:func:`signals_raise`): a signal raises
  ``KeyboardInterrupt`` (SIGINT) or :class:`Terminated` (SIGTERM) in the main
  thread, so that ``finally`` blocks run (Ray is shut down, agents ended,
  locks released), and :mod:`emberbench.cli.main` turns it into the same line
  and status. A signal is also latched, because an exception raised by a
  handler can be lost: when the handler runs inside a finalizer or a weakref
  callback (garbage collection can run one at any allocation, an import
  included), Python reports the exception as "Exception ignored in ..." and
  goes on. Such an exception is caught in ``sys.unraisablehook`` and the
  signal delivered again to the main thread, where it then raises in
  ordinary code. If library code catches the exception and carries on, the
  command still ends with the signal's status once it returns.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_TERMINATED = 128 + signal.SIGTERM
_STOPS = (signal.SIGINT, signal.SIGTERM)
_LINE = {signal.SIGINT: b"interrupted\n", signal.SIGTERM: b"terminated\n"}


class Terminated(BaseException):  # noqa: N818 - a signal, like KeyboardInterrupt, not an error
    """SIGTERM arrived. Raised in the main thread so that ``finally`` blocks run, like KeyboardInterrupt."""


def exit_status(signum: int) -> int:
    """The exit status of a command ended by ``signum`` (128 + its number, as shells report it)."""
    return 128 + signum


def _exit_now(signum: int, frame: object) -> None:
    """The start-up and exit handler: one line on stderr, then end the process with the signal's status."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError, RuntimeError):
            pass
    try:
        os.write(2, _LINE[signum])
    except OSError:
        pass
    os._exit(exit_status(signum))


def install_early() -> None:
    """Make SIGINT and SIGTERM end the process at once with one line (first thing an entry point does).

    Does nothing outside the main thread, or for a signal whose disposition
    is to be ignored (``nohup``, a shell's background job): that choice is
    the parent's.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in _STOPS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _exit_now)


REDELIVERY_DELAY = 0.02
"""Seconds before a lost stop signal is sent again: time for the finalizer that lost it to finish."""


class Latch:
    """The first stop signal that arrived while :func:`signals_raise` was active (None: none arrived)."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.in_hook = False
        self._timers: list[threading.Timer] = []

    def deliver_again(self) -> None:
        """Send the latched signal to the main thread once more, shortly, from another thread.

        A real signal (``pthread_kill``), so that a main thread blocked in a
        system call is woken as by the first one; after a short delay, so that
        its handler runs once the finalizer that lost the first has returned.
        """
        assert self.signum is not None
        timer = threading.Timer(REDELIVERY_DELAY, signal.pthread_kill, (threading.main_thread().ident, self.signum))
        timer.daemon = True
        self._timers.append(timer)
        timer.start()

    def stop_delivering(self) -> None:
        """Cancel signals not yet sent again, and wait for any being sent (none arrives after this returns)."""
        while self._timers:
            timer = self._timers.pop()
            timer.cancel()
            timer.join()


_current = Latch()


def _raise_for(signum: int) -> None:
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated


def _raising_handler(signum: int, frame: object) -> None:
    if _current.signum is None:
        _current.signum = signum
    if _current.in_hook:  # an exception here would be lost again; the hook sends the signal once more
        return
    _raise_for(signum)


def _unraisable_hook(latch: Latch, previous: Any) -> Any:
    def hook(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, (Terminated, KeyboardInterrupt)) and latch.signum is not None:
            latch.in_hook = True
            try:
                latch.deliver_again()  # lost in a finalizer: raise it again where it can propagate
            finally:
                latch.in_hook = False
            return
        previous(unraisable)

    return hook


@contextmanager
def signals_raise() -> Iterator[Latch]:
    """While inside, SIGINT raises KeyboardInterrupt and SIGTERM :class:`Terminated` in the main thread.

    Yields the :class:`Latch` of the block: after it, ``latch.signum`` says
    whether a stop signal arrived, even if its exception was swallowed on the
    way and the block returned normally (the caller then ends with that
    signal's status all the same). On leaving, no signal is sent again any
    more, and the previous handlers and ``sys.unraisablehook`` are put back.
    Outside the main thread nothing changes (and no signal is ever latched).
    """
    global _current
    latch = Latch()
    if threading.current_thread() is not threading.main_thread():
        yield latch
        return
    previous = {signum: signal.getsignal(signum) for signum in _STOPS}
    previous_hook, previous_latch = sys.unraisablehook, _current
    _current = latch
    for signum in _STOPS:
        if previous[signum] is not signal.SIG_IGN:
            signal.signal(signum, _raising_handler)
    sys.unraisablehook = _unraisable_hook(latch, previous_hook)
    try:
        yield latch
    finally:
        try:
            latch.stop_delivering()  # a signal sent meanwhile raises here, with the handlers still ours
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
            sys.unraisablehook = previous_hook
            _current = previous_latch
