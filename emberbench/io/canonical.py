"""Canonical JSON and its SHA-256 digest: the identity of every EMBERBench object.

Canonical JSON here means: keys sorted, no insignificant whitespace, ASCII
only (non-ASCII escaped), and no NaN or infinity. Floats are allowed by the
encoder but only appear where a specification asks for them (metric values
and statistics at the output boundary); every other number is an integer.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..errors import CanonicalFormError
from .input_policy import parse_json

_ENCODER = json.JSONEncoder(
    sort_keys=True,
    separators=(",", ":"),
    ensure_ascii=True,
    allow_nan=False,
)

HEX_DIGITS = frozenset("0123456789abcdef")


def canonical_json(value: Any) -> str:
    """Return the canonical JSON text of ``value``.

    Raises:
        CanonicalFormError: if ``value`` holds NaN, an infinity, or a type
            JSON cannot represent.
    """
    try:
        return _ENCODER.encode(value)
    except (TypeError, ValueError) as exc:
        raise CanonicalFormError(f"value has no canonical JSON form: {exc}") from exc


def canonical_bytes(value: Any) -> bytes:
    """Return the canonical JSON of ``value`` as ASCII bytes."""
    return canonical_json(value).encode("ascii")


def sha256_hex(data: bytes) -> str:
    """Return the lowercase hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def digest(value: Any) -> str:
    """Return the SHA-256 (lowercase hex) of the canonical JSON of ``value``."""
    return sha256_hex(canonical_bytes(value))


def is_sha256_hex(text: object) -> bool:
    """True when ``text`` is a 64-character lowercase hex string."""
    return isinstance(text, str) and len(text) == 64 and HEX_DIGITS.issuperset(text)


def parse_json_strict(text: str | bytes, *, where: str, max_values: int | None = None) -> Any:
    """Parse JSON under the input policy's strict rules (:func:`emberbench.io.input_policy.parse_json`).

    Strict UTF-8, no NaN/Infinity, no duplicate object keys, finite numbers,
    integers within 2**64 - 1 in magnitude, nesting at most 64 levels (checked
    before the parser runs, so no input makes it recurse without bound) and,
    when given, at most ``max_values`` values.

    Args:
        text: the JSON text.
        where: names the source (a path or a label) for error messages.
        max_values: the most values the document may hold, or None.

    Raises:
        CanonicalFormError: naming ``where``.
    """
    return parse_json(text, where=where, max_values=max_values)
