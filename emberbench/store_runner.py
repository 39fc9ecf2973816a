"""Running with the content-addressed store: records stored once, completions journaled.

Each finished episode costs one record object (written once, keyed by its
SHA-256, which is the artifact's ``record_digest``) and one small fsynced
journal entry ``{"index", "digest", "metrics"}``. Resume reads the journal, not
the artifact. The artifact is assembled by streaming the stored canonical
record bytes in manifest order; it is written atomically at checkpoints and at
the end, and once complete it is also stored as an object under the ref
``results/<journal name>`` and the journal is finished.

This module is imported only when a store is used, so the core does not
import ``store`` at module level.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .atomic import atomic_write_bytes
from .canonical import canonical_bytes, parse_json_strict
from .errors import ResultError, StoreUsageError
from .manifest import EvaluationManifest
from .results import artifact_chunks, episode_chunk, load_result
from .suite import Suite

TAIL_MARKER = b'],"evaluation_manifest_hash":"'


def result_ref_name(manifest_hash: str, model_id: str) -> str:
    """The ref under which a complete artifact of (manifest, model) is stored."""
    from emberbench.store import journal_name

    return f"results/{journal_name(manifest_hash, model_id)}"


def read_artifact_header(path: Path) -> dict[str, Any]:
    """Read an artifact's top-level fields other than ``episodes`` from the end of the file.

    ``episodes`` sorts first in canonical JSON, so everything after the list
    is the header. Inside JSON strings a quote is always escaped, so the
    marker cannot occur inside a record.
    """
    size = path.stat().st_size
    span = 64 * 1024
    with path.open("rb") as handle:
        while True:
            start = max(0, size - span)
            handle.seek(start)
            tail = handle.read()
            pos = tail.rfind(TAIL_MARKER)
            if pos >= 0:
                break
            if start == 0:
                raise ResultError(f"{path}: not a result artifact (no header after the episode list)")
            span *= 4
    try:
        header = parse_json_strict(b"{" + tail[pos + 2:], where=str(path))
    except Exception as exc:  # noqa: BLE001 - any parse problem is the same user error
        raise ResultError(f"{path}: cannot read the artifact header: {exc}") from None
    if not isinstance(header, dict):
        raise ResultError(f"{path}: malformed artifact header")
    return header


class StoreSink:
    """The coordinator's sink when a store is used (see module docstring)."""

    def __init__(self, store: Any, manifest: EvaluationManifest, model_id: str, out: Path, *, resume: bool,
                 every: int, seconds: float, suite: Suite) -> None:
        from emberbench.store import LockError, journal_name

        self.store, self.manifest, self.model_id, self.out = store, manifest, model_id, out
        self.every, self.seconds = every, seconds
        self.name = journal_name(manifest.hash, model_id)
        self.done: dict[int, tuple[str, bytes]] = {}
        self.digest = ""
        from .runner import check_resumable, output_exists

        if output_exists(out, resume):
            header = read_artifact_header(out)
            check_resumable(header.get("evaluation_manifest_hash", ""), header.get("model_id", ""),
                            manifest, model_id, out)
        try:
            self.journal = store.open_journal(self.name, create=True)
        except LockError:
            raise StoreUsageError(
                f"another process is running (manifest {manifest.hash}, model {model_id!r}) on this store"
            ) from None
        for entry in self.journal.entries:
            data = entry.data
            if "index" in data:
                self.done[int(data["index"])] = (str(data["digest"]), bytes(data["metrics"], "ascii"))
        self.finished = self.journal.finished
        # Records are checked (frame and checksum) when the artifact is
        # assembled; here only their presence, so resume stays O(entries).
        lost = store.missing(sorted({digest for digest, _ in self.done.values()}))
        if lost:
            self.journal.close()
            raise StoreUsageError(
                f"the run journal {self.name} references {len(lost)} record(s) missing from the store "
                f"(first {lost[0]}); run `emberbench store fsck`"
            )
        if not self.done and out.exists():
            self._import_artifact(suite)
        self._since = 0
        self._last = time.monotonic()
        if not out.exists():
            self._write_artifact()

    def _import_artifact(self, suite: Suite) -> None:
        """Adopt the episodes of an artifact written without a store (fully authenticated)."""
        existing = load_result(self.out, suite)
        items = []
        for e in existing.episodes:
            key = self.store.put(e.record.canonical_bytes(), key=e.record_digest)
            metrics = canonical_bytes(e.metrics.to_dict())
            items.append(({"index": e.index, "digest": key, "metrics": metrics.decode("ascii")}, [key]))
            self.done[e.index] = (key, metrics)
        if items:
            self.journal.append_many(items)

    def add(self, outcome: Any) -> None:
        if outcome.record_bytes is not None:
            self.store.put(outcome.record_bytes, key=outcome.record_digest)
        elif not self.store.has(outcome.record_digest):
            raise StoreUsageError(f"episode {outcome.index}: record {outcome.record_digest} is not in the store")
        self.journal.append(
            {"index": outcome.index, "digest": outcome.record_digest,
             "metrics": outcome.metrics_bytes.decode("ascii")},
            keys=[outcome.record_digest],
        )
        self.done[outcome.index] = (outcome.record_digest, outcome.metrics_bytes)
        self._since += 1
        due_count = self.every > 0 and self._since >= self.every
        due_time = self.seconds > 0 and time.monotonic() - self._last >= self.seconds
        if due_count or due_time:
            self._write_artifact()

    def _chunks(self) -> Iterator[bytes]:
        for index in sorted(self.done):
            digest, metrics = self.done[index]
            record = self.store.get(digest)
            yield episode_chunk(self.manifest.episodes[index], record, digest, metrics)

    def _write_artifact(self) -> bytes | None:
        """Write the artifact atomically; return its bytes when it is complete."""
        sha = hashlib.sha256()
        complete = len(self.done) == len(self.manifest.episodes)
        kept: list[bytes] = []

        def stream() -> Iterator[bytes]:
            for piece in artifact_chunks(self.manifest, self.model_id, self._chunks()):
                sha.update(piece)
                if complete:
                    kept.append(piece)
                yield piece

        atomic_write_bytes(self.out, stream())
        self.digest = sha.hexdigest()
        self._since = 0
        self._last = time.monotonic()
        return b"".join(kept) if complete else None

    def close(self) -> None:
        try:
            data = self._write_artifact()
            if data is not None and not self.finished:
                from emberbench.store import Codec

                key = self.store.put(data, codec=Codec.ZLIB)
                self.store.refs.set(result_ref_name(self.manifest.hash, self.model_id), key)
                self.journal.finish({"result": key}, keys=[key])
        finally:
            self.journal.close()


def open_store(locator: str | Path, *, create: bool = True) -> Any:
    """Open (or create) the object store at ``locator``: a folder, or ``s3://bucket/prefix[?endpoint=URL]``."""
    from emberbench.store import StoreError
    from emberbench.store import open_store as open_any

    try:
        return open_any(locator, create=create)
    except StoreError as exc:
        raise StoreUsageError(f"cannot open store: {exc}") from None
