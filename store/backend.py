"""The one interface every storage backend implements: how bytes move, nothing more.

A :class:`Backend` stores four kinds of things under a store root: framed
objects (``objects/ab/cdef...``), refs (small files holding one key),
run journals, and the format marker. It knows nothing of frames, keys'
meaning or gc policy: :class:`store.core.Store`, :mod:`store.gc` and
:mod:`store.fsck` implement those once, over this interface, so they behave
the same on every backend. Two implementations exist: :mod:`store.local`
(a folder) and :mod:`store.s3` (S3-compatible object storage).

Contracts every backend keeps:

* ``create_object`` is atomic and durable: a reader sees no object or the
  whole object, and an existing object is never replaced by it (conditional
  create). ``replace_object`` replaces only a damaged object.
* ``swap_ref`` is a compare-and-swap: it changes a ref only if it still holds
  the expected bytes, else raises :class:`~store.errors.RefConflictError`.
* ``writer_guard`` is held by every operation that checks an object exists
  and then relies on it (put, ref updates, journal appends); its first use
  takes this process's writer lease, which lives until ``close``.
  ``exclusive_guard`` is held by gc while it deletes and by fsck while it
  quarantines. The two exclude each other's operations; gc's guard
  (``beside_writers``) does not wait for writer leases to end, because gc
  keeps every object stamped since a live lease was taken
  (``writer_leases``).
* Ages (``ObjectInfo.mtime`` against ``now()``) come from one clock: the
  storage's own, so clients' clock skew does not matter.
"""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

ANY = object()
"""``expected`` value for :meth:`Backend.swap_ref` meaning "whatever is there"."""


@dataclass(frozen=True, slots=True)
class WriterLease:
    """A writer lease of another process, as gc sees it.

    Attributes:
        name: the lease's name (for messages).
        since: when it was taken, on the storage's clock: objects stamped at
            or after it may be what its holder is about to reference.
    """

    name: str
    since: float


@dataclass(frozen=True, slots=True)
class ObjectInfo:
    """What a listing says about one stored object file (its content is not checked).

    Attributes:
        key: the object key (validated).
        size: bytes of the stored frame.
        mtime: when it was written or last refreshed, in seconds since the
            epoch on the storage's clock.
    """

    key: str
    size: int
    mtime: float


class Backend(abc.ABC):
    """Where a store's bytes live. See the module docstring for the contracts."""

    #: A string that reopens this store from any machine (no secrets in it).
    locator: str
    #: Whether each request is a network round trip (callers may batch small writes).
    remote: bool = False
    #: Whether opening it created the store (it was empty or missing).
    created: bool = False

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release what the backend holds (leases, connections). Idempotent."""

    def keep_alive(self) -> None:  # noqa: B027 - optional hook
        """Renew this process's writer lease if it is due (a heartbeat; backends whose leases need none skip it)."""

    # -- objects ---------------------------------------------------------------

    @abc.abstractmethod
    def open_object(self, key: str) -> tuple[BinaryIO, int]:
        """``(reader, size)`` of the stored frame of ``key``; ObjectNotFoundError if absent.

        The reader has ``read(n)`` and ``close()``; ``size`` is the stored
        frame's length, so a reader never reads more than the object holds.
        """

    @abc.abstractmethod
    def new_spool(self, key_hint: str) -> tuple[int, str]:
        """An empty read-write local temp file for a streaming put: ``(fd, name)``.

        ``create_object`` and ``replace_object`` accept ``name`` as the frame.
        """

    @abc.abstractmethod
    def drop_temp(self, name: str) -> None:
        """Remove a spool made by :meth:`new_spool`, quietly."""

    @abc.abstractmethod
    def object_info(self, key: str) -> ObjectInfo | None:
        """Size and age of ``key``, or ``None`` when it is not stored."""

    @abc.abstractmethod
    def create_object(self, key: str, frame: bytes | str) -> bool:
        """Store a frame (bytes, or the path of a local file holding it) if ``key`` is absent.

        Returns:
            True if this call created the object; False if one already
            existed (it is left untouched).
        """

    @abc.abstractmethod
    def replace_object(self, key: str, frame: bytes | str) -> None:
        """Replace a damaged object with a good frame, keeping the damaged bytes in quarantine."""

    @abc.abstractmethod
    def touch_object(self, key: str) -> None:
        """Make ``key`` young again for gc's grace period."""

    @abc.abstractmethod
    def list_objects(self) -> Iterator[ObjectInfo]:
        """Every stored object, sorted by key."""

    @abc.abstractmethod
    def stray_entries(self) -> list[str]:
        """Entries under ``objects/`` that are not object names, as store-relative paths."""

    @abc.abstractmethod
    def delete_object(self, key: str) -> bool:
        """Delete ``key``; returns whether it existed. Only gc calls this, under ``exclusive_guard``."""

    @abc.abstractmethod
    def quarantine_object(self, key: str) -> str | None:
        """Move ``key`` aside into quarantine; returns where it went, or None if it was gone."""

    @abc.abstractmethod
    def quarantine_count(self) -> int:
        """How many entries quarantine holds."""

    @abc.abstractmethod
    def temp_entries(self) -> list[tuple[str, float]]:
        """Leftovers of interrupted writes as ``(store-relative path, mtime)``."""

    @abc.abstractmethod
    def delete_temp(self, path: str) -> None:
        """Remove one leftover listed by :meth:`temp_entries`."""

    @abc.abstractmethod
    def now(self) -> float:
        """The current time on the storage's clock (see ``ObjectInfo.mtime``)."""

    # -- mutual exclusion ------------------------------------------------------------

    @abc.abstractmethod
    def writer_guard(self) -> contextlib.AbstractContextManager[None]:
        """Held around an operation that relies on an object staying stored."""

    @abc.abstractmethod
    def exclusive_guard(self, timeout: float, *, beside_writers: bool = False
                        ) -> contextlib.AbstractContextManager[Callable[[], None]]:
        """Held by gc and quarantine; yields ``check()``, which raises LockError if the guard was lost.

        ``beside_writers`` (gc): exclude operations in progress and other gcs,
        but do not wait for other processes' writer leases to end.
        """

    @abc.abstractmethod
    def writer_leases(self) -> list[WriterLease]:
        """The live writer leases of other processes (this backend's own is left out)."""

    @abc.abstractmethod
    def release_dead_leases(self) -> list[str]:
        """Remove the leases whose holders are gone (only gc calls it, under its guard); their names."""

    # -- refs ------------------------------------------------------------------

    @abc.abstractmethod
    def read_ref(self, name: str) -> bytes | None:
        """The bytes of ref ``name`` (capped), or None when it does not exist."""

    @abc.abstractmethod
    def swap_ref(self, name: str, expected: Any, new: bytes | None) -> bytes | None:
        """Set (``new`` bytes) or delete (``None``) ref ``name`` if it holds ``expected``.

        ``expected`` is the bytes the ref must hold, ``None`` for "must not
        exist", or :data:`ANY`. Raises RefConflictError otherwise.

        Returns:
            The bytes the ref held just before this change (None: it did not
            exist), for the ref log.
        """

    @abc.abstractmethod
    def ref_names(self) -> list[str]:
        """Every valid ref name, sorted."""

    # -- journals --------------------------------------------------------------

    @abc.abstractmethod
    def journal_writer(self, name: str, has: Callable[[str], bool], *, create: bool, timeout: float) -> Any:
        """The single writer of journal ``name`` (see :class:`store.journal.JournalWriterBase`)."""

    @abc.abstractmethod
    def read_journal_bytes(self, name: str, cap: int) -> bytes:
        """The journal's bytes, as one file would hold them; JournalError if absent."""

    @abc.abstractmethod
    def journal_names(self) -> list[str]:
        """Every journal name, sorted."""

    @abc.abstractmethod
    def delete_journal(self, name: str, timeout: float) -> bool:
        """Delete a journal no writer holds (or a non-journal entry in its place); returns whether it existed."""

    def special_journal(self, name: str) -> str | None:
        """What stands where journal ``name`` belongs if it cannot be a journal (a link, a FIFO...), else None.

        Only a folder-based backend can hold such an entry; the default says None.
        """
        return None

    @abc.abstractmethod
    def import_journal(self, name: str, data: bytes) -> None:
        """Create journal ``name`` holding ``data`` (a copy of another store's journal)."""

    # -- the ref log (store.reflog) ---------------------------------------------------

    @abc.abstractmethod
    def create_log_entry(self, seq: int, data: bytes) -> bool:
        """Create ref log entry ``seq`` holding ``data`` if no entry ``seq`` exists; returns whether it did.

        Durable when it returns True; an existing entry is never replaced.
        """

    @abc.abstractmethod
    def read_log_entry(self, seq: int, cap: int) -> bytes | None:
        """The bytes of ref log entry ``seq`` (at most ``cap``), or None when it does not exist."""

    @abc.abstractmethod
    def log_seqs(self, start: int = 0, limit: int | None = None) -> list[int]:
        """The ref log's sequence numbers from ``start`` on, ascending, at most ``limit``."""

    @abc.abstractmethod
    def last_log_seq(self) -> int | None:
        """The highest ref log sequence number stored, or None when the log is empty."""

    @abc.abstractmethod
    def log_stray_entries(self) -> list[str]:
        """Entries under ``reflog/`` that are not entry names, as store-relative paths."""

    # -- what the store may do --------------------------------------------------------

    def write_probe(self) -> str | None:
        """Whether these credentials may write: None if so, else a short reason (``"PutObject denied"``).

        Never changes the store. The default says writable.
        """
        return None

    def describe_history(self) -> list[str]:
        """Lines saying what keeps this store's history (versioning, Object Lock), for ``store info``."""
        return []
