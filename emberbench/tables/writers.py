"""Writing rows to a file other tools read directly: CSV, JSON lines or Parquet, streamed and atomic.

Rows arrive as an iterable and are encoded as they come, so memory holds one
row (CSV, JSON lines) or one batch of :data:`BATCH_ROWS` rows (Parquet),
whatever the number of rows. The file is written through
:func:`emberbench.io.atomic.atomic_write_bytes`: it appears at its path only
once the last row has been encoded, and if the rows' source raises (an
artifact that fails verification half way), no file is left at all.

The encodings, chosen so that pandas, polars, DuckDB, Arrow and spreadsheets
read the files as they are:

* **csv**: UTF-8, a header row of the column names, RFC 4180 quoting (the
  standard library's ``csv`` module, ``\\r\\n`` line ends), None as an empty
  cell, floats in Python's shortest form that reads back to the same value;
* **jsonl**: one JSON object per line (keys in column order), None as null,
  integers exact (a seed may reach 2**64 - 1);
* **parquet**: one column per column of its kind (text as UTF-8 strings,
  integers as int64, seeds as uint64, floats as float64, None as null),
  written by pyarrow (the ``tables`` extra) with the table's ``title`` and
  format version in the file's metadata.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ..io.atomic import atomic_write_bytes
from .table import Column, arrow_type

FORMATS = ("csv", "jsonl", "parquet")
BATCH_ROWS = 4096
"""Rows encoded together in a Parquet row group (a bound on the rows held in memory)."""


def write_rows(path: str | os.PathLike[str], cols: Sequence[Column], rows: Iterable[Sequence[Any]], *,
               format: str, metadata: dict[str, str] | None = None) -> int:
    """Write ``rows`` under ``cols`` to ``path`` in ``format``, atomically; return the number of rows.

    Args:
        metadata: key-value pairs kept in a Parquet file's metadata (ignored
            by the text formats, which have no place for them).

    Raises:
        ValueError: an unknown format.
        ImportError: Parquet without pyarrow.
        OutputPathError, OSError: the path is refused or cannot be written
            (nothing is left behind); whatever ``rows`` raises propagates
            the same way.
    """
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    counted = _Counted(rows)
    encode = {"csv": _csv_chunks, "jsonl": _jsonl_chunks, "parquet": _parquet_chunks}[format]
    atomic_write_bytes(path, encode(cols, counted, metadata or {}))
    return counted.count


class _Counted:
    def __init__(self, rows: Iterable[Sequence[Any]]) -> None:
        self.rows, self.count = rows, 0

    def __iter__(self) -> Iterator[Sequence[Any]]:
        for row in self.rows:
            self.count += 1
            yield row


def _csv_chunks(cols: Sequence[Column], rows: Iterable[Sequence[Any]], metadata: dict[str, str]) -> Iterator[bytes]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def line(values: Sequence[Any]) -> bytes:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow(["" if v is None else repr(v) if isinstance(v, float) else v for v in values])
        return buffer.getvalue().encode("utf-8")

    yield line([c.name for c in cols])
    for row in rows:
        yield line(row)


def _jsonl_chunks(cols: Sequence[Column], rows: Iterable[Sequence[Any]], metadata: dict[str, str]) -> Iterator[bytes]:
    names = [c.name for c in cols]
    for row in rows:
        yield (json.dumps(dict(zip(names, row)), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
               + "\n").encode("utf-8")


class _Collector:
    """A write-only file for pyarrow: keeps what is written until :meth:`drain` hands it on."""

    closed = False

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.position = 0

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self.parts.append(chunk)
        self.position += len(chunk)
        return len(chunk)

    def tell(self) -> int:
        return self.position

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def readable(self) -> bool:
        return False

    def drain(self) -> bytes:
        out = b"".join(self.parts)
        self.parts.clear()
        return out


def _parquet_chunks(cols: Sequence[Column], rows: Iterable[Sequence[Any]],
                    metadata: dict[str, str]) -> Iterator[bytes]:
    from .table import _pyarrow

    pa = _pyarrow()
    import pyarrow.parquet as pq

    schema = pa.schema([pa.field(c.name, arrow_type(pa, c.kind)) for c in cols],
                       metadata={k.encode(): v.encode() for k, v in metadata.items()})
    sink = _Collector()
    writer = pq.ParquetWriter(pa.PythonFile(sink, mode="w"), schema)
    try:
        batch: list[Sequence[Any]] = []
        for row in rows:
            batch.append(row)
            if len(batch) == BATCH_ROWS:
                writer.write_batch(_batch(pa, schema, cols, batch))
                batch.clear()
                yield sink.drain()
        if batch:
            writer.write_batch(_batch(pa, schema, cols, batch))
    finally:
        writer.close()
    yield sink.drain()


def _batch(pa: Any, schema: Any, cols: Sequence[Column], rows: list[Sequence[Any]]) -> Any:
    return pa.record_batch([pa.array([row[k] for row in rows], type=arrow_type(pa, c.kind))
                            for k, c in enumerate(cols)], schema=schema)


__all__ = ["BATCH_ROWS", "FORMATS", "write_rows"]
