"""Numbers as the report, the plots and the Markdown print them.

One place decides how a mean and its interval read, so an interval that
does not exist says why (the statistics give none below
:data:`~emberbench.statistics.bootstrap.MIN_N` defined values) instead of
printing ``[-, -]``.
"""

from __future__ import annotations

from ..statistics.bootstrap import MIN_N
from .summary import Cell


def fmt(value: float | None, digits: int = 4) -> str:
    """A number for a label: 4 significant digits, ``-`` when undefined."""
    if value is None:
        return "-"
    if value == 0:
        return "0"
    return f"{value:.{digits}g}"


def signed(value: float | None) -> str:
    """:func:`fmt` with an explicit ``+`` on positive values (for deltas)."""
    text = fmt(value)
    return f"+{text}" if value is not None and value > 0 else text


def interval_text(cell: Cell, number=fmt) -> str:  # noqa: ANN001
    """``[lower, upper]``, or why there is none (``no interval: n 3 < 5``, ``undefined: n 0``)."""
    if cell.mean is None:
        return f"undefined: n {cell.n}"
    if cell.lower is None or cell.upper is None:
        return f"no interval: n {cell.n} < {MIN_N}"
    return f"[{number(cell.lower)}, {number(cell.upper)}]"


def cell_text(cell: Cell | None, number=fmt) -> str:  # noqa: ANN001
    """``mean [lower, upper]``; ``mean (no interval: n 3 < 5)``; ``-`` when undefined (or absent)."""
    if cell is None or cell.mean is None:
        return "-"
    if cell.lower is None:
        return f"{number(cell.mean)} ({interval_text(cell, number)})"
    return f"{number(cell.mean)} {interval_text(cell, number)}"
