"""One correction to typer's help output, applied once when the CLI is built.

typer 0.29 prints a value type such as ``<bool>`` next to every flag in its
rich help, although a flag takes no value (``--no-resume``, not
``--no-resume true``; the parser rightly refuses the second form). Its plain
help leaves the type out for flags; this makes the rich help do the same, for
every flag of every command. Where typer already leaves flags without a type,
the correction changes nothing.
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
