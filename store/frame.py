"""The on-disk frame of one object: a fixed header, then the stored bytes.

Layout (all integers big-endian), 88 bytes of header::

    offset  size  field
    0       4     magic b"EBSO"
    4       1     frame version (1)
    5       1     codec (0 = none, 1 = zlib)
    6       2     reserved, zero
    8       8     raw length (bytes after decoding)
    16      8     stored length (bytes after the header)
    24      32    key (binary SHA-256 of the raw bytes)
    56      32    blake3 of header bytes 0..55 followed by the stored bytes

The checksum covers the header fields as well as the stored bytes, so a
flipped bit anywhere in the file is caught on every read at blake3 speed. The
key in the header catches an object filed under the wrong name (a copied or
renamed file) without re-hashing; re-hashing the content with SHA-256 is the
slower, optional ``verify_data`` check.
"""

from __future__ import annotations

import enum
import struct
import zlib
from dataclasses import dataclass

import blake3

from .errors import IntegrityError

MAGIC = b"EBSO"
FRAME_VERSION = 1
_FIXED = struct.Struct(">4sBBHQQ32s")
CHECKED_LENGTH = _FIXED.size  # 56: the part of the header the checksum covers
HEADER_LENGTH = CHECKED_LENGTH + 32
ZLIB_LEVEL = 1


class Codec(enum.IntEnum):
    """How the raw bytes are turned into the stored bytes."""

    NONE = 0
    ZLIB = 1  # zlib level 1: see docs/store.md for when it pays off.


@dataclass(frozen=True, slots=True)
class FrameHeader:
    """The parsed header of one object (its checksum not yet verified)."""

    codec: Codec
    raw_length: int
    stored_length: int
    key: str
    checksum: bytes
    checked_bytes: bytes


def encode_codec(data: bytes, codec: Codec) -> bytes:
    """Return the stored form of ``data`` under ``codec``."""
    if codec is Codec.NONE:
        return bytes(data)
    if codec is Codec.ZLIB:
        return zlib.compress(data, ZLIB_LEVEL)
    raise ValueError(f"unknown codec {codec!r}")


def encode_frame(data: bytes, key: str, codec: Codec) -> bytes:
    """Frame ``data`` (whose key the caller has computed) as a complete object file."""
    stored = encode_codec(data, codec)
    fixed = _FIXED.pack(MAGIC, FRAME_VERSION, int(codec), 0, len(data), len(stored), bytes.fromhex(key))
    hasher = blake3.blake3(fixed)
    hasher.update(stored)
    return b"".join((fixed, hasher.digest(), stored))


def parse_header(key: str, header: bytes, path: str | None = None) -> FrameHeader:
    """Parse and sanity-check a header read from the object filed under ``key``.

    Raises:
        IntegrityError: short header, bad magic, unknown version or codec,
            non-zero reserved bits, or a header key that is not ``key``.
    """
    if len(header) < HEADER_LENGTH:
        raise IntegrityError(key, f"truncated header ({len(header)} of {HEADER_LENGTH} bytes)", path=path)
    magic, version, codec, reserved, raw_length, stored_length, raw_key = _FIXED.unpack_from(header)
    if magic != MAGIC:
        raise IntegrityError(key, "bad magic", path=path)
    if version != FRAME_VERSION:
        raise IntegrityError(key, f"unknown frame version {version}", path=path)
    if codec not in Codec._value2member_map_ or reserved != 0:
        raise IntegrityError(key, f"unknown codec {codec} or reserved bits set", path=path)
    if raw_key.hex() != key:
        raise IntegrityError(key, f"frame holds key {raw_key.hex()}", path=path)
    return FrameHeader(
        codec=Codec(codec),
        raw_length=raw_length,
        stored_length=stored_length,
        key=key,
        checksum=bytes(header[CHECKED_LENGTH:HEADER_LENGTH]),
        checked_bytes=bytes(header[:CHECKED_LENGTH]),
    )


def decode_frame(key: str, header: bytes, stored: bytes, path: str | None = None) -> bytes:
    """Verify a frame and return its raw bytes.

    Args:
        key: the key the object is filed under.
        header: the first :data:`HEADER_LENGTH` bytes of the file.
        stored: every byte after the header.
        path: the file, for the error message.

    Raises:
        IntegrityError: if any check fails; no byte of the object is returned.
    """
    head = parse_header(key, header, path)
    if len(stored) != head.stored_length:
        raise IntegrityError(
            key, f"stored length {len(stored)}, frame says {head.stored_length}", path=path
        )
    hasher = blake3.blake3(head.checked_bytes)
    hasher.update(stored)
    if hasher.digest() != head.checksum:
        raise IntegrityError(key, "checksum mismatch", path=path)
    if head.codec is Codec.NONE:
        raw = stored
    else:
        try:
            inflater = zlib.decompressobj()
            # max_length bounds memory even if a valid-looking frame lies.
            raw = inflater.decompress(stored, head.raw_length + 1)
        except zlib.error as exc:
            raise IntegrityError(key, f"cannot decompress: {exc}", path=path) from None
        if not inflater.eof or inflater.unused_data:
            raise IntegrityError(key, "compressed stream does not end where the frame does", path=path)
    if len(raw) != head.raw_length:
        raise IntegrityError(key, f"raw length {len(raw)}, frame says {head.raw_length}", path=path)
    return raw
