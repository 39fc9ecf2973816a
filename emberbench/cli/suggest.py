"""Usage errors that say what would have worked: the choices of an option, and the closest command or value.

Click refuses an unknown command with ``No such command 'stat'.`` and typer a
value outside a choice with ``Value error, 'scenarios' is not one of
'overall', ...``. :func:`usage_message` rewrites both (the root group prints
every usage error through it): the valid choices listed plainly, and the
closest one named::

    Invalid value for '--groups': 'scenarios' is not one of overall, scenario, family, all; did you mean 'scenario'?
    No such command 'stat'; did you mean 'stats'? (commands: suite, policies, episode, ...)
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Any

_NOT_ONE_OF = re.compile(r"(?:Value error, )?'(?P<value>(?:[^'\\]|\\.)*)' is not one of (?P<choices>'.*')\.?$", re.S)
_NO_SUCH_COMMAND = re.compile(r"^No such command '(?P<name>[^']*)'\.$")


def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate most like ``word`` (difflib's ratio at least 0.6), or None."""
    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return found[0] if found else None


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """``; did you mean 'X'?`` for the closest candidate, or nothing."""
    best = closest(word, candidates)
    return "" if best is None else f"; did you mean {best!r}?"


def usage_message(exc: Any) -> str:
    """The message of click usage error ``exc``, with the choices listed and the closest one suggested."""
    message = exc.format_message()
    choice = _NOT_ONE_OF.search(message)
    if choice is not None:
        choices = re.findall(r"'((?:[^'\\]|\\.)*)'", choice.group("choices"))
        value = choice.group("value")
        return (message[:choice.start()] + f"{value!r} is not one of {', '.join(choices)}"
                + did_you_mean(value, choices))
    command = _NO_SUCH_COMMAND.match(message)
    ctx = getattr(exc, "ctx", None)
    if command is not None and ctx is not None and hasattr(ctx.command, "list_commands"):
        names = [n for n in ctx.command.list_commands(ctx) if not getattr(ctx.command.get_command(ctx, n), "hidden", False)]
        return (f"No such command {command.group('name')!r}{did_you_mean(command.group('name'), names)} "
                f"(commands: {', '.join(names)})")
    return message


__all__ = ["closest", "did_you_mean", "usage_message"]
