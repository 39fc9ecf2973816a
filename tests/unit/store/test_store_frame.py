"""The object frame: golden bytes, every field checked, future versions refused."""

from __future__ import annotations

import io
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emberbench.store import Codec, IntegrityError, key_of
from emberbench.store.frame import HEADER_LENGTH, decode_frame, encode_frame

from tests.hypothesis_profiles import examples

DATA = b'{"hello":"world"}'
KEY = key_of(DATA)
# Golden frame of DATA with codec NONE. Changing it means changing the format version.
GOLDEN_NONE = bytes.fromhex(
    "4542534f01000000"
    "0000000000000011"
    "0000000000000011"
    "93a23971a914e5eacbf0a8d25154cda309c3c1c72fbb9914d47c60f3cb681588"
    "ec5bfc033d3225e956839b30e0df2bdf75d5ec6e89f07c3286baa0c2eead14db"
) + DATA


def _golden() -> bytes:
    return GOLDEN_NONE


def test_golden_frame_is_what_encode_writes() -> None:
    """encode_frame with codec NONE produces the documented layout byte for byte."""
    assert KEY == "93a23971a914e5eacbf0a8d25154cda309c3c1c72fbb9914d47c60f3cb681588"
    assert encode_frame(DATA, KEY, Codec.NONE) == _golden()
    assert decode_frame(KEY, _golden()[:HEADER_LENGTH], _golden()[HEADER_LENGTH:]) == DATA


def test_zlib_frame_decodes() -> None:
    """A zlib frame round-trips and really is compressed."""
    data = b"abc" * 1000
    frame = encode_frame(data, key_of(data), Codec.ZLIB)
    assert frame[5] == Codec.ZLIB
    assert len(frame) < len(data)
    assert decode_frame(key_of(data), frame[:HEADER_LENGTH], frame[HEADER_LENGTH:]) == data


@pytest.mark.parametrize(
    ("offset", "value", "reason"),
    [
        (0, b"X", "bad magic"),
        (4, b"\x02", "unknown frame version 2"),
        (5, b"\x07", "unknown codec"),
        (7, b"\x01", "reserved"),
    ],
)
def test_header_fields_checked(offset: int, value: bytes, reason: str) -> None:
    """A future frame version, an unknown codec or set reserved bits are refused by name."""
    frame = bytearray(_golden())
    frame[offset : offset + 1] = value
    with pytest.raises(IntegrityError, match=reason) as info:
        decode_frame(KEY, bytes(frame[:HEADER_LENGTH]), bytes(frame[HEADER_LENGTH:]))
    assert info.value.key == KEY


def test_frame_under_other_key_refused() -> None:
    """A valid frame read under another key names both keys' mismatch."""
    other = key_of(b"other")
    with pytest.raises(IntegrityError, match="frame holds key"):
        decode_frame(other, _golden()[:HEADER_LENGTH], _golden()[HEADER_LENGTH:])


def test_zlib_trailing_garbage_refused() -> None:
    """A zlib stream that ends before the frame does is corrupt even if the checksum is recomputed."""
    import blake3
    import struct

    data = b"abc" * 100
    stored = zlib.compress(data, 1) + b"junk"
    fixed = struct.pack(">4sBBHQQ32s", b"EBSO", 1, 1, 0, len(data), len(stored), bytes.fromhex(key_of(data)))
    header = fixed + blake3.blake3(fixed + stored).digest()
    with pytest.raises(IntegrityError, match="does not end"):
        decode_frame(key_of(data), header, stored)


@settings(derandomize=True, max_examples=examples(50), deadline=None)
@given(data=st.binary(max_size=5000), codec=st.sampled_from(list(Codec)))
def test_round_trip(data: bytes, codec: Codec) -> None:
    """Any bytes round-trip through any codec."""
    frame = encode_frame(data, key_of(data), codec)
    assert decode_frame(key_of(data), frame[:HEADER_LENGTH], frame[HEADER_LENGTH:]) == data


class _Trickle(io.RawIOBase):
    """A reader that hands out at most ``step`` bytes per read, like a socket."""

    def __init__(self, data: bytes, step: int) -> None:
        self.data, self.step, self.pos, self.reads = data, step, 0, 0

    def read(self, n: int = -1) -> bytes:
        self.reads += 1
        n = len(self.data) - self.pos if n < 0 else n
        piece = self.data[self.pos:self.pos + min(n, self.step)]
        self.pos += len(piece)
        return piece


def test_read_exact_asks_once_and_carries_on_after_short_reads() -> None:
    """One read when the reader gives all; short reads are continued; the end gives fewer bytes."""
    from emberbench.store.streaming import read_exact

    data = bytes(range(256)) * 64
    whole = _Trickle(data, len(data))
    assert read_exact(whole, len(data)) == data and whole.reads == 1
    trickle = _Trickle(data, 1000)
    assert read_exact(trickle, 5000) == data[:5000] and trickle.reads == 5
    assert read_exact(trickle, 1 << 20) == data[5000:]
    assert read_exact(trickle, 10) == b""
