"""Shared foundations: canonical JSON, digests, the atomic writer and SplitMix64 streams."""

from __future__ import annotations

import hashlib
import os

import numpy as np
import pytest

from emberbench.io.atomic import atomic_write_bytes
from emberbench.io.canonical import canonical_bytes, canonical_json, digest, is_sha256_hex, parse_json_strict
from emberbench.errors import CanonicalFormError, EmberError
from emberbench.sim.rng import SplitMix64, draw, draws, mix64, stream_key


def test_canonical_json_rules() -> None:
    """Sorted keys, no whitespace, ASCII escapes, no NaN; digest is SHA-256 of those bytes."""
    value = {"b": [1, 2.5], "a": "é", "c": {"z": None, "y": True}}
    assert canonical_json(value) == '{"a":"\\u00e9","b":[1,2.5],"c":{"y":true,"z":null}}'
    assert digest(value) == hashlib.sha256(canonical_bytes(value)).hexdigest()
    for bad in (float("nan"), float("inf"), {1j: 1}, object()):
        with pytest.raises(CanonicalFormError):
            canonical_json(bad)
    assert is_sha256_hex("a" * 64) and not is_sha256_hex("A" * 64) and not is_sha256_hex("a" * 63)


def test_strict_parser_refuses_constants_and_duplicate_keys() -> None:
    """NaN/Infinity and duplicate keys are errors naming the source."""
    with pytest.raises(CanonicalFormError, match="src: JSON constant NaN"):
        parse_json_strict('{"a": NaN}', where="src")
    with pytest.raises(CanonicalFormError, match="src: duplicate key 'a'"):
        parse_json_strict('{"a": 1, "a": 2}', where="src")
    with pytest.raises(CanonicalFormError, match="src: not valid JSON"):
        parse_json_strict("{", where="src")


def test_atomic_write_replaces_and_cleans_up(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """A failed write leaves the old file and no temp; a good write replaces it with normal permissions."""
    target = tmp_path / "f.json"
    atomic_write_bytes(target, b"old")
    assert target.read_bytes() == b"old"
    assert target.stat().st_mode & 0o777 == 0o666 & ~_umask()

    def broken_fsync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError):
        atomic_write_bytes(target, [b"new", b"data"])
    monkeypatch.undo()
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.json"]
    atomic_write_bytes(target, iter([b"new", b"data"]))
    assert target.read_bytes() == b"newdata"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_splitmix64_reference_values() -> None:
    """SplitMix64 from state 0 gives the published first outputs; counter draws match sequential ones."""
    gen = SplitMix64(0)
    assert [gen.next() for _ in range(3)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]
    key = stream_key(42, "fire")
    seq = SplitMix64(key)
    assert [seq.next() for _ in range(5)] == [draw(key, k) for k in range(5)]
    assert draws(key, np.arange(5)).tolist() == [draw(key, k) for k in range(5)]
    assert stream_key(42, "fire") != stream_key(42, "other") != stream_key(43, "fire")
    assert mix64(0) == 0


def test_below_is_unbiased_by_rejection() -> None:
    """below(n) stays in range and rejects the biased top of the word range."""
    gen = SplitMix64(9)
    values = [gen.below(3) for _ in range(3000)]
    assert set(values) == {0, 1, 2}
    with pytest.raises(ValueError):
        gen.below(0)
    with pytest.raises(ValueError):
        stream_key(-1, "fire")


def test_every_error_derives_from_one_root() -> None:
    """All project errors derive from EmberError and from the built-in they resemble."""
    import inspect

    import emberbench.errors as errors

    classes = [c for _, c in inspect.getmembers(errors, inspect.isclass) if c.__module__ == errors.__name__]
    assert all(issubclass(c, EmberError) for c in classes)
    assert issubclass(errors.ManifestError, ValueError) and issubclass(errors.ManifestTypeError, TypeError)
    assert issubclass(errors.StatisticsInputError, errors.EvaluationError)
