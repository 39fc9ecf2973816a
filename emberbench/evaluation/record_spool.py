"""A local copy of the records this run stored, so assembling the artifact does not read them back.

A store-backed run writes its artifact at the start, at checkpoints and at
the end, each time streaming every finished episode's record. On a remote
store (S3) reading those records back is a round trip per record, though
this very process put most of them moments ago. The :class:`RecordSpool`
keeps a compressed copy of each record this process stored, and the
artifact takes those records from it. Records that came from the journal
(resume) or from Ray workers are still read from the store.

**Where the copies go.** Each record is compressed (zlib, level 1: about a
quarter of its size for records of the public suite, some 0.1 ms each) and
kept in memory while the copies there stay within :data:`SPOOL_MEMORY`;
copies past that bound are appended to an unnamed temporary file (the kernel
removes it when it is closed or the process dies, so nothing is left behind
on any failure), at most :data:`SPOOL_CAP` bytes of it. So a run writes
nothing to the spool until its compressed records pass the memory bound,
and past it a quarter of each record's size rather than the record a second
time (docs/evaluation.md, "Bytes written"). Records past the disk cap, and
any after a write to the file failed, are not spooled (the run reads those
from the store).

The spool is not trusted more than the store: each entry carries the
record's digest (its SHA-256) and both lengths, and a read decompresses at
most the recorded length and re-hashes the bytes; an entry that does not
match is not used: its record is read from the store instead.
"""

from __future__ import annotations

import hashlib
import os
import struct
import tempfile
import zlib
from array import array
from typing import IO

SPOOL_MEMORY = 8 << 20
"""Compressed record copies kept in memory, at most (8 MiB: about 6,000 records of the public suite)."""
SPOOL_CAP = 2 << 30
"""At most this many bytes of compressed copies go to the spool's file; later records are read from the store."""
LEVEL = 1
"""zlib level of the copies: the fastest; level 6 saves a fifth more at three times the CPU."""

_ENTRY = struct.Struct(">32sQQ")  # digest, record length, compressed length
_NONE = -1


class RecordSpool:
    """Compressed record copies by manifest index, in memory up to a bound, then in an unnamed temp file.

    Args:
        episodes: the manifest's episode count (indexes are ``0..episodes-1``).
        memory: bytes of entries kept in memory (0: every copy goes to the file).
        cap: bytes of entries the file may hold.
        folder: where the temp file goes (the system's temp folder by default).

    Attributes:
        kept: records spooled so far (in memory or in the file).
        disk_bytes: bytes written to the file so far.
    """

    def __init__(self, episodes: int, *, memory: int = SPOOL_MEMORY, cap: int = SPOOL_CAP,
                 folder: str | None = None) -> None:
        self.memory = memory
        self.cap = cap
        self.kept = 0
        self._folder = folder
        self._file: IO[bytes] | None = None
        self._fd = -1
        self._end = 0
        self._held: dict[int, bytes] = {}
        self._held_bytes = 0
        self._offsets = array("q", [_NONE]) * episodes

    @property
    def disk_bytes(self) -> int:
        return self._end

    @property
    def memory_bytes(self) -> int:
        """Bytes of entries held in memory now."""
        return self._held_bytes

    def add(self, index: int, digest: str, record: bytes) -> bool:
        """Keep ``record`` (whose SHA-256 the caller says is ``digest``) for episode ``index``.

        Returns:
            Whether it was spooled: False for an index out of range or one
            already spooled, once the file's cap would be passed, and from
            the first write to the file that fails on (a full temp folder, say).
        """
        if index >= len(self._offsets) or self.has(index):
            return False
        packed = zlib.compress(record, LEVEL)
        entry = _ENTRY.pack(bytes.fromhex(digest), len(record), len(packed)) + packed
        if self._held_bytes + len(entry) <= self.memory:
            self._held[index] = entry
            self._held_bytes += len(entry)
            self.kept += 1
            return True
        if self._end + len(entry) > self.cap:
            return False
        try:
            if self._file is None:
                self._file = tempfile.TemporaryFile(prefix=".emberbench-records.", dir=self._folder)
                self._fd = self._file.fileno()
            written = os.pwrite(self._fd, entry, self._end)
        except OSError:
            written = -1
        if written != len(entry):
            self.cap = 0  # a full or failing temp folder: stop spooling to it; the store still has every record
            return False
        self._offsets[index] = self._end
        self._end += written
        self.kept += 1
        return True

    def has(self, index: int) -> bool:
        """Whether episode ``index`` has a spooled record (never after :meth:`close`)."""
        return index in self._held or (index < len(self._offsets) and self._offsets[index] != _NONE)

    def get(self, index: int, digest: str) -> bytes | None:
        """The spooled record of ``index`` if it is exactly the record ``digest`` names, else None.

        :meth:`has` does not change with what this returns, so a caller may
        decide ahead which records it reads from the store.
        """
        entry = self._held.get(index)
        try:
            if entry is None and self.has(index):
                offset = self._offsets[index]
                head = os.pread(self._fd, _ENTRY.size, offset)
                if len(head) == _ENTRY.size:
                    packed_length = _ENTRY.unpack(head)[2]
                    if packed_length <= self._end - offset - _ENTRY.size:
                        entry = head + os.pread(self._fd, packed_length, offset + _ENTRY.size)
        except OSError:
            return None  # unreadable: the caller reads the store instead
        return None if entry is None else _unpack(entry, digest)

    def close(self) -> None:
        """Delete the spool (idempotent)."""
        if self._file is not None:
            self._file.close()
            self._file = None
            self._fd = -1
        self._held = {}
        self._held_bytes = 0
        self._offsets = array("q")


def _unpack(entry: bytes, digest: str) -> bytes | None:
    """The record in ``entry`` if it is whole and hashes to ``digest``, else None (never more than its length)."""
    if len(entry) < _ENTRY.size:
        return None
    key, length, packed_length = _ENTRY.unpack_from(entry)
    if key.hex() != digest or len(entry) != _ENTRY.size + packed_length:
        return None
    unpacker = zlib.decompressobj()
    try:
        data = unpacker.decompress(memoryview(entry)[_ENTRY.size:], length + 1)
    except zlib.error:
        return None
    if len(data) != length or not unpacker.eof or unpacker.unused_data or hashlib.sha256(data).hexdigest() != digest:
        return None
    return data
