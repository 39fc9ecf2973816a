"""Copy a whole store to another store, on the same or another backend.

Objects are copied frame for frame (the stored bytes, not re-encoded), after
each one passed its check in the source, so a copy never spreads damage; refs
and journals are copied as their bytes. Because both backends hold the same
frames, refs and journal bytes, the copy passes fsck wherever it lands.
Existing objects in the destination are kept (puts are idempotent); a ref or
journal that already exists there is left alone and reported.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import RefConflictError
from .streaming import read_exact

if TYPE_CHECKING:
    from .core import Store


@dataclass(frozen=True, slots=True)
class CopyReport:
    """What :func:`copy_store` did."""

    objects: int
    refs: int
    journals: int
    skipped: tuple[str, ...]


def copy_store(source: Store, target: Store) -> CopyReport:
    """Copy every object, ref and journal of ``source`` into ``target``.

    Raises:
        IntegrityError: an object of the source fails its check (nothing of it is copied).
    """
    objects = refs = journals = 0
    skipped: list[str] = []
    with target.backend.writer_guard():
        for info in source.backend.list_objects():
            source.check(info.key)
            fd, spool = target.backend.new_spool(info.key)
            try:
                reader, size = source.backend.open_object(info.key)
                try:
                    offset = 0
                    while offset < size:
                        piece = read_exact(reader, min(1 << 20, size - offset))
                        if not piece:
                            break
                        os.pwrite(fd, piece, offset)
                        offset += len(piece)
                finally:
                    reader.close()
                os.fsync(fd)
                os.close(fd)
                fd = -1
                target.backend.create_object(info.key, spool)
                objects += 1
            finally:
                if fd >= 0:
                    os.close(fd)
                target.backend.drop_temp(spool)
    for name in source.refs.names():
        try:
            target.refs.compare_and_swap(name, None, source.refs.get(name))
            refs += 1
        except RefConflictError:
            skipped.append(f"ref {name}")
    existing = set(target.journal_names())
    for name in source.journal_names():
        if name in existing:
            skipped.append(f"journal {name}")
            continue
        target.backend.import_journal(name, source.backend.read_journal_bytes(name, 1 << 30))
        journals += 1
    return CopyReport(objects, refs, journals, tuple(skipped))
