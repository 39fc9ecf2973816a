"""A local copy of the records this run stored, so assembling the artifact does not read them back.

A store-backed run writes its artifact at the start, at checkpoints and at
the end, each time streaming every finished episode's record. On a remote
store (S3) reading those records back is a round trip per record, though
this very process put most of them moments ago. The :class:`RecordSpool`
keeps the bytes of each record this process stored in an append-only,
unnamed temporary file (the kernel removes it when it is closed or the
process dies, so nothing is left behind on any failure), and the artifact
takes those records from it. Records that came from the journal (resume) or
from Ray workers are still read from the store.

The spool is not trusted more than the store: each entry carries the
record's digest (its SHA-256), and a read re-hashes the bytes; an entry that
does not match is not used: its record is read from the store instead.
Disk use is bounded by :data:`SPOOL_CAP`; records past it are not spooled,
nor any after a write to the spool failed (the run goes on reading those
from the store).
"""

from __future__ import annotations

import hashlib
import os
import struct
import tempfile
from array import array
from typing import IO

SPOOL_CAP = 2 << 30
"""At most this many bytes of records are spooled in one run; later records are read from the store."""

_ENTRY = struct.Struct(">32sQ")  # digest, record length
_NONE = -1


class RecordSpool:
    """Record bytes by manifest index, in an unnamed temp file (see the module docstring).

    Args:
        episodes: the manifest's episode count (indexes are ``0..episodes-1``).
        cap: bytes of records the spool may hold.
        folder: where the temp file goes (the system's temp folder by default).
    """

    def __init__(self, episodes: int, *, cap: int = SPOOL_CAP, folder: str | None = None) -> None:
        self.cap = cap
        self._folder = folder
        self._file: IO[bytes] | None = None
        self._fd = -1
        self._end = 0
        self._offsets = array("q", [_NONE]) * episodes

    def add(self, index: int, digest: str, record: bytes) -> bool:
        """Keep ``record`` (whose SHA-256 the caller says is ``digest``) for episode ``index``.

        Returns:
            Whether it was spooled: False once the cap would be passed, and
            from the first write that fails on (a full temp folder, say).
        """
        if index >= len(self._offsets) or self._end + _ENTRY.size + len(record) > self.cap:
            return False
        try:
            if self._file is None:
                self._file = tempfile.TemporaryFile(prefix=".emberbench-records.", dir=self._folder)
                self._fd = self._file.fileno()
            entry = _ENTRY.pack(bytes.fromhex(digest), len(record))
            written = os.pwrite(self._fd, entry, self._end) + os.pwrite(self._fd, record, self._end + _ENTRY.size)
        except OSError:
            written = -1
        if written != _ENTRY.size + len(record):
            self.cap = 0  # a full or failing temp folder: stop spooling; the store still has every record
            return False
        self._offsets[index] = self._end
        self._end += written
        return True

    def has(self, index: int) -> bool:
        """Whether episode ``index`` has a spooled record (never after :meth:`close`)."""
        return index < len(self._offsets) and self._offsets[index] != _NONE

    def get(self, index: int, digest: str) -> bytes | None:
        """The spooled record of ``index`` if it is exactly the record ``digest`` names, else None.

        :meth:`has` does not change with what this returns, so a caller may
        decide ahead which records it reads from the store.
        """
        if not self.has(index):
            return None
        offset = self._offsets[index]
        try:
            head = os.pread(self._fd, _ENTRY.size, offset)
            if len(head) == _ENTRY.size:
                key, length = _ENTRY.unpack(head)
                if key.hex() == digest and length <= self._end - offset - _ENTRY.size:
                    data = os.pread(self._fd, length, offset + _ENTRY.size)
                    if len(data) == length and hashlib.sha256(data).hexdigest() == digest:
                        return data
        except OSError:
            pass  # unreadable: the caller reads the store instead
        return None

    def close(self) -> None:
        """Delete the spool (idempotent)."""
        if self._file is not None:
            self._file.close()
            self._file = None
            self._fd = -1
        self._offsets = array("q")
