"""Reading, rendering and comparing the reader's JSON documents.

Files are read under the input policy (regular files only, a byte cap
checked before reading), parsed strictly (no duplicate keys, no NaN, finite
numbers, bounded nesting), and rendered deterministically: keys sorted, ASCII
only, two-space indentation, with short arrays (no objects inside, nesting at
most two deep, such as one draw row) kept on one line so large reports stay
readable and diffable. :func:`first_difference` names the first place, in a
fixed walk order, where two parsed documents differ.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..io.canonical import parse_json_strict
from ..errors import CanonicalFormError, GroupedRatesError
from ..io.input_policy import InputKind, read_input


def read_capped(path: str | Path, cap: int, cap_name: str, what: str = "grouped-rates document") -> bytes:
    """Return the bytes of ``path`` under the input policy, refusing a file longer than ``cap`` bytes.

    Raises:
        GroupedRatesError: the file is missing, unreadable or not a regular
            file, or is over the cap (the message names ``cap_name``).
    """
    return read_input(path, InputKind(what, cap, cap_name=cap_name), error=GroupedRatesError)


def parse_json(data: bytes, *, where: str, max_values: int | None = None) -> Any:
    """Parse UTF-8 JSON strictly (the input policy's rules).

    Raises:
        GroupedRatesError: if ``data`` is not valid JSON, repeats a key,
            holds NaN, an infinity or a number out of range, nests too deep, or
            holds more than ``max_values`` values.
    """
    try:
        return parse_json_strict(data, where=where, max_values=max_values)
    except CanonicalFormError as exc:
        raise GroupedRatesError(str(exc)) from exc


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(item) for item in value), default=0)
    return 0


def _has_object(value: Any) -> bool:
    if isinstance(value, dict):
        return True
    return isinstance(value, list) and any(_has_object(item) for item in value)


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def _render(value: Any, indent: int, out: list[str]) -> None:
    pad = "  " * (indent + 1)
    if isinstance(value, dict) and value:
        out.append("{\n")
        for i, key in enumerate(sorted(value)):
            out.append(f"{pad}{_compact(key)}: ")
            _render(value[key], indent + 1, out)
            out.append(",\n" if i < len(value) - 1 else "\n")
        out.append("  " * indent + "}")
    elif isinstance(value, list) and value and (_has_object(value) or _depth(value) > 2):
        out.append("[\n")
        for i, item in enumerate(value):
            out.append(pad)
            _render(item, indent + 1, out)
            out.append(",\n" if i < len(value) - 1 else "\n")
        out.append("  " * indent + "]")
    else:
        out.append(_compact(value))


def render(value: Any) -> bytes:
    """Return the deterministic text form of ``value`` as ASCII bytes, ending in a newline.

    Raises:
        GroupedRatesError: if ``value`` holds something JSON cannot represent.
    """
    out: list[str] = []
    try:
        _render(value, 0, out)
    except (TypeError, ValueError) as exc:
        raise GroupedRatesError(f"value has no JSON form: {exc}") from exc
    out.append("\n")
    return "".join(out).encode("ascii")


def _show(value: Any) -> str:
    text = _compact(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return type(value).__name__


def first_difference(expected: Any, actual: Any, path: str = "report") -> str | None:
    """Return where ``actual`` first differs from ``expected``, or None if equal.

    Objects are walked in sorted key order and arrays in index order, so the
    first difference is the same on every run. ``1`` and ``1.0`` differ, as
    do ``true`` and ``1``.
    """
    if _kind(expected) != _kind(actual):
        return f"{path}: expected {_show(expected)}, got {_show(actual)}"
    if isinstance(expected, dict):
        for key in sorted(set(expected) | set(actual)):
            where = f"{path}.{key}"
            if key not in actual:
                return f"{where}: missing from the recomputed report"
            if key not in expected:
                return f"{where}: not in the expected report"
            found = first_difference(expected[key], actual[key], where)
            if found:
                return found
        return None
    if isinstance(expected, list):
        for i, (left, right) in enumerate(zip(expected, actual)):
            found = first_difference(left, right, f"{path}[{i}]")
            if found:
                return found
        if len(expected) != len(actual):
            return f"{path}: expected {len(expected)} items, got {len(actual)}"
        return None
    if expected != actual:
        return f"{path}: expected {_show(expected)}, got {_show(actual)}"
    return None
