"""Fitting a text table into a given width without ever cutting a cell.

A :class:`TextTable` holds every cell as finished text, with a long and a
short form of each header and of each row label. :func:`layout` tries, in
order, until the table fits the width:

1. full row labels and long headers;
2. full row labels and short headers (a legend line explains them), with
   two spaces between columns, then with one;
3. short row labels and short headers (a legend line gives each label), two
   spaces, then one;
4. a stacked layout: one block per row, its label on one line and
   ``header value`` pairs flowed over the following lines.

Cells are never cut, shortened or replaced by an ellipsis. Title, caption and
legends are wrapped at spaces; only a single word longer than the width (a
long model id) can exceed it. Lines never end with spaces.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len

GAP = "  "
"""Between two columns (one space in the tightest layouts)."""

_ATTEMPTS = ((False, False, GAP), (False, True, GAP), (False, True, " "), (True, True, GAP), (True, True, " "))
"""(short labels, short headers, gap) of each grid layout, widest first."""


@dataclass(frozen=True, slots=True)
class Column:
    """One value column.

    Attributes:
        header: the header in the wide layouts, e.g. ``95% interval``.
        short: the header when space is short, e.g. ``95% CI``.
        legend: what the short header stands for, shown when it is used
            (empty when ``short`` needs no explanation).
        left: align the column's cells to the left (words), not the right
            (numbers).
    """

    header: str
    short: str
    legend: str = ""
    left: bool = False


@dataclass(frozen=True, slots=True)
class Row:
    """One row: its label (full and short) and one cell per value column."""

    label: str
    short_label: str
    cells: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TextTable:
    """A table whose cells are final text.

    Attributes:
        title: a line above the table.
        caption: a line below it.
        label_header: the header of the label column (``metric``).
        columns: the value columns.
        rows: the rows, in order.
    """

    title: str
    caption: str
    label_header: str
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row.cells) != len(self.columns):
                raise ValueError(f"row {row.label!r} has {len(row.cells)} cells for {len(self.columns)} columns")


@dataclass(frozen=True, slots=True)
class Line:
    """One output line and its role (``title``, ``header``, ``rule``, ``row``, ``caption`` or ``legend``)."""

    text: str
    role: str


def wrap_lines(text: str, width: int, role: str, indent: str = "") -> list[Line]:
    """``text`` wrapped at spaces into lines of at most ``width`` columns (a longer word stays whole)."""
    lines = textwrap.wrap(text, width=max(width, 1), subsequent_indent=indent, break_long_words=False,
                          break_on_hyphens=False)
    return [Line(line.rstrip(), role) for line in lines]


def flow(tokens: Sequence[str], width: int, role: str, *, sep: str = GAP, indent: str = "") -> list[Line]:
    """``tokens`` joined by ``sep`` into lines of at most ``width`` columns, never splitting a token."""
    lines: list[Line] = []
    current = ""
    for token in tokens:
        candidate = f"{current}{sep}{token}" if current else f"{indent}{token}"
        if current and cell_len(candidate.rstrip()) > width:
            lines.append(Line(current.rstrip(), role))
            candidate = f"{indent}{token}"
        current = candidate
    if current:
        lines.append(Line(current.rstrip(), role))
    return lines


def _grid(table: TextTable, short_labels: bool, short_headers: bool, gap: str = GAP) -> tuple[int, list[Line]]:
    """The table as aligned lines, and its width."""
    headers = [table.label_header] + [c.short if short_headers else c.header for c in table.columns]
    body = [[r.short_label if short_labels else r.label, *r.cells] for r in table.rows]
    widths = [max(cell_len(row[k]) for row in [headers, *body]) for k in range(len(headers))]

    left = [True] + [c.left for c in table.columns]

    def render(cells: Sequence[str]) -> str:
        parts = [c + " " * (w - cell_len(c)) if is_left else " " * (w - cell_len(c)) + c
                 for c, w, is_left in zip(cells, widths, left)]
        return gap.join(parts).rstrip()

    total = sum(widths) + len(gap) * (len(widths) - 1)
    lines = [Line(render(headers), "header"), Line("-" * total, "rule")]
    lines += [Line(render(cells), "row") for cells in body]
    return total, lines


def _legends(table: TextTable, width: int, short_labels: bool, short_headers: bool) -> list[Line]:
    out: list[Line] = []
    if short_headers:
        notes = [c.legend for c in table.columns if c.legend and c.short != c.header]
        out += flow([f"{n};" for n in notes[:-1]] + notes[-1:], width, "legend", sep=" ")
    if short_labels:
        pairs = [f"{r.short_label} = {r.label}" for r in table.rows if r.short_label != r.label]
        out += flow([f"{p}," for p in pairs[:-1]] + pairs[-1:], width, "legend", sep=" ")
    return out


def _stacked(table: TextTable, width: int) -> list[Line]:
    lines: list[Line] = []
    for row in table.rows:
        lines.append(Line(row.label, "header"))
        tokens = [f"{column.header} {cell}" for column, cell in zip(table.columns, row.cells)]
        lines += flow(tokens, width, "row", indent=GAP)
    return lines


def layout(table: TextTable, width: int) -> list[Line]:
    """Lay ``table`` out within ``width`` columns (see the module docstring for the order of attempts)."""
    for short_labels, short_headers, gap in _ATTEMPTS:
        total, grid = _grid(table, short_labels, short_headers, gap)
        if total <= width:
            return [*wrap_lines(table.title, width, "title"), *grid, *wrap_lines(table.caption, width, "caption"),
                    *_legends(table, width, short_labels, short_headers)]
    return [*wrap_lines(table.title, width, "title"), *_stacked(table, width), *wrap_lines(table.caption, width, "caption")]


def natural_width(table: TextTable) -> int:
    """The width of the widest layout (full labels, long headers)."""
    return _grid(table, False, False)[0]
