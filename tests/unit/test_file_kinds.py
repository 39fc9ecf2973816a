"""Telling what kind of EMBERBench file a document is, by its version key, from its top level only (issue 27)."""

from __future__ import annotations

import io
import json

import pytest

from emberbench.schemas import detect_format
from emberbench.schemas.kinds import kind_of, not_what_was_wanted, skeleton
from tests.conftest import ROOT

GOLDEN = sorted((ROOT / "tests" / "golden").glob("*-1.0.json"))


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.name)
def test_every_golden_file_is_told_from_its_text_bytes_and_handle_as_from_its_parsed_object(path) -> None:  # noqa: ANN001
    """The top-level scan finds the same format the schemas' detection finds in the whole parsed document."""
    data = path.read_bytes()
    expected = detect_format(json.loads(data)).format
    assert kind_of(data) == kind_of(data.decode()) == kind_of(io.BytesIO(data)) == expected


@pytest.mark.parametrize(("document", "top"), [
    ('{"a": [1, {"b": 2}], "header": {"record_version": "1.0", "x": [1, {"y": 2}], "z": "a\\"b"}, "q": "s"}',
     {"a": [], "header": {"record_version": "1.0", "z": 'a"b'}, "q": "s"}),
    ('[1, 2]', {}),
    ('', {}),
    ('{"a": 1, "b": [', {"a": 1, "b": []}),
    ('{"a": ' + "[" * 100_000, {"a": []}),
    ('{"a": {"b": ' + "[" * 100_000 + "]" * 100_000 + '}, "c": 1}', {"a": {}}),  # too deep to decode: stop
])
def test_the_scan_keeps_the_first_two_levels_and_survives_damage(document: str, top: dict) -> None:
    """Scalars of the first two levels are kept, deeper values dropped; cut, deep or non-object text gives what
    was met before the damage (never an exception)."""
    assert skeleton(document) == top


def test_long_lists_cost_no_step_per_item_and_the_handle_is_left_where_it_was() -> None:
    """A list of a million numbers is skipped in one step, so the version key after it is still found; a
    handle's position is restored."""
    handle = io.BytesIO(b'{"a": [' + b"0," * 1_000_000 + b'0], "manifest_version": "1.0"}')
    handle.seek(5)
    assert kind_of(handle) == "manifest" and handle.tell() == 5


def test_the_message_names_both_kinds_and_only_for_another_kind() -> None:
    """Another format gets one line naming what it is and what was wanted; the wanted kind, an unknown document
    and a statistics artifact where 'statistics' was wanted get None."""
    manifest = (ROOT / "tests" / "golden" / "manifest-1.0.json").read_bytes()
    assert not_what_was_wanted("dev.json", manifest, "result").startswith(
        "dev.json is an evaluation manifest, not a result artifact")
    assert not_what_was_wanted("dev.json", manifest, "manifest") is None
    assert not_what_was_wanted("x.json", b'{"version": 1}', "result") is None
    stats = (ROOT / "tests" / "golden" / "statistics-paired-1.0.json").read_bytes()
    assert not_what_was_wanted("s.json", stats, "statistics") is None
    assert not_what_was_wanted("s.json", stats, ("record", "result")) == (
        "s.json is a paired statistics artifact (compare), not a run record or a result artifact")
