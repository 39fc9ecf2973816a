"""A generic content-addressed store: bytes in, SHA-256 keys out.

Objects are immutable, framed and checksummed; many processes (and machines)
can write at once. Refs name objects (with compare-and-swap); run journals
record work in progress with one small durable entry per step; gc and fsck
maintain the store. Two backends share every format and protocol: a local
folder and S3-compatible object storage. The package knows nothing of what
the bytes mean. See docs/store.md.

Typical use::

    store = open_store("s3://bucket/prefix" or path, create=True)
    key = store.put(data)                   # durable when it returns
    assert store.get(key) == data           # frame + checksum checked
    with store.open_journal(journal_name(manifest_hash, model_id)) as journal:
        journal.append({"index": 0, "digest": key}, keys=[key])
        ...
        store.refs.set("results/name", result_key)
        journal.finish({"result": result_key}, keys=[result_key])
"""

from __future__ import annotations

from .backend import Backend, ObjectInfo
from .core import DEFAULT_CODEC, Store, open_store
from .errors import (
    IntegrityError,
    InvalidKeyError,
    InvalidNameError,
    JournalCorruptError,
    JournalError,
    KeyMismatchError,
    LocatorError,
    LockError,
    NotLocalStoreError,
    ObjectNotFoundError,
    ObjectTooLargeError,
    ReadOnlyStoreError,
    RefConflictError,
    RefError,
    RefLogError,
    StoreError,
    StoreFormatError,
    StoreIOError,
    StoreLayoutError,
)
from .frame import Codec
from .fsck import CorruptObject, FsckReport, fsck
from .gc import DEFAULT_GRACE_SECONDS, GcReport, gc
from .journal import JournalEntry, JournalState, JournalWriter
from .keys import journal_name, key_of, validate_journal_name, validate_key, validate_ref_name
from .layout import FORMAT_VERSION
from .locator import is_url
from .refs import Refs
from .reflog import RefLogEntry, RefLogReport, check_ref_log
from .roots import Roots, collect_roots

__all__ = [
    "DEFAULT_CODEC",
    "DEFAULT_GRACE_SECONDS",
    "FORMAT_VERSION",
    "Backend",
    "Codec",
    "CorruptObject",
    "FsckReport",
    "GcReport",
    "IntegrityError",
    "InvalidKeyError",
    "InvalidNameError",
    "JournalCorruptError",
    "JournalEntry",
    "JournalError",
    "JournalState",
    "JournalWriter",
    "KeyMismatchError",
    "LocatorError",
    "LockError",
    "NotLocalStoreError",
    "ObjectInfo",
    "ObjectNotFoundError",
    "ObjectTooLargeError",
    "ReadOnlyStoreError",
    "RefConflictError",
    "RefError",
    "RefLogEntry",
    "RefLogError",
    "RefLogReport",
    "Refs",
    "Roots",
    "Store",
    "StoreError",
    "StoreFormatError",
    "StoreIOError",
    "StoreLayoutError",
    "check_ref_log",
    "collect_roots",
    "fsck",
    "gc",
    "is_url",
    "journal_name",
    "key_of",
    "open_store",
    "validate_journal_name",
    "validate_key",
    "validate_ref_name",
]
