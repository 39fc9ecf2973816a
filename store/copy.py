"""Copy objects, refs and journals from one store to another, on the same or another backend.

Objects are copied frame for frame (the stored bytes, not re-encoded), after
each one passed its check in the source, so a copy never spreads damage;
refs are copied as their bytes. A journal is copied as the bytes of its
valid entries: a torn tail (what a crash leaves at the end of a local
journal, and what readers skip) is not copied, because on S3, where an
append is never torn, it would read as damage. Because both backends hold the
same frames, refs and journal bytes, a copy passes fsck wherever it lands.

:func:`copy_store` copies everything it can read; :func:`copy_object` and
:func:`journal_snapshot` are the pieces a selective copy (EMBERBench's
``store copy`` of finished runs) is built from.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import JournalError, RefConflictError, StoreError, StoreIOError
from .journal import MAX_JOURNAL_BYTES, JournalState, parse
from .streaming import read_exact

if TYPE_CHECKING:
    from .core import Store


@dataclass(frozen=True, slots=True)
class CopyReport:
    """What :func:`copy_store` did; ``skipped`` says what was not copied and why, one line each."""

    objects: int
    refs: int
    journals: int
    skipped: tuple[str, ...]


def copy_object(source: Store, target: Store, key: str, *, verify_data: bool = True) -> bool:
    """Copy object ``key`` frame for frame once it passed its check in ``source``; whether it was created.

    An object ``target`` already holds is made young again (as a put of it
    would), so a gc running there keeps it until it is referenced.

    Raises:
        IntegrityError / ObjectNotFoundError: the source object fails its check or is gone (nothing is copied).
    """
    source.check(key, verify_data=verify_data)
    backend = target.backend
    fd, spool = backend.new_spool(key)
    try:
        reader, size = source.backend.open_object(key)
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
        with backend.writer_guard():
            if backend.create_object(key, spool):
                return True
            backend.touch_object(key)
            return False
    except OSError as exc:
        raise StoreIOError("copy", key, exc, key=key) from exc
    finally:
        if fd >= 0:
            os.close(fd)
        backend.drop_temp(spool)


def journal_snapshot(store: Store, name: str) -> tuple[bytes, JournalState]:
    """The bytes of journal ``name``'s valid entries (a torn tail left out) and its state.

    Raises:
        JournalError / JournalCorruptError / StoreLayoutError: the journal cannot be read.
    """
    data = store.backend.read_journal_bytes(name, MAX_JOURNAL_BYTES)
    state, end = parse(name, data)
    return data[:end], state


def copy_store(source: Store, target: Store) -> CopyReport:
    """Copy every object, ref and journal of ``source`` into ``target``.

    An object that fails its check in the source is not copied; a journal
    that cannot be read is not copied (it is listed in ``skipped``), and the
    copy goes on. A ref or journal ``target`` already holds is left alone and
    listed too.
    """
    objects = refs = journals = 0
    skipped: list[str] = []
    for info in source.backend.list_objects():
        try:
            copy_object(source, target, info.key, verify_data=False)
            objects += 1
        except StoreIOError:
            raise
        except StoreError as exc:
            skipped.append(f"object {info.key}: {exc}")
    for name in source.refs.names():
        try:
            target.refs.compare_and_swap(name, None, source.refs.get(name))
            refs += 1
        except RefConflictError:
            skipped.append(f"ref {name}: the target holds it already")
        except StoreIOError:
            raise
        except StoreError as exc:
            skipped.append(f"ref {name}: {exc}")
    existing = set(target.journal_names())
    for name in source.journal_names():
        if name in existing:
            skipped.append(f"journal {name}: the target holds it already")
            continue
        try:
            data, _ = journal_snapshot(source, name)
        except StoreIOError:
            raise
        except JournalError as exc:
            if exc.reason != "no such journal":
                skipped.append(f"journal {name}: {exc.reason}")
            continue
        except StoreError as exc:
            skipped.append(f"journal {name}: {exc}")
            continue
        target.backend.import_journal(name, data)
        journals += 1
    return CopyReport(objects, refs, journals, tuple(skipped))
