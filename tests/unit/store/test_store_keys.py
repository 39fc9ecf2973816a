"""Keys, ref names and journal names are validated before any path is built."""

from __future__ import annotations

import hashlib

import pytest

from emberbench.store import InvalidKeyError, InvalidNameError, journal_name, key_of, validate_journal_name, validate_key, validate_ref_name

GOOD_KEY = hashlib.sha256(b"x").hexdigest()


@pytest.mark.parametrize(
    "bad",
    [
        "",
        GOOD_KEY[:-1],
        GOOD_KEY + "0",
        GOOD_KEY.upper(),
        "g" * 64,
        "../" + GOOD_KEY[3:],
        GOOD_KEY[:62] + "/x",
        GOOD_KEY[:63] + "\x00",
        None,
        123,
        GOOD_KEY.encode(),
    ],
)
def test_validate_key_rejects(bad: object) -> None:
    """Anything but 64 lowercase hex digits raises InvalidKeyError carrying the input."""
    with pytest.raises(InvalidKeyError) as info:
        validate_key(bad)
    assert info.value.key == bad
    assert isinstance(info.value, ValueError)


def test_key_of_is_sha256() -> None:
    """key_of is the hex SHA-256 of the raw bytes and is a valid key."""
    assert key_of(b"x") == GOOD_KEY == validate_key(GOOD_KEY)


@pytest.mark.parametrize("name", ["main", "results/abc.json", "a-b_c.d/e", "x" * 128, "/".join("a" * 8)])
def test_ref_names_accepted(name: str) -> None:
    """Ordinary hierarchical names are valid refs."""
    assert validate_ref_name(name) == name


@pytest.mark.parametrize(
    "name",
    ["", ".hidden", "a/../b", "..", "a//b", "/abs", "a/", "x" * 129, "/".join("a" * 9), "a b", "a\\b", "r.lock", "r.tmp", None],
)
def test_ref_names_rejected(name: object) -> None:
    """Names that could escape refs/, hide, or clash with temp and lock files are refused."""
    with pytest.raises(InvalidNameError):
        validate_ref_name(name)


@pytest.mark.parametrize("name", ["a/b", "..", ".j", "", "j.tmp", "x" * 129])
def test_journal_names_rejected(name: str) -> None:
    """A journal name is one safe path component."""
    with pytest.raises(InvalidNameError):
        validate_journal_name(name)


def test_journal_name_is_unambiguous_and_stable() -> None:
    """Splitting the same characters differently gives different journals; the value is fixed."""
    a = journal_name("a/b", "c")
    b = journal_name("a", "b/c")
    assert a != b
    assert validate_journal_name(a) == a
    assert a.startswith("run-") and len(a) == 68
    assert journal_name("m", "model") == journal_name("m", "model")
    assert journal_name("m", "model") == "run-" + hashlib.sha256(b"\x92\xa1m\xa5model").hexdigest()
