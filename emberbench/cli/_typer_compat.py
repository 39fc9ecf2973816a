"""Corrections to typer's help output, applied once when the CLI is built.

* typer 0.29 prints a value type such as ``<bool>`` next to every flag in its
  rich help, although a flag takes no value (``--no-resume``, not
  ``--no-resume true``; the parser rightly refuses the second form). Its plain
  help leaves the type out for flags; :func:`hide_flag_value_types` makes the
  rich help do the same, for every flag of every command.
* Value types are written as Python annotations (``<str>``, ``<path>``,
  ``<list[str]>``); :func:`types_as_words` writes them as words instead
  (``TEXT``, ``PATH``, ``DIR``, ``TEXT...``, ``[local|ray]``), and leaves them
  out after an argument, whose name already says what it is; arguments are
  named in capitals, as click does (``RESULT``, ``[RESULT]``, ``RESULTS...``).
* typer's rich help draws options in a table whose description column gets
  about 25 of 80 columns; :func:`plain_help` switches every command of an
  app to click's plain layout, which gives descriptions about 48 columns and
  keeps every line within 80 (help never grows wider than 80 columns).
"""

from __future__ import annotations

from typing import Any

_MARK = "_emberbench_flags_without_type"


def hide_flag_value_types() -> None:
    """Make typer's rich help show no value type for flags (options that take no value)."""
    from typer.core import TyperOption

    original = TyperOption.display_type_rich
    if getattr(original, _MARK, False):
        return

    def display_type_rich(self: Any, ctx: Any) -> str | None:
        if getattr(self, "is_flag", False) or getattr(self, "count", False):
            return None
        return original(self, ctx)

    setattr(display_type_rich, _MARK, True)
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_WORDS = {"str": "TEXT", "int": "INTEGER", "float": "NUMBER", "bool": "", "path": "PATH", "file": "FILE",
          "dir": "DIR", "Path": "PATH"}
_WORDS_MARK = "_emberbench_types_as_words"


def types_as_words() -> None:
    """Make typer show value types as words (``TEXT``, ``PATH``, ``[local|ray]``) and none after arguments."""
    from typer.core import TyperArgument, _TyperParameter

    original = _TyperParameter.display_type
    if getattr(original, _WORDS_MARK, False):
        return

    def display_type(self: Any, ctx: Any) -> str:
        shown = original(self, ctx)
        inner = shown[1:-1] if shown.startswith("<") and shown.endswith(">") else shown
        many = inner.startswith("list[") and inner.endswith("]")
        if many:
            inner = inner[5:-1]
        if "|" in inner:
            word = f"[{inner}]"
        else:
            word = _WORDS.get(inner, inner.upper())
        return f"{word}..." if many and word else word

    def no_type_after_an_argument(self: Any, ctx: Any) -> str | None:
        return None

    def argument_name(self: Any) -> str:
        return self.metavar if self.metavar is not None else (self.name or "").upper()

    def usage_name(self: Any) -> str:  # click's convention: RESULT, [RESULT], RESULT...
        name = argument_name(self)
        name = name if self.required else f"[{name}]"
        return f"{name}..." if self.nargs != 1 else name

    setattr(display_type, _WORDS_MARK, True)
    _TyperParameter.display_type = display_type  # type: ignore[method-assign]
    TyperArgument.display_type_rich = no_type_after_an_argument  # type: ignore[method-assign]
    TyperArgument.display_name_raw = property(argument_name)  # type: ignore[assignment, method-assign]
    TyperArgument._usage_display_name = usage_name  # type: ignore[method-assign]


def plain_help(app: Any) -> None:
    """Give ``app`` and every typer app added to it click's plain help layout (at most 80 columns wide)."""
    app.rich_markup_mode = None
    for group in getattr(app, "registered_groups", ()):
        if group.typer_instance is not None:
            plain_help(group.typer_instance)
