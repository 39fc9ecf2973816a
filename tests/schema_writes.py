"""Every JSON document the test suite writes through the atomic writer is checked against its schema.

:func:`install` wraps :func:`emberbench.io.atomic.atomic_write_bytes` (the one
writer every EMBERBench file goes through) for the whole test session. The
wrapper writes exactly as before and keeps the bytes of the last document
written to each path (for a viewer page, the JSON document it embeds);
after each test, :meth:`WriteCheck.check` validates those whose format it
recognizes by its version field (the schemas' ``x-emberbench.detect``), so a
schema that disagrees with a writer fails the test that wrote the file,
naming the path and the first errors.

Cost is kept small: a path rewritten many times in one test (a result saved
after every episode) is checked once, in its final form, and a document
already seen in this session (same bytes) is not checked again.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any

MAX_CHECKED_BYTES = 64 << 20
"""Larger documents are written but not checked (no test writes one today)."""

EMBEDDED = re.compile(rb'<script type="application/json" id="emberbench-data">(.*?)</script>', re.S)
"""Where a viewer page holds its data document."""


class WriteCheck:
    """Collects documents written during a test and validates them afterwards."""

    def __init__(self) -> None:
        self.pending: dict[str, bytes | None] = {}
        self.seen: set[bytes] = set()
        self.checked = 0
        self.seconds = 0.0
        self.installed = False

    def wrap(self, original: Any) -> Any:
        """Return a writer that calls ``original`` and remembers what it wrote."""

        def atomic_write_bytes(path: Any, data: bytes | Iterable[bytes]) -> None:
            if isinstance(data, (bytes, bytearray, memoryview)):
                original(path, data)
                self.note(path, bytes(data))
                return
            kept: list[bytes] = []
            size = [0]

            def tee() -> Iterator[bytes]:
                for chunk in data:
                    size[0] += len(chunk)
                    if size[0] <= MAX_CHECKED_BYTES:
                        kept.append(bytes(chunk))
                    yield chunk

            original(path, tee())
            self.note(path, b"".join(kept) if size[0] <= MAX_CHECKED_BYTES else None)

        atomic_write_bytes.__wrapped__ = original  # type: ignore[attr-defined]
        atomic_write_bytes.__doc__ = original.__doc__
        return atomic_write_bytes

    def note(self, path: Any, data: bytes | None) -> None:
        """Remember the last document written to ``path`` (None: too large to check)."""
        if data is not None and data.lstrip()[:1] != b"{":
            found = EMBEDDED.search(data) if b"emberbench-data" in data else None
            if found is None:
                return
            data = found.group(1)
        self.pending[str(path)] = data

    def check(self) -> list[str]:
        """Validate the documents written since the last call; return one message per invalid one."""
        from tests.schema_check import check_document

        problems = []
        pending, self.pending = self.pending, {}
        start = time.perf_counter()
        for path, data in pending.items():
            if data is None:
                continue
            key = hashlib.sha256(data).digest()
            if key in self.seen:
                continue
            self.seen.add(key)
            try:
                document = json.loads(data)
            except ValueError:
                continue  # not JSON after all (a test writing arbitrary bytes)
            entry, errors = check_document(document)
            if entry is not None:
                self.checked += 1
            if errors:
                problems.append(f"{path} ({entry.format}): " + "; ".join(errors[:5]))
        self.seconds += time.perf_counter() - start
        return problems


CHECK = WriteCheck()


def install() -> None:
    """Wrap the atomic writer in :mod:`emberbench.io.atomic` and in every module already bound to it."""
    if CHECK.installed:
        return
    import emberbench.io.atomic as atomic

    original = atomic.atomic_write_bytes
    wrapper = CHECK.wrap(original)
    atomic.atomic_write_bytes = wrapper
    for name, module in list(sys.modules.items()):
        if name.startswith(("emberbench", "tests")) and getattr(module, "atomic_write_bytes", None) is original:
            module.atomic_write_bytes = wrapper
    CHECK.installed = True
