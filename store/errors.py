"""Every error the store raises on purpose, rooted at :class:`StoreError`.

The store is generic and imports nothing from EMBERBench, so it has its own
root. Each class also derives from the built-in it resembles where one fits
(``InvalidKeyError`` is a ``ValueError``, ``ObjectNotFoundError`` a
``KeyError``), so narrow ``except`` clauses keep working. Errors carry the data
a caller needs to act: the key, the path, the offset, the versions involved.
"""

from __future__ import annotations

import re


class StoreError(Exception):
    """Root of every error the store raises deliberately.

    Every subclass survives pickling with its message and attributes (a store
    used in another process, such as a Ray worker, sends its errors back
    pickled); the default, calling the class again with ``args``, fails for
    constructors like :class:`StoreIOError`'s.
    """

    def __str__(self) -> str:
        # KeyError would otherwise quote the message; one plain line reads best.
        return str(self.args[0]) if self.args else self.__class__.__name__

    def __reduce__(self):  # noqa: ANN204 - pickle's protocol
        return (_rebuild, (type(self), self.args, dict(vars(self))))


def _rebuild(cls: type[StoreError], args: tuple[object, ...], state: dict[str, object]) -> StoreError:
    """An error of ``cls`` with these ``args`` and attributes, its constructor not called again."""
    error = cls.__new__(cls, *args)
    error.args = args
    vars(error).update(state)
    return error


class InvalidKeyError(StoreError, ValueError):
    """A key is not 64 lowercase hex digits (checked before any path is built)."""

    def __init__(self, key: object) -> None:
        super().__init__(f"invalid object key {key!r}: expected 64 lowercase hex digits")
        self.key = key


class InvalidNameError(StoreError, ValueError):
    """A ref or journal name does not match the allowed pattern."""

    def __init__(self, kind: str, name: object, rule: str) -> None:
        super().__init__(f"invalid {kind} name {name!r}: {rule}")
        self.kind = kind
        self.name = name


class StoreFormatError(StoreError, ValueError):
    """The store folder is missing, not a store, or has an unknown format version."""

    def __init__(self, message: str, *, path: str, found: object = None, supported: object = None) -> None:
        super().__init__(message)
        self.path = path
        self.found = found
        self.supported = supported


class ObjectNotFoundError(StoreError, KeyError):
    """No object is stored under the key."""

    def __init__(self, key: str) -> None:
        super().__init__(f"object {key} is not in the store")
        self.key = key


class IntegrityError(StoreError, ValueError):
    """A stored object fails its frame, checksum, key or content check.

    The object's bytes are never returned to the caller.

    Attributes:
        key: the key that was read.
        reason: what failed, in a few words (``"checksum mismatch"``...).
        path: the file that holds the damaged object, if any.
    """

    def __init__(self, key: str, reason: str, *, path: str | None = None) -> None:
        super().__init__(f"object {key} is corrupt: {reason}")
        self.key = key
        self.reason = reason
        self.path = path


class ObjectTooLargeError(StoreError, ValueError):
    """An object holds more bytes than the reader takes (``Store.get(..., max_length=)``); none were read.

    Attributes:
        key: the key that was read.
        length: its raw length, as its frame header gives it.
        cap: the most the reader takes.
    """

    def __init__(self, key: str, length: int, cap: int) -> None:
        super().__init__(f"object {key} holds {length} bytes, more than the {cap} this reader takes")
        self.key = key
        self.length = length
        self.cap = cap


class KeyMismatchError(IntegrityError):
    """Bytes given to ``put`` do not hash to the key the caller expected."""

    def __init__(self, expected: str, actual: str) -> None:
        super().__init__(expected, f"content hashes to {actual}")
        self.expected = expected
        self.actual = actual


class StoreIOError(StoreError):
    """A write, fsync, link or rename failed; the operation did not happen.

    Never retried silently: the caller decides. The original ``OSError`` is
    chained as ``__cause__``.

    Attributes:
        operation: the step that failed (``"write"``, ``"fsync"``, ``"link"``...).
        path: the file or folder involved.
        errno: the ``errno`` of the underlying failure, if any.
        key: the object key involved, if any.
    """

    def __init__(
        self, operation: str, path: str, cause: OSError, *, key: str | None = None
    ) -> None:
        what = f" of object {key}" if key else ""
        super().__init__(f"store {operation}{what} failed at {path}: {cause.strerror or cause}")
        self.operation = operation
        self.path = path
        self.errno = cause.errno
        self.key = key


class RefError(StoreError, ValueError):
    """A ref file is missing, malformed, or names an object that is not stored."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"ref {name!r}: {reason}")
        self.name = name
        self.reason = reason


class JournalError(StoreError):
    """A run journal cannot be opened, read or appended to."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"journal {name!r}: {reason}")
        self.name = name
        self.reason = reason


class JournalCorruptError(JournalError, ValueError):
    """A journal is damaged before its last entry; nothing is repaired.

    Attributes:
        offset: byte offset of the first entry that fails its checks.
    """

    def __init__(self, name: str, offset: int, reason: str) -> None:
        super().__init__(name, f"corrupt entry at byte {offset} before the end: {reason}")
        self.offset = offset


class LockError(StoreError):
    """A lock (a journal's writer lock, or the gc lock) could not be taken."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"cannot lock {path}: {reason}")
        self.path = path
        self.reason = reason


class RefConflictError(RefError):
    """A compare-and-swap on a ref lost: the ref no longer holds the expected key.

    Attributes:
        expected: the key the caller expected (``None``: expected no ref).
        actual: the key found (``None``: no ref).
    """

    def __init__(self, name: str, expected: str | None, actual: str | None) -> None:
        want = expected or "no ref"
        found = actual or "no ref"
        super().__init__(name, f"conflict: expected {want}, found {found} (another writer updated it)")
        self.expected = expected
        self.actual = actual


class StoreLayoutError(StoreFormatError):
    """The store's folders hold a symbolic link, a special file or a foreign entry.

    The store never follows a link inside itself: a link could point reads and
    writes outside the store (or a shared store at another user's files).
    """

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"refusing store entry {path}: {reason}", path=path)
        self.reason = reason


_USERINFO_RE = re.compile(r"(://|%3A%2F%2F)[^/?#&\s]*?(@|%40)", re.IGNORECASE)


def redact_locator(locator: str) -> str:
    """``locator`` with any user name and password in a URL inside it replaced by ``***``.

    A locator never holds a credential (one that does is refused), but the
    refusal must not repeat it: ``s3://b/p?endpoint=http://user:pw@host``
    is shown as ``s3://b/p?endpoint=http://***@host`` (percent-encoded forms too).
    """
    return _USERINFO_RE.sub(lambda m: f"{m.group(1)}***{m.group(2)}", str(locator))


class LocatorError(StoreError, ValueError):
    """A store locator (a folder path or an ``s3://`` URL) cannot be used.

    The message and ``locator`` never repeat a user name or password found
    in it (see :func:`redact_locator`).
    """

    def __init__(self, locator: str, reason: str) -> None:
        shown = redact_locator(locator)
        super().__init__(f"store {shown!r}: {reason}")
        self.locator = shown
        self.reason = reason



class ReadOnlyStoreError(StoreError, PermissionError):
    """A write was asked of a store opened read-only (or whose credentials cannot write).

    Attributes:
        store: the store's name (its locator, which holds no secret).
        operation: what was refused (``"put"``, ``"update ref"``, ``"append to journal"``...).
        reason: why the store is read-only (``"opened with --read-only"``, ``"PutObject denied"``...).
    """

    def __init__(self, store: str, operation: str, reason: str) -> None:
        super().__init__(f"store {store} is read-only ({reason}): {operation} refused")
        self.store = store
        self.operation = operation
        self.reason = reason


class RefLogError(StoreError, ValueError):
    """An entry of the ref log cannot be read, is malformed, or breaks the log's chain.

    Attributes:
        seq: the entry's sequence number (-1 when no single entry is at fault).
        reason: what is wrong.
    """

    def __init__(self, seq: int, reason: str) -> None:
        where = f"entry {seq}" if seq >= 0 else "the log"
        super().__init__(f"ref log {where}: {reason}")
        self.seq = seq
        self.reason = reason


class NotLocalStoreError(StoreError, AttributeError):
    """A local-folder-only property (``root``, ``layout``) was asked of a store on another backend.

    It is an ``AttributeError`` too, so ``getattr(store, "root", None)`` still
    answers None for an S3 store.
    """

    def __init__(self, locator: str, what: str) -> None:
        super().__init__(f"store {locator} is not a local folder: it has no {what} (use its locator)")
        self.locator = locator
        self.what = what
