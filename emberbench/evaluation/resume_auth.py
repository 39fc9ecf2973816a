"""Authenticating what a run resumes from: journaled records read back from the store.

A journal entry says "episode *i* finished with the record whose SHA-256 is
*d*". Before a resumed run counts episode *i* as done, :func:`verify_stored`
reads record *d* back from the store (frame and blake3 checksum, then SHA-256
against *d*), requires it to be canonical JSON of a record for exactly
manifest entry *i*, replays it, and returns its metrics. Nothing is trusted
from the journal but the digest, and nothing is repaired here: a record that
is missing or fails a store check is reported so that the run plays the
episode again (same input, same digest, same key), and a record that is
intact yet does not authenticate is an integrity failure of the run.

Verdicts are plain tuples so that Ray workers can return them unchanged
(:meth:`emberbench.cluster.RayExecutor.verify_stored` calls this function on
each worker).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..io.canonical import canonical_bytes
from ..errors import RecordAuthenticationError
from ..results.manifest import ManifestEntry
from ..sim.suite import Suite

OK, MISSING, CORRUPT, INVALID = "ok", "missing", "corrupt", "invalid"
StoredItem = tuple[ManifestEntry, str]
"""A journaled episode to check: its manifest entry and its record digest."""
StoredVerdict = tuple[int, str, bytes, int]
"""``(index, status, payload, size)``: when ``status`` is ``ok``, the canonical metrics bytes and the
record's length; otherwise the reason (UTF-8) and 0."""


def verify_stored(store: Any, suite: Suite, items: Iterable[StoredItem]) -> list[StoredVerdict]:
    """Read back, check and replay each journaled record; one verdict per item, in order.

    Statuses: ``ok`` (payload: the canonical metrics JSON), ``missing`` (no
    such object), ``corrupt`` (the object fails its frame, checksum or SHA-256
    check), ``invalid`` (intact, but not a canonical record of that manifest
    entry, or it does not reproduce under replay).
    """
    from emberbench.store import IntegrityError, ObjectNotFoundError

    from ..io.canonical import CanonicalFormError, parse_json_strict
    from ..records.episode import authenticate

    out: list[StoredVerdict] = []
    for entry, digest in items:
        try:
            raw = store.get(digest, verify_data=True)
        except ObjectNotFoundError:
            out.append((entry.index, MISSING, b"not in the store", 0))
            continue
        except IntegrityError as exc:
            out.append((entry.index, CORRUPT, exc.reason.encode(), 0))
            continue
        where = f"record {digest}"
        try:
            record = parse_json_strict(raw, where=where)
            if canonical_bytes(record) != raw:
                raise RecordAuthenticationError(f"{where}: not in canonical JSON form", field="text")
            metrics = authenticate(record, suite)
            check_record_entry(record, entry, where)
        except (RecordAuthenticationError, CanonicalFormError) as exc:
            out.append((entry.index, INVALID, str(exc).encode(), 0))
            continue
        out.append((entry.index, OK, canonical_bytes(metrics.to_dict()), len(raw)))
    return out


def check_record_entry(record: dict[str, Any], entry: ManifestEntry, where: str) -> None:
    """The (authenticated) record must be the one of ``entry``: same scenario id, scenario hash and seed."""
    header = record["header"]
    for name in ("scenario_id", "scenario_hash", "seed"):
        if header[name] != getattr(entry, name):
            raise RecordAuthenticationError(
                f"{where}: header {name} {header[name]!r} is not manifest entry {entry.index}'s "
                f"{getattr(entry, name)!r}", field=f"header.{name}")


def encode_items(items: Iterable[StoredItem]) -> list[list[Any]]:
    """Items as plain lists (for a Ray call)."""
    return [[e.index, e.scenario_id, e.scenario_hash, e.seed, digest] for e, digest in items]


def decode_items(rows: Iterable[list[Any]]) -> list[StoredItem]:
    """Inverse of :func:`encode_items`."""
    return [(ManifestEntry(index, sid, shash, seed), digest) for index, sid, shash, seed, digest in rows]


__all__ = ["CORRUPT", "INVALID", "MISSING", "OK", "StoredItem", "StoredVerdict", "check_record_entry", "decode_items",
           "encode_items", "verify_stored"]
