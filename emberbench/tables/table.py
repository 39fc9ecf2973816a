"""A table of typed columns: shown in Jupyter (``_repr_html_``) and in a terminal (rich), handed to pandas or Arrow.

:class:`Table` holds rows of plain Python values (text, integers, floats,
None) under named, typed columns. Its views never change a value: HTML and
the terminal show numbers shortened for reading (six significant digits),
while :meth:`Table.to_pandas`, :meth:`Table.to_arrow` and
:meth:`Table.to_records` hand over the exact values. pandas and pyarrow are
imported only when asked for (the ``tables`` extra:
``pip install 'emberbench[tables]'``).

:class:`TableView` is the mixin the library's result, statistics and
catalog objects use: a class that can make its :class:`Table`
(``to_table()``) gets ``to_pandas()``, ``to_arrow()`` and the notebook and
terminal views for free.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

KINDS = ("text", "int", "uint64", "float")
"""Column kinds: text; integers that fit 64 signed bits; integers in [0, 2**64 - 1] (seeds); floats."""
SHOWN_ROWS = 50
"""Most rows the notebook and terminal views show (the rest are counted, never dropped from the data)."""


@dataclass(frozen=True, slots=True)
class Column:
    """One column: its name and the kind of its values (any value may also be None)."""

    name: str
    kind: str = "text"

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"column {self.name!r}: kind must be one of {', '.join(KINDS)}, not {self.kind!r}")


def columns(*specs: str | tuple[str, str]) -> tuple[Column, ...]:
    """Columns from names (text) or ``(name, kind)`` pairs."""
    return tuple(Column(s) if isinstance(s, str) else Column(*s) for s in specs)


@dataclass(frozen=True, slots=True)
class Table:
    """Rows of values under typed columns, with a title and a note shown above and below.

    Attributes:
        columns: the columns, in order.
        rows: one tuple per row, one value per column.
        title: a line above the table (what it is).
        note: a line below it (how to read it), or empty.
    """

    columns: tuple[Column, ...]
    rows: tuple[tuple[Any, ...], ...]
    title: str = ""
    note: str = field(default="")

    def __post_init__(self) -> None:
        width = len(self.columns)
        for k, row in enumerate(self.rows):
            if len(row) != width:
                raise ValueError(f"row {k} has {len(row)} values for {width} columns")

    @property
    def names(self) -> tuple[str, ...]:
        """The column names."""
        return tuple(c.name for c in self.columns)

    def __len__(self) -> int:
        return len(self.rows)

    def select(self, *names: str) -> Table:
        """The same table with only the columns ``names``, in that order."""
        index = {c.name: k for k, c in enumerate(self.columns)}
        picked = [index[name] for name in names]
        return Table(tuple(self.columns[k] for k in picked), tuple(tuple(row[k] for k in picked) for row in self.rows),
                     title=self.title, note=self.note)

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per row, keyed by column name (exact values)."""
        names = self.names
        return [dict(zip(names, row)) for row in self.rows]

    def to_arrow(self) -> Any:
        """A ``pyarrow.Table`` with one typed column per column (seeds as uint64; None as null).

        Raises:
            ImportError: pyarrow is not installed (``pip install 'emberbench[tables]'``).
        """
        pa = _pyarrow()
        return pa.table({c.name: pa.array([row[k] for row in self.rows], type=arrow_type(pa, c.kind))
                         for k, c in enumerate(self.columns)})

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` of the exact values (nullable dtypes where a column may hold None).

        Raises:
            ImportError: pandas or pyarrow is not installed (``pip install 'emberbench[tables]'``).
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("to_pandas() needs pandas: pip install 'emberbench[tables]'") from None
        return self.to_arrow().to_pandas(types_mapper=pd.ArrowDtype)

    # -- views

    def _repr_html_(self) -> str:
        """The table as HTML, for Jupyter (at most :data:`SHOWN_ROWS` rows; the rest are counted)."""
        out = ['<div class="emberbench-table">']
        if self.title:
            out.append(f"<p><strong>{html.escape(self.title)}</strong></p>")
        out.append('<table><thead><tr>')
        for c in self.columns:
            align = "right" if c.kind != "text" else "left"
            out.append(f'<th style="text-align:{align}">{html.escape(c.name)}</th>')
        out.append("</tr></thead><tbody>")
        for row in self.rows[:SHOWN_ROWS]:
            out.append("<tr>")
            for c, value in zip(self.columns, row):
                align = "right" if c.kind != "text" else "left"
                exact = "" if value is None or c.kind == "text" else f' title="{html.escape(repr(value))}"'
                out.append(f'<td style="text-align:{align}"{exact}>{html.escape(shown(value))}</td>')
            out.append("</tr>")
        out.append("</tbody></table>")
        notes = [line for line in (self._more(), self.note) if line]
        out.extend(f"<p><small>{html.escape(line)}</small></p>" for line in notes)
        out.append("</div>")
        return "".join(out)

    def __rich__(self) -> Any:
        """The table for a rich console (``rich.print(table)``), at most :data:`SHOWN_ROWS` rows."""
        from rich import box
        from rich.table import Table as RichTable

        caption = "  ".join(line for line in (self._more(), self.note) if line) or None
        view = RichTable(title=self.title or None, caption=caption, title_justify="left", caption_justify="left",
                         box=box.SIMPLE_HEAD)
        for c in self.columns:  # a narrow terminal shortens cells with an ellipsis rather than folding them
            view.add_column(c.name, justify="left" if c.kind == "text" else "right", no_wrap=True, overflow="ellipsis")
        for row in self.rows[:SHOWN_ROWS]:
            view.add_row(*(shown(v) for v in row))
        return view

    def __str__(self) -> str:
        """The table as plain text, as a terminal of 100 columns would show it."""
        from rich.console import Console

        console = Console(width=100, record=True, file=_Discard(), color_system=None)
        console.print(self)
        return "\n".join(line.rstrip() for line in console.export_text().rstrip().splitlines()) + "\n"

    def _more(self) -> str:
        hidden = len(self.rows) - SHOWN_ROWS
        return f"… {hidden} more rows (to_pandas() has them all)" if hidden > 0 else ""


class _Discard:
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def shown(value: Any) -> str:
    """A value as the views show it: floats to six significant digits, None empty."""
    if value is None:
        return ""
    if isinstance(value, float):
        return format(value, ".6g") if math.isfinite(value) else str(value)
    return str(value)


def arrow_type(pa: Any, kind: str) -> Any:
    """The Arrow type of a column kind."""
    return {"text": pa.string(), "int": pa.int64(), "uint64": pa.uint64(), "float": pa.float64()}[kind]


def _pyarrow() -> Any:
    try:
        import pyarrow as pa
    except ImportError:
        raise ImportError("to_arrow(), to_pandas() and Parquet need pyarrow: pip install 'emberbench[tables]'") from None
    return pa


class TableView:
    """Mixin: an object that can make its :class:`Table` (``to_table()``) is shown and exported through it."""

    __slots__ = ()

    def to_table(self) -> Table:  # pragma: no cover - provided by each class
        raise NotImplementedError

    def to_pandas(self) -> Any:
        """:meth:`to_table` as a ``pandas.DataFrame`` (needs ``emberbench[tables]``)."""
        return self.to_table().to_pandas()

    def to_arrow(self) -> Any:
        """:meth:`to_table` as a ``pyarrow.Table`` (needs ``emberbench[tables]``)."""
        return self.to_table().to_arrow()

    def _repr_html_(self) -> str:
        return self.to_table()._repr_html_()

    def __rich__(self) -> Any:
        return self.to_table().__rich__()


def table_of(cols: Sequence[Column], rows: Iterable[Sequence[Any]], *, title: str = "", note: str = "") -> Table:
    """A :class:`Table` of ``rows`` (each made a tuple)."""
    return Table(tuple(cols), tuple(tuple(r) for r in rows), title=title, note=note)


__all__ = ["KINDS", "SHOWN_ROWS", "Column", "Table", "TableView", "arrow_type", "columns", "shown", "table_of"]
