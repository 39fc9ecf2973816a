"""The input policy: regular files only, caps per kind, strict JSON that cannot recurse or explode."""

from __future__ import annotations

import json
import os
import stat
import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from emberbench.io.canonical import parse_json_strict
from emberbench.errors import CanonicalFormError, InputFileError, ManifestError
from emberbench.io.input_policy import (
    MAX_JSON_INT,
    InputKind,
    check_json_depth,
    check_json_shape,
    leading_value_count,
    load_json,
    parse_json,
    read_input,
)

KIND = InputKind("JSON document", 100)


def _char_device(path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # a private "zero" device: endless if read


@pytest.mark.parametrize("make, what", [
    (lambda p: os.mkfifo(p), "a FIFO"),
    (lambda p: p.mkdir(), "a folder"),
    (_char_device, "a character device"),
])
def test_reader_refuses_special_files_without_blocking(tmp_path: Path, make, what: str) -> None:  # noqa: ANN001
    """Issue 12 (defect 2): a FIFO, folder or device is refused at once, naming the file and what it is."""
    target = tmp_path / "in.json"
    make(target)
    with pytest.raises(InputFileError, match=f"in.json: JSON document must be a regular file, not {what}"):
        read_input(target, KIND)


def test_a_link_to_a_regular_file_is_read_and_a_link_to_a_fifo_is_not(tmp_path: Path) -> None:
    """Inputs follow links, but what they reach must be a regular file."""
    (tmp_path / "real.json").write_bytes(b"{}")
    (tmp_path / "link.json").symlink_to(tmp_path / "real.json")
    assert read_input(tmp_path / "link.json", KIND) == b"{}"
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "to-fifo.json").symlink_to(tmp_path / "fifo")
    with pytest.raises(InputFileError, match="must be a regular file, not a FIFO"):
        read_input(tmp_path / "to-fifo.json", KIND)


def test_reader_refuses_a_file_over_its_cap_and_names_a_contract_cap(tmp_path: Path) -> None:
    """A file larger than its kind's cap is refused before it is read; a named cap is cited by name."""
    target = tmp_path / "big.json"
    target.write_bytes(b"x" * 101)
    with pytest.raises(InputFileError, match="101 bytes exceeds the cap of 100 bytes"):
        read_input(target, KIND)
    with pytest.raises(InputFileError, match="exceeds the cap max_thing = 100 bytes"):
        read_input(target, InputKind("thing", 100, cap_name="max_thing"))
    target.write_bytes(b"x" * 100)
    assert read_input(target, KIND) == b"x" * 100


def test_missing_file_is_one_error_of_the_callers_class(tmp_path: Path) -> None:
    """Errors come as the caller's class, naming the file and the reason."""
    with pytest.raises(ManifestError, match="nope.json: cannot read JSON document: No such file or directory"):
        load_json(tmp_path / "nope.json", KIND, error=ManifestError)


def test_load_json_refuses_a_document_that_is_not_an_object_before_parsing(tmp_path: Path) -> None:
    """Every format is a JSON object: a list or string at the top is refused on its first byte."""
    target = tmp_path / "list.json"
    target.write_bytes(b"  [1, 2, 3]")
    with pytest.raises(InputFileError, match="list.json: JSON document must be a JSON object"):
        load_json(target, KIND)
    target.write_bytes(b' {"a": [1]}')
    assert load_json(target, KIND) == {"a": [1]}


STRICT = [
    (b'{"a": 1, "a": 2}', "duplicate key 'a'"),
    (b'{"a": NaN}', "JSON constant NaN is not allowed"),
    (b'{"a": Infinity}', "JSON constant Infinity is not allowed"),
    (b'{"a": -Infinity}', "JSON constant -Infinity is not allowed"),
    (b'{"a": 1e400}', "number 1e400 is out of range"),
    (b'{"a": -1.5E+309}', "number -1.5E+309 is out of range"),
    (b'{"a": 1' + b"0" * 400 + b".5}", "is out of range"),
    (b'{"a": 18446744073709551616}', "integer 18446744073709551616 is out of range"),
    (b'{"a": -18446744073709551616}', "integer -18446744073709551616 is out of range"),
    (b'{"a": 1' + b"0" * 5000 + b"}", "integer 100000000000...000000 (5001 characters) is out of range"),
    (b'["3e123", 99999999999999999999]', "integer 99999999999999999999 is out of range"),
    (b'{"a": "\xff"}', "not valid UTF-8 (byte 7"),
    (b'{"a": "\xed\xa0\x80"}', "not valid UTF-8"),
    (b'\xef\xbb\xbf{"a": 1}', "starts with a byte-order mark"),
    (b'\xff\xfe{\x00}\x00', "not valid UTF-8"),
    (b'{"a": "\\ud800"}', "lone surrogate"),
    (b'{"a": "\\udc00x"}', "lone surrogate"),
    (b'{"a": "x\\ud800\\u0041"}', "lone surrogate"),
    (b"[" * 100_000 + b"]" * 100_000, "nests deeper than 64 levels"),
    (b'{"a":' + b"[" * 100_000, "nests deeper than 64 levels"),
    (b"{", "not valid JSON"),
]


@pytest.mark.parametrize(("data", "message"), STRICT, ids=[m for _, m in STRICT])
def test_strict_json_refuses_with_one_message_naming_the_source(data: bytes, message: str) -> None:
    """Issue 12 (defects 3, 4): duplicate keys, NaN/Infinity, numbers out of range, bad UTF-8, lone surrogates
    and nesting bombs (balanced or not) are each one CanonicalFormError that names the source, never a crash."""
    with pytest.raises(CanonicalFormError) as caught:
        parse_json(data, where="in.json")
    assert str(caught.value).startswith("in.json: ") and message in str(caught.value)


@pytest.mark.parametrize(("text", "value"), [
    ('{"a": 18446744073709551615}', {"a": MAX_JSON_INT}),
    ('{"a": -18446744073709551615}', {"a": -MAX_JSON_INT}),
    ('{"a": 1.7976931348623157e308, "b": 1e-400}', {"a": 1.7976931348623157e308, "b": 0.0}),
    ('{"a": "\\ud83d\\ude00", "b": "\\\\ud800"}', {"a": "\U0001F600", "b": "\\ud800"}),
    ('{"h": "3e123412341234123412341234"}', {"h": "3e123412341234123412341234"}),
    ('{"t": "x, 12345678901234567890123"}', {"t": "x, 12345678901234567890123"}),
])
def test_strict_json_accepts_the_edges_of_the_rules(text: str, value: object) -> None:
    """The largest integers and doubles, a surrogate pair, an escaped backslash before u, and digits in
    strings (hex digests, free text) are all accepted."""
    assert parse_json(text, where="t") == value
    assert parse_json(text.encode(), where="t") == value


@pytest.mark.parametrize(("text", "ok"), [
    ("[" * 64 + "]" * 64, True),
    ("[" * 65 + "]" * 65, False),
    ('{"a":' * 65 + "1" + "}" * 65, False),
    ('["' + "[" * 200 + '"]', True),  # brackets inside a string do not nest
    ('["\\\\",' + "[" * 70 + "]" * 70 + "]", False),  # an escaped backslash ends no string
    ('["\\"' + "[" * 70 + '"]', True),  # an escaped quote does not end the string
    ("[{}" * 40 + "]" * 40, True),
    ("[" * 60 + "{" * 10, False),  # unclosed openers nest too (the parser would descend into them)
    ("[" * 40, True),
])
def test_nesting_cap(text: str, ok: bool) -> None:
    """The depth check counts real nesting only, exactly at the cap of 64, unclosed openers included."""
    if ok:
        check_json_depth(text, where="t")
    else:
        with pytest.raises(CanonicalFormError, match="nests deeper than 64 levels"):
            check_json_depth(text, where="t")


@pytest.mark.parametrize(("text", "values"), [
    ("[]", 2), ("{}", 2), ("1", 1), ("[1,2,3]", 4), ("[{},{},{}]", 7), ('{"a":1,"b":[]}', 6),
    ('{"a":[{"b":"x,y:z"}]}', 6), ('["a,b", "c:d"]', 3),
])
def test_value_count_is_an_upper_bound_from_separators(text: str, values: int) -> None:
    """Values are counted as commas, colons and opening brackets outside strings, plus one; one over the cap
    is refused before parsing."""
    check_json_shape(text, where="t", max_values=values)
    with pytest.raises(CanonicalFormError, match=f"JSON holds {values} values, more than the cap of {values - 1}"):
        check_json_shape(text, where="t", max_values=values - 1)


@given(st.recursive(st.integers() | st.text(string.printable, max_size=5), lambda c: st.lists(c, max_size=4)
                    | st.dictionaries(st.text(string.printable, max_size=3), c, max_size=4), max_leaves=30))
def test_value_count_never_undercounts(value: object) -> None:
    """The count is never below the real number of values plus object keys (so the memory bound holds), and
    never above twice that."""
    def real(v: object) -> int:
        if isinstance(v, list):
            return 1 + sum(real(x) for x in v)
        if isinstance(v, dict):
            return 1 + len(v) + sum(real(x) for x in v.values())
        return 1

    text, count = json.dumps(value), real(value)
    check_json_shape(text, where="t", max_values=2 * count)  # at most twice: an empty container counts two
    if count > 1:
        with pytest.raises(CanonicalFormError, match="values, more than the cap"):
            check_json_shape(text, where="t", max_values=count - 1)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-MAX_JSON_INT, MAX_JSON_INT)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(string.printable + "é😀[]{},:\"\\", max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=20,
)


@given(JSON_VALUES, st.booleans())
def test_strict_parse_agrees_with_the_standard_parser_on_valid_documents(value: object, ascii_only: bool) -> None:
    """On any valid document (in range, no duplicates, shallow) the strict parser returns what json.loads does:
    its fast paths never change a result."""
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert parse_json(text, where="t") == json.loads(text)
    assert parse_json(text.encode("utf-8"), where="t") == json.loads(text)


@given(st.lists(JSON_VALUES, min_size=1, max_size=3), st.integers(0, 10_000), st.sampled_from([1, 3, 4096]))
def test_leading_value_count_counts_the_first_value_only(values: list, cut: int, chunk: int) -> None:
    """Issue 22 (defect 3): the values of the array or object a text starts with are counted as
    check_json_shape counts a document's, whatever follows it; on a text cut anywhere inside it, the count
    is at most the whole value's and it is not closed. (Any chunk size gives the same answer.)"""
    import emberbench.io.input_policy as input_policy

    first = json.dumps([values[0]]) if not isinstance(values[0], list | dict) else json.dumps(values[0])
    rest = "," + ",".join(json.dumps(v) for v in values[1:]) + "]"
    # The exact count, strings removed (the standard parser's own scan finds each string's end).
    outside, k = [], 0
    while k < len(first):
        if first[k] == '"':
            k = json.decoder.scanstring(first, k + 1, True)[1]
            continue
        outside.append(first[k])
        k += 1
    skeleton = "".join(outside)
    expected = 1 + sum(map(skeleton.count, "[{,:"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(input_policy, "_CHUNK", chunk)
        assert leading_value_count((first + rest).encode()) == (expected, True)
        part = first[:cut % len(first)]
        if part:
            count, closed = leading_value_count(part.encode())
            assert not closed and count <= expected
