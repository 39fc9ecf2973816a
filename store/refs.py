"""Named refs: small entries that each hold one object key, with compare-and-swap.

A ref is how a caller keeps an object alive across gc (gc marks from every
ref) and finds it again by name. Every update is atomic: a reader sees the
old key or the new one. :meth:`Refs.set` is last-writer-wins, as it always
was; :meth:`Refs.compare_and_swap` changes a ref only if it still holds the
key the caller read, so two writers never lose an update: the loser gets
:class:`~store.errors.RefConflictError` (and may re-read and retry, which
:meth:`Refs.update` does). Locally the swap holds ``refs.lock``; on S3 it is
a conditional request (``If-Match`` on the ETag, ``If-None-Match: *`` to
create).

Every change is appended to the store's ref log (:mod:`store.reflog`) right
after it is made: old key, new key, time, ``user@host`` and the run, so a
ref's history stays visible and attributable (:meth:`Refs.history`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from .backend import ANY, Backend
from .errors import ObjectNotFoundError, RefConflictError, RefError, StoreLayoutError
from .keys import validate_key, validate_ref_name
from .reflog import RefLog, RefLogEntry


def _encode(key: str) -> bytes:
    return (key + "\n").encode("ascii")


class Refs:
    """The refs of one store.

    Args:
        backend: where the refs live.
        has: tells whether an object is stored; a ref may only point at an
            object that is already durable in the store.
        guard: the writer guard, held while a ref comes to point at an object
            (so gc cannot delete the object in between).
    """

    def __init__(self, backend: Backend, has: Callable[[str], bool],
                 guard: Callable[[], contextlib.AbstractContextManager[None]]) -> None:
        self._backend = backend
        self._has = has
        self._guard = guard
        self.log = RefLog(backend)

    def set(self, name: str, key: str) -> None:
        """Point ``name`` at ``key``, atomically and durably (last writer wins).

        Raises:
            InvalidNameError / InvalidKeyError: before anything is written.
            ObjectNotFoundError: ``key`` is not stored (put it first).
            StoreIOError: the update failed; the ref keeps its old value.
        """
        self._swap(name, ANY, key)

    def compare_and_swap(self, name: str, expected: str | None, new: str | None) -> None:
        """Change ``name`` from ``expected`` to ``new`` only if it still holds ``expected``.

        Args:
            name: the ref.
            expected: the key it must hold now, or ``None``: it must not exist.
            new: the key to store, or ``None`` to delete the ref.

        Raises:
            RefConflictError: the ref holds something else (nothing changed).
            ObjectNotFoundError: ``new`` is not stored.
        """
        if expected is not None:
            validate_key(expected)
        self._swap(name, None if expected is None else _encode(expected), new)

    def update(self, name: str, change: Callable[[str | None], str | None], *, attempts: int = 16) -> str | None:
        """Read-modify-write ``name`` with ``change(old) -> new`` until no other writer interferes.

        Returns:
            The value written. Raises the last RefConflictError after ``attempts``.
        """
        for attempt in range(attempts):
            old = self.get(name) if name in self else None
            new = change(old)
            try:
                self.compare_and_swap(name, old, new)
                return new
            except RefConflictError:
                if attempt == attempts - 1:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _swap(self, name: str, expected: object, new: str | None) -> None:
        validate_ref_name(name)
        if new is None:
            old = self._backend.swap_ref(name, expected, None)
        else:
            validate_key(new)
            with self._guard():
                if not self._has(new):
                    raise ObjectNotFoundError(new)
                old = self._backend.swap_ref(name, expected, _encode(new))
        self._log(name, old, new)

    def _log(self, name: str, old_bytes: bytes | None, new: str | None) -> None:
        """Append the change to the ref log (nothing for a no-op: same key, or deleting nothing)."""
        old: str | None
        if old_bytes is None:
            old = None
        else:
            try:
                old = _parse(name, old_bytes)
            except RefError:
                old = None  # the ref held no valid key: the log records the change from nothing
        if old == new and (old is not None or old_bytes is None):
            return
        self.log.append(name, old, new)

    def history(self, name: str) -> list[RefLogEntry]:
        """Every logged change of ``name``, oldest first (reads the whole log)."""
        from .errors import RefLogError

        validate_ref_name(name)
        return [e for e in self.log.entries() if not isinstance(e, RefLogError) and e.ref == name]

    def adopt(self, name: str, logged: str | None = None) -> RefLogEntry | None:
        """Record the current value of ``name`` in the ref log with the note ``adopted`` (a ref made around it).

        Args:
            name: the ref.
            logged: the value its last ref log entry says (None: it has none,
                or it says deleted); the entry records the change from it, so
                a ref deleted around the log is adopted as deleted.

        Returns the entry, or None when there is nothing to record (the ref
        holds ``logged``, or neither exists).
        """
        raw = self._backend.read_ref(validate_ref_name(name))
        value = None if raw is None else _parse(name, raw)
        if value == logged:
            return None
        return self.log.append(name, logged, value, note="adopted")

    def get(self, name: str) -> str:
        """The key ``name`` points at.

        Raises:
            RefError: no such ref, or it does not hold one valid key.
            StoreLayoutError: the ref is a link or a special file (never followed).
        """
        raw = self._backend.read_ref(validate_ref_name(name))
        if raw is None:
            raise RefError(name, "no such ref")
        return _parse(name, raw)

    def __contains__(self, name: object) -> bool:
        try:
            return self._backend.read_ref(validate_ref_name(name)) is not None
        except (ValueError, StoreLayoutError):
            return False

    def exists(self, name: str) -> bool:
        """Whether anything stands at ref ``name``, readable or not (a ref over the size cap, a link...)."""
        try:
            return self._backend.read_ref(validate_ref_name(name)) is not None
        except StoreLayoutError:
            return True

    def delete(self, name: str) -> bool:
        """Remove ``name``; returns whether it existed. The object itself stays until gc.

        A ref that cannot be read (larger than the cap, a link or special
        file) is removed as it is, never followed.
        """
        if not self.exists(name):
            return False
        old = self._backend.swap_ref(validate_ref_name(name), ANY, None)
        self._log(name, old, None)
        return old is not None

    def names(self) -> list[str]:
        """Every ref name, sorted. Temp files and invalid names are skipped."""
        return self._backend.ref_names()

    def items(self) -> Iterator[tuple[str, str]]:
        """``(name, key)`` for every ref, sorted by name.

        Raises:
            RefError: a ref is malformed (gc must not guess what it meant).
        """
        for name in self.names():
            try:
                yield name, self.get(name)
            except RefError as exc:
                if exc.reason == "no such ref":
                    continue  # deleted since names() listed it
                raise


def _parse(name: str, text: bytes) -> str:
    try:
        key = text.decode("ascii").rstrip("\n")
        return validate_key(key)
    except (UnicodeDecodeError, ValueError):
        raise RefError(name, "file does not hold one valid key") from None


__all__ = ["Refs"]
