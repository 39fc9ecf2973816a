"""Exact rationals in reports: the ``"p/q"`` text form and the convenience decimal.

A rational is always written in lowest terms with a positive denominator and
the sign on the numerator (``"-1/3"``, ``"0/1"``, ``"1/1"``), so equal values
have equal text. The decimal is the exact value rounded half-even to
``DECIMAL_PLACES`` places and then converted to the nearest binary float,
which Python prints identically on every IEEE-754 platform.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from ..errors import GroupedRatesError
from .contract import DECIMAL_PLACES

_RATIONAL = re.compile(r"-?(0|[1-9][0-9]*)/[1-9][0-9]*")


def rational_text(value: Fraction) -> str:
    """Return ``value`` as ``"p/q"`` in lowest terms (Fraction keeps it so)."""
    return f"{value.numerator}/{value.denominator}"


def parse_rational(text: str) -> Fraction:
    """Parse a ``"p/q"`` string written by :func:`rational_text`.

    Raises:
        GroupedRatesError: if ``text`` is not in that exact form (including
            a form that is not in lowest terms).
    """
    if not isinstance(text, str) or _RATIONAL.fullmatch(text) is None:
        raise GroupedRatesError(f"not an exact rational 'p/q': {text!r}")
    num, den = text.split("/")
    value = Fraction(int(num), int(den))
    if rational_text(value) != text:
        raise GroupedRatesError(f"rational {text!r} is not in lowest terms")
    return value


def decimal_of(value: Fraction) -> float:
    """Return the convenience decimal of ``value`` (rounded half-even)."""
    return float(round(value, DECIMAL_PLACES))


def exact_value(value: Fraction | None) -> dict[str, Any] | None:
    """Return ``{"exact": "p/q", "decimal": x}``, or None for a null value."""
    if value is None:
        return None
    return {"exact": rational_text(value), "decimal": decimal_of(value)}


def exact_cell(value: Fraction | None) -> str | None:
    """Return the compact draw-row form of a value: ``"p/q"`` or None."""
    return None if value is None else rational_text(value)


def ceil_fraction(value: Fraction) -> int:
    """Return the smallest integer not below ``value``."""
    return -((-value.numerator) // value.denominator)
