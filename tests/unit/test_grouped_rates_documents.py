"""Rendering, strict parsing and comparison of the reader's JSON documents, and exact numbers."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from emberbench.errors import GroupedRatesError
from emberbench.grouped_rates import first_difference, render
from emberbench.grouped_rates.exact import decimal_of, exact_value, parse_rational, rational_text


def test_render_is_deterministic_and_keeps_short_rows_on_one_line() -> None:
    """Keys come out sorted whatever the insertion order; a draw row stays on one line."""
    a = render({"b": 1, "a": {"rows": [[[0, 1], 1, "1/2", None]]}})
    b = render({"a": {"rows": [[[0, 1], 1, "1/2", None]]}, "b": 1})
    assert a == b
    assert b'    [[0,1],1,"1/2",null]\n' in a
    assert json.loads(a) == {"a": {"rows": [[[0, 1], 1, "1/2", None]]}, "b": 1}


def test_render_refuses_values_json_cannot_hold() -> None:
    """NaN and non-JSON types are refused instead of written."""
    with pytest.raises(GroupedRatesError):
        render({"x": float("nan")})
    with pytest.raises(GroupedRatesError):
        render({"x": {1, 2}})


@pytest.mark.parametrize(
    ("expected", "actual", "where"),
    [
        ({"a": 1}, {"a": 1}, None),
        ({"a": 1, "b": 2}, {"a": 1, "b": 3}, "report.b: expected 2, got 3"),
        ({"a": 1}, {"a": 1.0}, "report.a: expected 1, got 1.0"),
        ({"a": True}, {"a": 1}, "report.a: expected true, got 1"),
        ({"a": [1, 2]}, {"a": [1]}, "report.a: expected 2 items, got 1"),
        ({"a": [1, [2, 3]]}, {"a": [1, [2, 4]]}, "report.a[1][1]: expected 3, got 4"),
        ({"a": 1}, {}, "report.a: missing from the recomputed report"),
        ({}, {"z": 1}, "report.z: not in the expected report"),
        ({"b": 1, "a": 1}, {"b": 2, "a": 2}, "report.a: expected 1, got 2"),
    ],
)
def test_first_difference_names_the_first_place_in_sorted_walk_order(expected, actual, where) -> None:
    """Differences are found in sorted key order and index order, with types compared strictly."""
    assert first_difference(expected, actual) == where


def test_rationals_are_lowest_terms_with_a_rounded_convenience_decimal() -> None:
    """12/18 is written 2/3 with decimal 0.666667; parsing refuses non-canonical text."""
    assert rational_text(Fraction(12, 18)) == "2/3"
    assert rational_text(Fraction(-4, 8)) == "-1/2"
    assert rational_text(Fraction(0)) == "0/1"
    assert exact_value(Fraction(12, 18)) == {"exact": "2/3", "decimal": 0.666667}
    assert exact_value(None) is None
    assert decimal_of(Fraction(1, 8000000)) == 0.0
    assert decimal_of(Fraction(5, 10**7)) == 0.0  # half-even: 0.0000005 rounds to 0.000000
    assert parse_rational("-11/40") == Fraction(-11, 40)
    for bad in ("4/18", "1/0", "01/2", "1.5", "1/-2", 3):
        with pytest.raises(GroupedRatesError):
            parse_rational(bad)  # type: ignore[arg-type]
