"""Corruption: every flipped bit, every truncation and a wrong key are caught by get and fsck."""

from __future__ import annotations

import pytest

from conftest import is_s3, raw_object, write_raw_object

from emberbench.store import IntegrityError, ObjectNotFoundError, Store, fsck, key_of
from emberbench.store.frame import Codec, encode_frame

DATA = b'{"index":3,"actions":["N","E","stay"],"seed":12345}'


_write_raw = write_raw_object


def _stride(store: Store) -> int:
    """Every position locally; a sample of them on S3, where each try is a few requests."""
    return 31 if is_s3(store) else 1


@pytest.mark.parametrize("codec", list(Codec))
def test_every_flipped_bit_detected_on_read(store: Store, codec: Codec) -> None:
    """Flipping any single bit of the object file makes get raise IntegrityError naming the key."""
    key = store.put(DATA, codec=codec)
    good = raw_object(store, key)
    for bit in range(0, len(good) * 8, _stride(store)):
        bad = bytearray(good)
        bad[bit // 8] ^= 1 << (bit % 8)
        _write_raw(store, key, bytes(bad))
        with pytest.raises(IntegrityError) as info:
            store.get(key)
        assert info.value.key == key, bit


def test_flipped_bit_detected_by_fsck(store: Store) -> None:
    """fsck reports a flipped bit in (every third) byte of the object, without moving it when told not to."""
    key = store.put(DATA)
    good = raw_object(store, key)
    for offset in range(0, len(good), 3 * _stride(store)):
        bad = bytearray(good)
        bad[offset] ^= 1 << (offset % 8)
        _write_raw(store, key, bytes(bad))
        report = fsck(store, quarantine=False)
        assert not report.ok and [c.key for c in report.corrupt] == [key], offset


@pytest.mark.parametrize("codec", list(Codec))
def test_every_truncation_detected(store: Store, codec: Codec) -> None:
    """Truncating the object at any byte offset is detected by get and by fsck."""
    key = store.put(DATA, codec=codec)
    good = raw_object(store, key)
    for cut in range(0, len(good), _stride(store)):
        _write_raw(store, key, good[:cut])
        with pytest.raises(IntegrityError):
            store.get(key)
        if cut % 7 == 0:  # fsck reads the same frame through the same check; a sample suffices
            assert [c.key for c in fsck(store, quarantine=False).corrupt] == [key], cut


def test_appended_bytes_detected(store: Store) -> None:
    """Bytes appended after a valid frame are corruption too."""
    key = store.put(DATA)
    good = raw_object(store, key)
    _write_raw(store, key, good + b"\0")
    with pytest.raises(IntegrityError, match="stored length"):
        store.get(key)


def test_object_filed_under_wrong_key(store: Store) -> None:
    """A valid object copied to another key's path is caught on read and by fsck."""
    key = store.put(DATA)
    other = key_of(b"something else")
    _write_raw(store, other, raw_object(store, key))
    with pytest.raises(IntegrityError, match="frame holds key") as info:
        store.get(other)
    assert info.value.key == other
    assert [c.key for c in fsck(store, quarantine=False).corrupt] == [other]


def test_forged_frame_needs_verify_data(store: Store) -> None:
    """Content framed under a key it does not hash to passes the checksum but fails verify_data."""
    key = key_of(b"claimed")
    _write_raw(store, key, encode_frame(b"actual", key, Codec.NONE))
    assert store.get(key) == b"actual"  # the documented limit of the fast check
    with pytest.raises(IntegrityError, match="content hashes to"):
        store.get(key, verify_data=True)
    assert fsck(store, quarantine=False).ok
    report = fsck(store, verify_data=True, quarantine=False)
    assert [c.key for c in report.corrupt] == [key] and report.levels == ("frames", "verify-data")


def test_fsck_quarantines_and_put_restores(store: Store) -> None:
    """fsck moves a corrupt object to quarantine; a later put of the bytes restores it."""
    key = store.put(DATA)
    good = raw_object(store, key)
    _write_raw(store, key, good[:-3])
    report = fsck(store)
    assert report.corrupt[0].quarantined_to is not None
    if not is_s3(store):
        assert (store.root / report.corrupt[0].quarantined_to).read_bytes() == good[:-3]
    with pytest.raises(ObjectNotFoundError):
        store.get(key)
    again = fsck(store)
    assert again.ok and again.quarantine_files == 1
    store.put(DATA)
    assert store.get(key) == DATA
