"""The store: put, get, has, missing, size, iteration, streaming I/O, refs and journals.

A :class:`Store` maps SHA-256 keys to immutable byte strings over one
:class:`~store.backend.Backend` (a local folder or S3). Everything here is
backend-independent; docs/store.md describes the frame and the protocols.

* **put** frames the bytes and creates the object only if it is absent
  (link into place locally, ``If-None-Match: *`` on S3): an object is never
  seen half written and the first writer wins. An existing object that holds
  exactly these bytes counts as success and is made young again for gc; a
  damaged one is replaced (its bytes kept in quarantine). The object is
  durable when ``put`` returns.
* **get** checks the frame and its blake3 checksum on every read and never
  returns bytes that fail; ``verify_data=True`` also re-hashes the content.
* **Streaming**: :meth:`Store.put_file` / :meth:`Store.put_chunks` store large
  objects in 1 MiB pieces; :meth:`Store.iter_verified` / :meth:`Store.get_to_file`
  read them back without ever handing out an unchecked byte
  (:mod:`store.streaming`); :meth:`Store.check` verifies one object without
  holding it whole (fsck).
* :func:`open_store` (and :meth:`Store.open`) opens the store a locator
  names (:mod:`store.locator`), on the backend the locator chooses.
* Every put and every new reference holds the backend's writer guard, and gc
  deletes only under the exclusive guard, so gc never deletes an object in the
  middle of a put that has just found it.
"""

from __future__ import annotations

import collections
import contextlib
import os
import secrets
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .backend import Backend
from .errors import (
    IntegrityError,
    KeyMismatchError,
    NotLocalStoreError,
    ObjectNotFoundError,
    ObjectTooLargeError,
    StoreIOError,
)
from .frame import HEADER_LENGTH, Codec, decode_frame, encode_frame, parse_header
from .journal import JournalState, JournalWriter, parse
from .keys import key_of, validate_key
from .locator import is_url, parse_s3
from .refs import Refs
from .streaming import (
    SMALL_OBJECT,
    Spooler,
    check_stream,
    chunks_of_file,
    feed_all,
    read_exact,
    replay_checked,
)

DEFAULT_CODEC = Codec.NONE
"""Objects are stored uncompressed unless asked: measured in docs/store.md,
zlib level 1 shrinks JSON records about 6x but decompresses at ~650 MB/s,
below half of SHA-256 speed on CPUs with SHA extensions."""

_MAX_PUT_ROUNDS = 4
_FRESH_KEYS = 4096


class Store:
    """A content-addressed store over one backend. Safe to share between processes and machines.

    Args:
        backend: where the bytes live (see :func:`store.open_store`).
        codec: how :meth:`put` stores objects unless told otherwise.
    """

    def __init__(self, backend: Backend, *, codec: Codec = DEFAULT_CODEC) -> None:
        self.backend = backend
        self.codec = Codec(codec)
        self.refs = Refs(backend, self._has_guarded_inner, backend.writer_guard)
        # Keys this store put under the writer lease it still holds without a
        # gap (S3): gc cannot have deleted them since, so a journal entry or a
        # ref may reference them without asking the service again.
        # Each maps to (lease epoch, raw length): the length spares a request in size().
        self._fresh: collections.OrderedDict[str, tuple[int, int]] = collections.OrderedDict()
        self._fresh_lock = threading.Lock()  # puts may run on several threads (a pipelined executor)

    @classmethod
    def open(cls, locator: str | os.PathLike[str], *, create: bool = False, codec: Codec = DEFAULT_CODEC) -> Store:
        """Open the store at ``locator`` (a folder, or ``s3://bucket/prefix``); see :func:`store.open_store`."""
        return open_store(locator, create=create, codec=codec)

    @property
    def locator(self) -> str:
        """A string that reopens this store on any machine (``Store.open(store.locator)``); holds no secret."""
        return self.backend.locator

    @property
    def root(self) -> Path:
        """The folder of a local store.

        Raises:
            NotLocalStoreError: the store is on another backend (also an AttributeError).
        """
        return self._local("root")  # type: ignore[no-any-return]

    @property
    def layout(self) -> Any:
        """The paths of a local store.

        Raises:
            NotLocalStoreError: the store is on another backend (also an AttributeError).
        """
        return self._local("layout")

    def _local(self, what: str) -> Any:
        try:
            return getattr(self.backend, what)
        except AttributeError:
            raise NotLocalStoreError(self.locator, f"{what} (a local store's folder)") from None

    @property
    def read_only(self) -> str | None:
        """Why this store cannot be written (it was opened read-only), or None when it may be."""
        from .readonly import ReadOnlyBackend

        return self.backend.reason if isinstance(self.backend, ReadOnlyBackend) else None

    def write_denied(self) -> str | None:
        """Why a write would be refused: the store is read-only, or the credentials may not write; else None.

        Asks the backend once per store (on S3 a conditional PUT that never
        writes: see :meth:`store.backend.Backend.write_probe`).
        """
        if self.read_only is not None:
            return self.read_only
        if not hasattr(self, "_denied"):
            self._denied = self.backend.write_probe()
        return self._denied

    @property
    def created(self) -> bool:
        """Whether opening this store created it (the folder or prefix was missing or empty)."""
        return bool(self.backend.created)

    def now(self) -> float:
        """The current time on the storage's clock (S3: the server's), in seconds since the epoch.

        The clock gc's grace period and leases are judged by; a writer that
        records a time others compare with the store's clock should take it here.
        """
        return self.backend.now()

    def keep_alive(self) -> None:
        """Renew this process's writer lease if it is due; a long-running writer calls it regularly (a heartbeat).

        gc keeps what a live writer lease protects; a lease not renewed for
        its TTL goes stale (docs/store.md, *Leases*).
        """
        self.backend.keep_alive()

    def close(self) -> None:
        """Release what the backend holds (writer leases). The store may be used again afterwards."""
        self.backend.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- writing ---------------------------------------------------------------------

    def put(self, data: bytes, *, key: str | None = None, codec: Codec | None = None) -> str:
        """Store ``data`` durably and return its key (SHA-256 of ``data``).

        Args:
            data: the raw bytes.
            key: if given, the key the caller expects; checked before writing.
            codec: override the store's default codec for this object.

        Raises:
            KeyMismatchError: ``data`` does not hash to ``key``.
            StoreIOError: a write failed. The store is left valid (at worst a
                temp file remains in ``tmp/`` of a local store).
        """
        actual = key_of(data)
        if key is not None and validate_key(key) != actual:
            raise KeyMismatchError(key, actual)
        chosen = self.codec if codec is None else Codec(codec)
        with self.backend.writer_guard():
            if getattr(self.backend, "probe_first", True) and self._state(actual, data) == "valid":
                self.backend.touch_object(actual)
                return actual
            self._install(actual, encode_frame(data, actual, chosen), data)
            self._remember(actual, len(data))
        return actual

    def _remember(self, key: str, raw_length: int) -> None:
        epoch = getattr(self.backend, "writer_epoch", None)
        if epoch is not None:
            self._add_fresh(key, epoch(), raw_length)

    def _add_fresh(self, key: str, epoch: int, raw_length: int) -> None:
        with self._fresh_lock:
            self._fresh[key] = (epoch, raw_length)
            self._fresh.move_to_end(key)
            while len(self._fresh) > _FRESH_KEYS:
                self._fresh.popitem(last=False)

    def lease_epoch(self) -> int | None:
        """Take or renew this process's writer lease and return its epoch (None: the backend has no leases).

        With :meth:`note_stored`: a put made by another process on this
        process's behalf counts as this store's own put.
        """
        epoch = getattr(self.backend, "writer_epoch", None)
        if epoch is None:
            return None
        with self.backend.writer_guard():
            return int(epoch())

    def note_stored(self, key: str, raw_length: int, epoch: int | None) -> None:
        """Count ``key`` as put by this store (no request for :meth:`has` or :meth:`size`).

        Call it only once another process confirmed it stored ``key``, with the
        :meth:`lease_epoch` taken before that put was asked for. It takes
        effect only if this process's writer lease has had no gap since: gc
        never sweeps while a writer lease is held, so the object is still there.
        """
        current = getattr(self.backend, "writer_epoch", None)
        if current is None or epoch is None or epoch < 0:
            return
        with self.backend.writer_guard():
            if current() == epoch:
                self._add_fresh(validate_key(key), epoch, raw_length)

    def put_file(self, path: str | os.PathLike[str], *, key: str | None = None, codec: Codec | None = None) -> str:
        """Store the content of a file in pieces (never whole in memory); returns its key.

        Same contract as :meth:`put`. The file is read once; reading it is the
        caller's business (it should be a regular file the caller trusts).
        """
        return self.put_chunks(chunks_of_file(path), key=key, codec=codec)

    def put_chunks(self, chunks: Iterable[bytes | bytearray | memoryview], *, key: str | None = None,
                   codec: Codec | None = None) -> str:
        """Store the concatenation of ``chunks`` (pieces of any size) and return its key.

        Memory stays at about one 1 MiB piece whatever the object's size: the
        frame is spooled to a temp file and installed from it (see
        :mod:`store.streaming`). Same contract as :meth:`put`.
        """
        fd, spool = self.backend.new_spool(key or "stream")
        spooler = Spooler(fd, spool, self.codec if codec is None else Codec(codec))
        try:
            feed_all(spooler, chunks)
            actual = spooler.seal()
            spooler.close()
            if key is not None and validate_key(key) != actual:
                raise KeyMismatchError(key, actual)
            with self.backend.writer_guard():
                if getattr(self.backend, "probe_first", True) and self._state(actual, None) == "valid":
                    self.backend.touch_object(actual)
                    return actual
                self._install(actual, spool, None)
                self._remember(actual, spooler.raw_length)
            return actual
        finally:
            spooler.close()
            self.backend.drop_temp(spool)

    def _install(self, key: str, frame: bytes | str, data: bytes | None) -> None:
        """Create the object, or settle with what is there (under the writer guard)."""
        for _ in range(_MAX_PUT_ROUNDS):
            if self.backend.create_object(key, frame):
                return
            state = self._state(key, data, frame)
            if state == "valid":
                try:
                    self.backend.touch_object(key)
                except ObjectNotFoundError:
                    continue  # gc deleted it between the look and the refresh: store it again
                return
            if state == "corrupt":
                self.backend.replace_object(key, frame)
                return
        raise IntegrityError(key, "object keeps changing under put")  # pragma: no cover - needs an adversary

    def _state(self, key: str, data: bytes | None, frame: bytes | str | None = None) -> str:
        """``"missing"``, ``"valid"`` (holds exactly these bytes) or ``"corrupt"``."""
        if frame is not None:
            same = getattr(self.backend, "same_frame", None)
            if same is not None and same(key, frame):
                return "valid"
        try:
            if data is not None:
                return "valid" if self.get(key) == data else "corrupt"
            self.check(key, verify_data=True)
            return "valid"
        except ObjectNotFoundError:
            return "missing"
        except IntegrityError:
            return "corrupt"

    # -- reading ---------------------------------------------------------------------

    def get(self, key: str, *, verify_data: bool = False, max_length: int | None = None) -> bytes:
        """Return the raw bytes of ``key``, after checking frame and checksum.

        Args:
            key: the object key.
            verify_data: also re-hash the content with SHA-256 against ``key``.
            max_length: refuse an object whose frame header gives a longer raw
                length, before its content is read (one request on S3, where
                :meth:`size` then :meth:`get` take two).

        Raises:
            InvalidKeyError: ``key`` is malformed (no path is built).
            ObjectNotFoundError: no such object.
            IntegrityError: the object fails a check; its bytes are not returned.
            ObjectTooLargeError: it holds more than ``max_length`` bytes.
        """
        validate_key(key)
        reader, size = self.backend.open_object(key)
        where = self._where(key)
        try:
            header = read_exact(reader, HEADER_LENGTH)
            head = parse_header(key, header, where)
            if max_length is not None and head.raw_length > max_length:
                raise ObjectTooLargeError(key, head.raw_length, max_length)
            if size - HEADER_LENGTH != head.stored_length:
                raise IntegrityError(key, f"stored length {size - HEADER_LENGTH}, frame says {head.stored_length}",
                                     path=where)
            stored = read_exact(reader, head.stored_length)
        except OSError as exc:
            raise StoreIOError("read", where, exc, key=key) from exc
        finally:
            reader.close()
        raw = decode_frame(key, header, stored, where)
        if verify_data:
            actual = key_of(raw)
            if actual != key:
                raise IntegrityError(key, f"content hashes to {actual}", path=where)
        return raw

    def get_many(self, keys: Iterable[str], *, verify_data: bool = False, ahead: int = 16) -> Iterator[bytes]:
        """``get`` of each key in order, with up to ``ahead`` reads in flight (for S3 round trips).

        Memory holds at most ``ahead`` objects beyond the one being consumed.
        Every object is checked exactly as by :meth:`get`; the first failure
        is raised when its turn comes. A local store is read in this thread,
        one object after the other: a read there waits for no round trip, and
        reader threads only contend for the interpreter (they spent 2.7 times
        the CPU of plain reads of 1 KB records, and took longer).
        """
        from concurrent.futures import ThreadPoolExecutor

        if not getattr(self.backend, "remote", False):
            for key in keys:
                yield self.get(key, verify_data=verify_data)
            return
        with ThreadPoolExecutor(max_workers=max(1, ahead)) as pool:
            pending: collections.deque[Any] = collections.deque()
            for key in keys:
                pending.append(pool.submit(self.get, key, verify_data=verify_data))
                if len(pending) > ahead:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()

    def check(self, key: str, *, verify_data: bool = False) -> None:
        """Verify ``key`` as :meth:`get` would, reading it in pieces (never whole).

        Raises:
            ObjectNotFoundError / IntegrityError: as :meth:`get`.
        """
        validate_key(key)
        reader, size = self.backend.open_object(key)
        try:
            check_stream(key, reader, size, self._where(key), verify_data=verify_data)
        except OSError as exc:
            raise StoreIOError("read", self._where(key), exc, key=key) from exc
        finally:
            reader.close()

    def iter_verified(self, key: str, *, verify_data: bool = False) -> Iterator[bytes]:
        """The raw bytes of ``key`` in pieces, each handed out only once proven good.

        Small objects are checked whole first; larger ones are read twice (see
        :mod:`store.streaming`), so memory stays at one piece. If the object
        fails a check, IntegrityError is raised before any unproven byte is
        yielded (a consumer may have received earlier, proven pieces).

        Raises:
            ObjectNotFoundError / IntegrityError: as :meth:`get`.
        """
        validate_key(key)
        info = self.backend.object_info(key)
        if info is not None and info.size <= SMALL_OBJECT + HEADER_LENGTH:
            data = self.get(key, verify_data=verify_data)
            for start in range(0, len(data), 1 << 20):
                yield data[start:start + (1 << 20)]
            return
        digests: list[bytes] = []
        where = self._where(key)
        reader, size = self.backend.open_object(key)
        try:
            check_stream(key, reader, size, where, verify_data=verify_data, digests=digests)
        finally:
            reader.close()
        reader, size2 = self.backend.open_object(key)
        try:
            if size2 != size:
                raise IntegrityError(key, "changed while being read (size)", path=where)
            yield from replay_checked(key, reader, size, where, digests)
        finally:
            reader.close()

    def get_to_file(self, key: str, path: str | os.PathLike[str], *, verify_data: bool = False) -> None:
        """Write the raw bytes of ``key`` to the new file ``path``, whole and checked, or not at all.

        The bytes go to a temp file beside ``path``, which is renamed into place
        only after the last piece was proven good. An existing ``path`` is
        refused (FileExistsError): the store never replaces a caller's file.
        """
        target = Path(path)
        tmp = target.parent / f".{target.name[:40]}.{os.getpid()}.{secrets.token_hex(6)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            with os.fdopen(fd, "wb") as out:
                for piece in self.iter_verified(key, verify_data=verify_data):
                    out.write(piece)
                out.flush()
                os.fsync(out.fileno())
            os.link(tmp, target)  # refuses an existing target, file or not
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)

    def _where(self, key: str) -> str:
        return f"{getattr(self.backend, 'name', self.locator)}/objects/{key[:2]}/{key[2:]}"

    def has(self, key: str) -> bool:
        """Whether an object is stored under ``key`` (its content is not checked)."""
        if self._is_fresh(validate_key(key)):
            return True
        return self.backend.object_info(key) is not None

    def _is_fresh(self, key: str) -> bool:
        """Put by this store under the writer lease it still holds without a gap (so gc cannot have deleted it)."""
        return self._fresh_length(key) is not None

    def _fresh_length(self, key: str) -> int | None:
        """The raw length of ``key`` if it is fresh (see :meth:`_is_fresh`), else None."""
        epoch = getattr(self.backend, "writer_epoch", None)
        if epoch is None:
            return None
        with self._fresh_lock:
            found = self._fresh.get(key)
        return found[1] if found is not None and found[0] == epoch() else None

    __contains__ = has

    def missing(self, keys: Iterable[str]) -> tuple[str, ...]:
        """The keys among ``keys`` that are not stored: what a writer must still put.

        Order is kept and duplicates are dropped. All keys are validated first.
        """
        wanted = list(dict.fromkeys(validate_key(k) for k in keys))
        present = getattr(self.backend, "present_keys", None)
        if present is not None:
            found = present(wanted)
            return tuple(k for k in wanted if k not in found)
        return tuple(k for k in wanted if not self.has(k))

    def size(self, key: str) -> int:
        """The raw length of ``key``, read from its frame header alone.

        This reads 88 bytes and does not verify the checksum: it is a size, not
        a proof. ``get`` is the proof.

        Raises:
            ObjectNotFoundError / IntegrityError: missing, or bad header.
        """
        validate_key(key)
        known = self._fresh_length(key)
        if known is not None:  # put by this store moments ago: no round trip (S3)
            return known
        reader, _ = self.backend.open_object(key)
        try:
            header = read_exact(reader, HEADER_LENGTH)
        finally:
            reader.close()
        return parse_header(key, header, self._where(key)).raw_length

    def __iter__(self) -> Iterator[str]:
        """Every stored key, sorted. Entries that are not object names are skipped."""
        return (info.key for info in self.backend.list_objects())

    def keys(self) -> Iterator[str]:
        """Same as iterating the store."""
        return iter(self)

    # -- journals ----------------------------------------------------------------------

    def open_journal(self, name: str, *, create: bool = True, timeout: float = 0.0) -> JournalWriter:
        """Open ``name`` for appending (the single writer). See :class:`~store.journal.JournalWriter`."""
        return self.backend.journal_writer(name, _GuardedHas(self), create=create, timeout=timeout)

    def _has_guarded(self, key: str) -> bool:
        with self.backend.writer_guard():
            return self._has_guarded_inner(key)

    def _missing_guarded(self, keys: Iterable[str]) -> list[str]:
        """The keys among ``keys`` that are not stored, checked under one writer guard."""
        with self.backend.writer_guard():
            return [key for key in keys if not self._has_guarded_inner(key)]

    def _has_guarded_inner(self, key: str) -> bool:
        """``has`` for a caller holding the writer guard."""
        return self.has(key)

    def read_journal(self, name: str) -> JournalState:
        """Read ``name`` without taking the writer lock."""
        from .keys import validate_journal_name

        return parse(name, self.backend.read_journal_bytes(validate_journal_name(name)))[0]

    def journal_names(self) -> list[str]:
        """Every journal in the store, sorted."""
        return self.backend.journal_names()

    def special_journal(self, name: str) -> str | None:
        """What stands where journal ``name`` belongs if it cannot be a journal (``"a FIFO"``...), else None.

        Only a local store can hold such an entry (a link, FIFO, socket or
        device planted in ``journals/``); every read and write refuses it,
        and :meth:`delete_journal` removes it without following or opening it.
        """
        from .keys import validate_journal_name

        return self.backend.special_journal(validate_journal_name(name))

    def delete_journal(self, name: str, *, timeout: float = 0.0) -> bool:
        """Delete ``name`` unless a writer holds it. Returns whether it existed.

        Deleting a journal drops it as a gc root: the objects only it referenced
        become collectable (after the grace period). A link, FIFO, socket or
        device where the journal belongs is removed as it is (never followed
        or opened); a folder there is refused.
        """
        from .keys import validate_journal_name

        return self.backend.delete_journal(validate_journal_name(name), timeout)


class _GuardedHas:
    """A journal's ``has``: one key under the writer guard, or a batch's keys under one guard (``missing``).

    The guard of a local store is a lock file opened and locked per use, so
    checking a batch of entries' keys under one guard saves a lock per key.
    """

    def __init__(self, store: Store) -> None:
        self._store = store

    def __call__(self, key: str) -> bool:
        return self._store._has_guarded(key)

    def missing(self, keys: Iterable[str]) -> list[str]:
        return self._store._missing_guarded(keys)


def open_store(locator: str | os.PathLike[str], *, create: bool = False, codec: object = None,
               read_only: bool | str = False) -> object:
    """Open the store named by ``locator``: the single entry point for every backend.

    Args:
        locator: a folder path, or ``s3://bucket/prefix[?endpoint=URL&region=NAME]``.
        create: make the store if there is none yet (a folder must be missing
            or empty; an S3 prefix must hold nothing).
        codec: the default codec for puts (see :class:`store.Codec`).
        read_only: open it so that nothing can be written (True, or the reason
            as text): every write raises ReadOnlyStoreError before it starts
            (:mod:`store.readonly`). Cannot be combined with ``create``.

    Returns:
        A :class:`store.Store`.

    Raises:
        LocatorError: an unsupported or malformed locator, or S3 support is
            not installed (``pip install 'emberbench[s3]'``).
        StoreFormatError / StoreLayoutError: not a store, unknown version, or
            a layout with links or foreign entries.
    """
    text = os.fspath(locator)
    chosen = DEFAULT_CODEC if codec is None else codec
    if read_only and create:
        raise ValueError("a store cannot be created read-only")
    backend: Backend
    if isinstance(text, str) and is_url(text):
        from .s3 import S3Backend

        backend = S3Backend.open(parse_s3(text), create=create)
    else:
        from .local import LocalBackend

        backend = LocalBackend.open(text, create=create)
    if read_only:
        from .readonly import ReadOnlyBackend

        backend = ReadOnlyBackend(backend, read_only if isinstance(read_only, str) else "opened read-only")
    return Store(backend, codec=chosen)  # type: ignore[arg-type]
