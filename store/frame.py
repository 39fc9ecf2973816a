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
import hashlib
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


CHUNK = 1 << 20
"""Piece size of every streaming read and write (1 MiB)."""


def build_header(key: str, codec: Codec, raw_length: int, stored_length: int, checksum_of: bytes) -> bytes:
    """The full header for a frame whose blake3 (over the fixed part + stored bytes) is ``checksum_of``."""
    return _fixed(key, codec, raw_length, stored_length) + checksum_of


def _fixed(key: str, codec: Codec, raw_length: int, stored_length: int) -> bytes:
    return _FIXED.pack(MAGIC, FRAME_VERSION, int(codec), 0, raw_length, stored_length, bytes.fromhex(key))


def fixed_part(key: str, codec: Codec, raw_length: int, stored_length: int) -> bytes:
    """Header bytes 0..55 (what the checksum covers before the stored bytes)."""
    return _fixed(key, codec, raw_length, stored_length)


class FrameChecker:
    """Verifies one frame fed in pieces; yields decoded raw bytes as they are produced.

    Nothing it returns from :meth:`feed` has been proven good until
    :meth:`finish` returns: callers that hand bytes on must either hold them
    back until then, or (as :mod:`store.streaming` does) check each piece
    against a previous, finished pass.

    Args:
        key: the key the object is filed under.
        header: the first :data:`HEADER_LENGTH` bytes of the object.
        size: the total size of the stored object (header included).
        path: where it is, for messages.
        verify_data: also SHA-256 the raw bytes against ``key``.

    Raises:
        IntegrityError: on any failed check (at construction for the header and
            the size, in ``feed`` when the raw bytes overrun the frame, in
            ``finish`` for the rest).
    """

    def __init__(self, key: str, header: bytes, size: int, path: str | None = None, *,
                 verify_data: bool = False) -> None:
        self.head = parse_header(key, header, path)
        self.key, self.path = key, path
        stored = size - HEADER_LENGTH
        if stored != self.head.stored_length:
            raise IntegrityError(key, f"stored length {stored}, frame says {self.head.stored_length}", path=path)
        self._blake = blake3.blake3(self.head.checked_bytes)
        self._sha = hashlib.sha256() if verify_data else None
        self._inflater = zlib.decompressobj() if self.head.codec is Codec.ZLIB else None
        self.raw_seen = 0

    def feed(self, stored: bytes) -> list[bytes]:
        """Take the next stored bytes; return the raw bytes they decode to (unproven)."""
        self._blake.update(stored)
        if self._inflater is None:
            pieces = [stored] if stored else []
        else:
            pieces = []
            data = stored
            try:
                while data:
                    out = self._inflater.decompress(data, CHUNK)
                    if out:
                        pieces.append(out)
                    data = self._inflater.unconsumed_tail
                    if self._inflater.eof:
                        break
            except zlib.error as exc:
                raise IntegrityError(self.key, f"cannot decompress: {exc}", path=self.path) from None
        for piece in pieces:
            self.raw_seen += len(piece)
            if self.raw_seen > self.head.raw_length:
                raise IntegrityError(self.key, f"raw length exceeds {self.head.raw_length}", path=self.path)
            if self._sha is not None:
                self._sha.update(piece)
        return pieces

    def finish(self) -> None:
        """Check the checksum, the end of the stream, the raw length and (if asked) the content hash."""
        if self._blake.digest() != self.head.checksum:
            raise IntegrityError(self.key, "checksum mismatch", path=self.path)
        if self._inflater is not None and (not self._inflater.eof or self._inflater.unused_data):
            raise IntegrityError(self.key, "compressed stream does not end where the frame does", path=self.path)
        if self.raw_seen != self.head.raw_length:
            raise IntegrityError(self.key, f"raw length {self.raw_seen}, frame says {self.head.raw_length}",
                                 path=self.path)
        if self._sha is not None and self._sha.hexdigest() != self.key:
            raise IntegrityError(self.key, f"content hashes to {self._sha.hexdigest()}", path=self.path)
