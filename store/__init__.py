"""A generic content-addressed store: bytes in, SHA-256 keys out.

Objects are immutable, framed and checksummed files that many processes (and
machines sharing a filesystem) can write at once. Refs name objects; run
journals record work in progress with one small fsynced entry per step; gc and
fsck maintain the store. The package knows nothing of what the bytes mean.
See docs/store.md.

Typical use::

    store = Store.open(path, create=True)
    key = store.put(data)                   # durable when it returns
    assert store.get(key) == data           # frame + checksum checked
    with store.open_journal(journal_name(manifest_hash, model_id)) as journal:
        journal.append({"index": 0, "digest": key}, keys=[key])
        ...
        store.refs.set("results/name", result_key)
        journal.finish({"result": result_key}, keys=[result_key])
"""

from __future__ import annotations

from .disk import DEFAULT_CODEC, Store
from .errors import (
    IntegrityError,
    InvalidKeyError,
    InvalidNameError,
    JournalCorruptError,
    JournalError,
    KeyMismatchError,
    LockError,
    ObjectNotFoundError,
    RefError,
    StoreError,
    StoreFormatError,
    StoreIOError,
)
from .frame import Codec
from .fsck import CorruptObject, FsckReport, fsck
from .gc import DEFAULT_GRACE_SECONDS, GcReport, gc
from .journal import JournalEntry, JournalState, JournalWriter
from .keys import journal_name, key_of, validate_journal_name, validate_key, validate_ref_name
from .layout import FORMAT_VERSION
from .refs import Refs
from .roots import Roots, collect_roots

__all__ = [
    "DEFAULT_CODEC",
    "DEFAULT_GRACE_SECONDS",
    "FORMAT_VERSION",
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
    "LockError",
    "ObjectNotFoundError",
    "RefError",
    "Refs",
    "Roots",
    "Store",
    "StoreError",
    "StoreFormatError",
    "StoreIOError",
    "collect_roots",
    "fsck",
    "gc",
    "journal_name",
    "key_of",
    "validate_journal_name",
    "validate_key",
    "validate_ref_name",
]
