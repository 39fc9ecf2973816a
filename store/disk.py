"""The object store on disk: put, get, has, missing, size, iteration.

A :class:`Store` maps SHA-256 keys to immutable byte strings. See
docs/store.md for the layout, the frame and the write protocol; in short:

* **put** frames the bytes, writes them to a temp file in ``tmp/``, fsyncs it,
  hard-links it to ``objects/ab/cdef...`` (the first writer wins; an existing
  valid object counts as success and has its mtime refreshed), and fsyncs the
  fan-out folder. The object is durable when ``put`` returns. Any write,
  fsync or link failure raises :class:`~store.errors.StoreIOError`; the put
  did not happen and nothing is retried.
* **get** checks the frame and its blake3 checksum on every read and never
  returns bytes that fail; ``verify_data=True`` also re-hashes the content.
* Every put holds the gc lock *shared*, and gc sweeps while holding it
  *exclusively*, so gc never deletes an object in the middle of a put that
  has just found it and refreshed its mtime.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from . import _fs, lock
from .errors import IntegrityError, KeyMismatchError, ObjectNotFoundError, StoreIOError
from .frame import HEADER_LENGTH, Codec, decode_frame, encode_frame, parse_header
from .journal import JournalState, JournalWriter, delete_journal, journal_names, read_journal
from .keys import key_of, validate_key
from .layout import Layout, open_layout
from .refs import Refs

DEFAULT_CODEC = Codec.NONE
"""Objects are stored uncompressed unless asked: measured in docs/store.md,
zlib level 1 shrinks JSON records about 6x but decompresses at ~650 MB/s,
below half of SHA-256 speed on CPUs with SHA extensions."""

# Filesystems without hard links report one of these from link(2); rename is
# the fallback there (it overwrites, which is harmless for identical content).
_NO_LINK = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK}
_MAX_PUT_ROUNDS = 4


class Store:
    """A content-addressed store in one folder. Safe to share between processes.

    Args:
        layout: the store's paths (see :meth:`open`).
        codec: how :meth:`put` stores objects unless told otherwise.
    """

    def __init__(self, layout: Layout, *, codec: Codec = DEFAULT_CODEC) -> None:
        self.layout = layout
        self.codec = Codec(codec)
        self.refs = Refs(layout, self.has)

    @classmethod
    def open(
        cls, root: str | os.PathLike[str], *, create: bool = False, codec: Codec = DEFAULT_CODEC
    ) -> Store:
        """Open the store at ``root``; with ``create``, make it if it does not exist.

        Raises:
            StoreFormatError: not a store, or an unknown format version.
        """
        return cls(open_layout(root, create=create), codec=codec)

    @property
    def root(self) -> Path:
        return self.layout.root

    # -- objects -----------------------------------------------------------

    def put(self, data: bytes, *, key: str | None = None, codec: Codec | None = None) -> str:
        """Store ``data`` durably and return its key (SHA-256 of ``data``).

        Args:
            data: the raw bytes.
            key: if given, the key the caller expects; checked before writing.
            codec: override the store's default codec for this object.

        Raises:
            KeyMismatchError: ``data`` does not hash to ``key``.
            StoreIOError: a write, fsync, link or rename failed. The store is
                left valid (at worst a temp file remains in ``tmp/``).
        """
        actual = key_of(data)
        if key is not None and validate_key(key) != actual:
            raise KeyMismatchError(key, actual)
        final = self.layout.object_path(actual)
        with lock.locked(self.layout.gc_lock, shared=True):
            state = self._existing(actual, final, data)
            if state == "valid":
                return self._refresh(actual, final)
            framed = encode_frame(data, actual, self.codec if codec is None else Codec(codec))
            tmp = _fs.write_temp(self.layout.tmp, actual, framed, actual)
            try:
                for _ in range(_MAX_PUT_ROUNDS):
                    if state == "corrupt":
                        self._keep_evidence(actual, final)
                        self._rename(tmp, final, actual)
                        break
                    if self._link(tmp, final, actual):
                        break
                    state = self._existing(actual, final, data)
                    if state == "valid":
                        return self._refresh(actual, final)
                else:  # pragma: no cover - needs an adversary deleting objects in a loop
                    raise IntegrityError(actual, "object keeps changing under put", path=str(final))
            finally:
                _fs.remove_quietly(tmp)
            _fs.fsync_dir(final.parent, actual)
        return actual

    def _existing(self, key: str, final: Path, data: bytes) -> str:
        """``"missing"``, ``"valid"`` (holds exactly ``data``) or ``"corrupt"``."""
        try:
            stored = self._read(key, final)
        except ObjectNotFoundError:
            return "missing"
        except IntegrityError:
            return "corrupt"
        return "valid" if stored == data else "corrupt"

    def _refresh(self, key: str, final: Path) -> str:
        # The new mtime tells gc the object is young again (grace period), and
        # the folder fsync makes a link left by a crashed writer durable.
        try:
            os.utime(final)
        except OSError as exc:
            raise StoreIOError("utime", str(final), exc, key=key) from exc
        _fs.fsync_dir(final.parent, key)
        return key

    def _link(self, tmp: Path, final: Path, key: str) -> bool:
        """Link ``tmp`` into place; False if an object is already there."""
        try:
            os.link(tmp, final)
            return True
        except FileExistsError:
            return False
        except OSError as exc:
            if exc.errno not in _NO_LINK:
                raise StoreIOError("link", str(final), exc, key=key) from exc
        self._rename(tmp, final, key)
        return True

    def _rename(self, tmp: Path, final: Path, key: str) -> None:
        try:
            os.replace(tmp, final)
        except OSError as exc:
            raise StoreIOError("rename", str(final), exc, key=key) from exc

    def _keep_evidence(self, key: str, final: Path) -> None:
        # A hard link keeps the damaged bytes for inspection while the good
        # object replaces the name atomically: readers never see it missing.
        try:
            os.link(final, self.layout.quarantine / f"{key}.{time.time_ns()}")
        except OSError:
            pass

    def get(self, key: str, *, verify_data: bool = False) -> bytes:
        """Return the raw bytes of ``key``, after checking frame and checksum.

        Args:
            key: the object key.
            verify_data: also re-hash the content with SHA-256 against ``key``.

        Raises:
            InvalidKeyError: ``key`` is malformed (no path is built).
            ObjectNotFoundError: no such object.
            IntegrityError: the object fails a check; its bytes are not returned.
        """
        raw = self._read(key, self.layout.object_path(key))
        if verify_data:
            actual = key_of(raw)
            if actual != key:
                path = str(self.layout.object_path(key))
                raise IntegrityError(key, f"content hashes to {actual}", path=path)
        return raw

    def _read(self, key: str, path: Path) -> bytes:
        try:
            with open(path, "rb", buffering=0) as handle:
                header = handle.read(HEADER_LENGTH)
                stored = handle.read()
        except (FileNotFoundError, NotADirectoryError):
            raise ObjectNotFoundError(key) from None
        except OSError as exc:
            raise StoreIOError("read", str(path), exc, key=key) from exc
        return decode_frame(key, header, stored, str(path))

    def has(self, key: str) -> bool:
        """Whether an object file exists for ``key`` (its content is not checked)."""
        return self.layout.object_path(key).is_file()

    __contains__ = has

    def missing(self, keys: Iterable[str]) -> tuple[str, ...]:
        """The keys among ``keys`` that are not stored: what a writer must still put.

        Order is kept and duplicates are dropped. All keys are validated first.
        """
        wanted = list(dict.fromkeys(validate_key(k) for k in keys))
        return tuple(k for k in wanted if not self.has(k))

    def size(self, key: str) -> int:
        """The raw length of ``key``, read from its frame header alone.

        This reads 88 bytes and does not verify the checksum: it is a size, not
        a proof. ``get`` is the proof.

        Raises:
            ObjectNotFoundError / IntegrityError: missing, or bad header.
        """
        path = self.layout.object_path(key)
        try:
            with open(path, "rb", buffering=0) as handle:
                header = handle.read(HEADER_LENGTH)
        except (FileNotFoundError, NotADirectoryError):
            raise ObjectNotFoundError(key) from None
        return parse_header(key, header, str(path)).raw_length

    def __iter__(self) -> Iterator[str]:
        """Every stored key, sorted. Files that are not object names are skipped."""
        for fanout in sorted(os.listdir(self.layout.objects)):
            if len(fanout) != 2:
                continue
            try:
                names = sorted(os.listdir(self.layout.objects / fanout))
            except NotADirectoryError:
                continue
            for rest in names:
                key = fanout + rest
                try:
                    yield validate_key(key)
                except ValueError:
                    continue

    def keys(self) -> Iterator[str]:
        """Same as iterating the store."""
        return iter(self)

    # -- journals ----------------------------------------------------------

    def open_journal(self, name: str, *, create: bool = True, timeout: float = 0.0) -> JournalWriter:
        """Open ``name`` for appending (the single writer). See :class:`JournalWriter`."""
        return JournalWriter(self.layout, name, self.has, create=create, timeout=timeout)

    def read_journal(self, name: str) -> JournalState:
        """Read ``name`` without taking the writer lock."""
        return read_journal(self.layout, name)

    def journal_names(self) -> list[str]:
        """Every journal in the store, sorted."""
        return journal_names(self.layout)

    def delete_journal(self, name: str, *, timeout: float = 0.0) -> bool:
        """Delete ``name`` unless a writer holds it. Returns whether it existed."""
        return delete_journal(self.layout, name, timeout=timeout)
