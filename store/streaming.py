"""Streaming object I/O: put from a file or chunks, read back in checked pieces.

**Streaming put.** The raw bytes are hashed (SHA-256, the key) and encoded
while they are spooled to a temp file (``tmp/`` of a local store, the system
temp folder for S3), behind room for the header. The frame's blake3 covers
the header's fixed part, which holds the key and lengths known only at the
end, so a second pass over the spooled stored bytes computes it; the header
is then written in front and the spool becomes the object (linked into place
locally, uploaded in parts to S3). Memory stays at one piece (1 MiB).

**Verified reads.** A frame's checksum covers the whole object, so a byte
can only be called good once the last byte has been read. :func:`iter_verified`
therefore reads twice: the first pass checks the whole frame and remembers a
blake3 digest of every stored piece; the second pass reads again and hands
out a piece only after it matched its first-pass digest. Every byte handed
out is thus one that was part of a fully checked frame, and an object that
changes between the passes (damage, or a replacement) stops the stream with
:class:`~store.errors.IntegrityError` before any changed byte is handed out.
Objects up to :data:`SMALL_OBJECT` bytes are read once, checked whole in
memory, then handed out.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from collections.abc import Iterable, Iterator
from typing import BinaryIO

import blake3

from .errors import IntegrityError, StoreIOError
from .frame import CHUNK, HEADER_LENGTH, ZLIB_LEVEL, Codec, FrameChecker, build_header, fixed_part

SMALL_OBJECT = 8 << 20
"""Objects up to 8 MiB are checked whole in memory and then handed out."""


def read_exact(reader: BinaryIO, n: int) -> bytes:
    """Read up to ``n`` bytes, continuing after short reads; fewer only at the end.

    Callers bound ``n`` (a header, a piece, or an object whose size was
    checked). It is asked for in one read, so the usual case returns the
    reader's own buffer without a copy.
    """
    parts: list[bytes] = []
    while n > 0:
        piece = reader.read(n)
        if not piece:
            break
        parts.append(piece)
        n -= len(piece)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def check_stream(key: str, reader: BinaryIO, size: int, where: str, *, verify_data: bool,
                 digests: list[bytes] | None = None) -> None:
    """Check the frame read from ``reader`` piece by piece, never holding it whole.

    Args:
        digests: if given, receives the blake3 digest of each stored piece.

    Raises:
        IntegrityError: the object fails a check.
    """
    checker = FrameChecker(key, read_exact(reader, HEADER_LENGTH), size, where, verify_data=verify_data)
    left = checker.head.stored_length
    while left > 0:
        piece = read_exact(reader, min(CHUNK, left))
        if not piece:
            raise IntegrityError(key, f"stored length {checker.head.stored_length - left} is short", path=where)
        if digests is not None:
            digests.append(blake3.blake3(piece).digest(16))
        checker.feed(piece)
        left -= len(piece)
    checker.finish()


def replay_checked(key: str, reader: BinaryIO, size: int, where: str, digests: list[bytes]) -> Iterator[bytes]:
    """Second pass of :func:`iter_verified`: hand out raw pieces whose stored piece matches ``digests``."""
    checker = FrameChecker(key, read_exact(reader, HEADER_LENGTH), size, where)
    for index, expected in enumerate(digests):
        piece = read_exact(reader, min(CHUNK, checker.head.stored_length - index * CHUNK))
        if blake3.blake3(piece).digest(16) != expected:
            raise IntegrityError(key, f"changed while being read (piece {index})", path=where)
        yield from checker.feed(piece)
    if reader.read(1):
        raise IntegrityError(key, "changed while being read (grew)", path=where)


class Spooler:
    """Encodes raw pieces into a spool file behind room for the header (see module docstring).

    Args:
        fd: an open, empty, read-write spool file (closed by :meth:`close`).
        where: its name, for messages.
        codec: how the stored bytes are encoded.
    """

    def __init__(self, fd: int, where: str, codec: Codec) -> None:
        self.fd, self.where, self.codec = fd, where, Codec(codec)
        self._sha = hashlib.sha256()
        self._deflater = zlib.compressobj(ZLIB_LEVEL) if self.codec is Codec.ZLIB else None
        self.raw_length = 0
        self.stored_length = 0
        self._write_at(b"\0" * HEADER_LENGTH, 0)

    def _write_at(self, data: bytes, offset: int) -> None:
        view = memoryview(data)
        while view:
            try:
                n = os.pwrite(self.fd, view, offset)
            except OSError as exc:
                raise StoreIOError("write", self.where, exc) from exc
            if n <= 0:
                exc = OSError(28, "No space left on device (zero-length write)")
                raise StoreIOError("write", self.where, exc) from exc
            view, offset = view[n:], offset + n

    def _store(self, stored: bytes) -> None:
        if stored:
            self._write_at(stored, HEADER_LENGTH + self.stored_length)
            self.stored_length += len(stored)

    def feed(self, raw: bytes) -> None:
        """Add the next raw bytes."""
        if not raw:
            return
        self._sha.update(raw)
        self.raw_length += len(raw)
        self._store(raw if self._deflater is None else self._deflater.compress(raw))

    def seal(self) -> str:
        """Finish encoding, write the header, fsync; return the key (SHA-256 of the raw bytes)."""
        if self._deflater is not None:
            self._store(self._deflater.flush())
        key = self._sha.hexdigest()
        hasher = blake3.blake3(fixed_part(key, self.codec, self.raw_length, self.stored_length))
        offset = HEADER_LENGTH
        end = HEADER_LENGTH + self.stored_length
        while offset < end:
            piece = os.pread(self.fd, min(CHUNK, end - offset), offset)
            if not piece:
                raise StoreIOError("read", self.where, OSError(5, "spool shrank"))
            hasher.update(piece)
            offset += len(piece)
        self._write_at(build_header(key, self.codec, self.raw_length, self.stored_length, hasher.digest()), 0)
        try:
            os.fsync(self.fd)
        except OSError as exc:
            raise StoreIOError("fsync", self.where, exc, key=key) from exc
        return key

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def chunks_of_file(path: str | os.PathLike[str]) -> Iterator[bytes]:
    """The bytes of a regular file in :data:`~store.frame.CHUNK` pieces."""
    with open(path, "rb") as handle:
        while piece := handle.read(CHUNK):
            yield piece


def feed_all(spooler: Spooler, chunks: Iterable[bytes | bytearray | memoryview]) -> None:
    for chunk in chunks:
        spooler.feed(bytes(chunk))
