"""A read-only view of a backend: every read passes through, every write is refused before it starts.

``open_store(locator, read_only=True)`` wraps the backend in
:class:`ReadOnlyBackend`. Reads (objects, refs, journals, the ref log,
listings) reach the real backend unchanged; each method that could change
the store (a put, a ref update, a journal append or delete, quarantine, a
lease, even a local spool file in ``tmp/``) raises
:class:`~store.errors.ReadOnlyStoreError` without touching it. On S3 no lease
is ever taken, so a read-only process leaves no trace in the bucket.

The same wrapper serves credentials that cannot write: the caller probes
with :meth:`store.backend.Backend.write_probe` (which never writes) and opens
read-only with the reason it gave.
"""

from __future__ import annotations

import contextlib
from typing import Any, NoReturn

from .backend import Backend
from .errors import ReadOnlyStoreError

#: Methods of a backend that change the store, each with the words a refusal uses.
WRITES = {
    "create_object": "put an object",
    "replace_object": "replace an object",
    "touch_object": "refresh an object",
    "write_temp": "write a temp file",
    "new_spool": "spool a put",
    "delete_object": "delete an object",
    "quarantine_object": "quarantine an object",
    "delete_temp": "delete a temp file",
    "swap_ref": "update a ref",
    "journal_writer": "open a journal for writing",
    "delete_journal": "delete a journal",
    "import_journal": "import a journal",
    "create_log_entry": "append to the ref log",
    "exclusive_guard": "take the gc lock",
    "writer_guard": "take a writer lease",
    "release_dead_leases": "remove dead writer leases",
}


class ReadOnlyBackend(Backend):
    """Wraps a backend so that it can only be read (see the module docstring).

    Args:
        inner: the real backend.
        reason: why the store is read-only, for messages (``"opened read-only"``, ``"PutObject denied"``).
    """

    probe_first = True

    def __init__(self, inner: Backend, reason: str) -> None:
        self.inner = inner
        self.reason = reason
        self.locator = inner.locator
        self.remote = inner.remote

    def __getattr__(self, name: str) -> Any:
        if name in WRITES:
            return lambda *args, **kwargs: self._refuse(name)
        return getattr(self.inner, name)

    def _refuse(self, method: str) -> NoReturn:
        raise ReadOnlyStoreError(getattr(self.inner, "name", self.locator), WRITES[method], self.reason)

    def close(self) -> None:
        self.inner.close()

    # -- reads: passed through --------------------------------------------------------

    def open_object(self, key):  # noqa: ANN001, ANN201
        return self.inner.open_object(key)

    def object_info(self, key):  # noqa: ANN001, ANN201
        return self.inner.object_info(key)

    def list_objects(self):  # noqa: ANN201
        return self.inner.list_objects()

    def stray_entries(self):  # noqa: ANN201
        return self.inner.stray_entries()

    def quarantine_count(self):  # noqa: ANN201
        return self.inner.quarantine_count()

    def temp_entries(self):  # noqa: ANN201
        return self.inner.temp_entries()

    def now(self):  # noqa: ANN201
        return self.inner.now()

    def read_ref(self, name):  # noqa: ANN001, ANN201
        return self.inner.read_ref(name)

    def ref_names(self):  # noqa: ANN201
        return self.inner.ref_names()

    def read_journal_bytes(self, name, cap=None):  # noqa: ANN001, ANN201
        return self.inner.read_journal_bytes(name) if cap is None else self.inner.read_journal_bytes(name, cap)

    def journal_names(self):  # noqa: ANN201
        return self.inner.journal_names()

    def special_journal(self, name):  # noqa: ANN001, ANN201
        return self.inner.special_journal(name)

    def read_log_entry(self, seq, cap):  # noqa: ANN001, ANN201
        return self.inner.read_log_entry(seq, cap)

    def log_seqs(self, start=0, limit=None):  # noqa: ANN001, ANN201
        return self.inner.log_seqs(start, limit)

    def last_log_seq(self):  # noqa: ANN201
        return self.inner.last_log_seq()

    def log_stray_entries(self):  # noqa: ANN201
        return self.inner.log_stray_entries()

    def write_probe(self) -> str | None:
        return self.reason

    def describe_history(self) -> list[str]:
        return self.inner.describe_history()

    # -- writes: refused ----------------------------------------------------------------

    def new_spool(self, key_hint):  # noqa: ANN001, ANN201
        self._refuse("new_spool")

    def drop_temp(self, name: str) -> None:
        return None

    def create_object(self, key, frame):  # noqa: ANN001, ANN201
        self._refuse("create_object")

    def replace_object(self, key, frame):  # noqa: ANN001, ANN201
        self._refuse("replace_object")

    def touch_object(self, key):  # noqa: ANN001, ANN201
        self._refuse("touch_object")

    def delete_object(self, key):  # noqa: ANN001, ANN201
        self._refuse("delete_object")

    def quarantine_object(self, key):  # noqa: ANN001, ANN201
        self._refuse("quarantine_object")

    def delete_temp(self, path):  # noqa: ANN001, ANN201
        self._refuse("delete_temp")

    def writer_guard(self) -> contextlib.AbstractContextManager[None]:
        self._refuse("writer_guard")

    def exclusive_guard(self, timeout, *, beside_writers=False):  # noqa: ANN001, ANN201
        self._refuse("exclusive_guard")

    def writer_leases(self):  # noqa: ANN201
        return self.inner.writer_leases()

    def release_dead_leases(self):  # noqa: ANN201
        self._refuse("release_dead_leases")

    def keep_alive(self) -> None:
        """Nothing to renew: a read-only store holds no lease."""

    def swap_ref(self, name, expected, new):  # noqa: ANN001, ANN201
        self._refuse("swap_ref")

    def journal_writer(self, name, has, *, create, timeout):  # noqa: ANN001, ANN201
        self._refuse("journal_writer")

    def delete_journal(self, name, timeout):  # noqa: ANN001, ANN201
        self._refuse("delete_journal")

    def import_journal(self, name, data):  # noqa: ANN001, ANN201
        self._refuse("import_journal")

    def create_log_entry(self, seq, data):  # noqa: ANN001, ANN201
        self._refuse("create_log_entry")


__all__ = ["WRITES", "ReadOnlyBackend"]
