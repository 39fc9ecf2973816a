"""The S3 backend: a store under ``s3://bucket/prefix`` on any S3-compatible service.

The keys under the prefix mirror the local layout: ``format``,
``objects/ab/cdef...`` (the same framed bytes as a local object file),
``refs/<name>``, ``journals/<name>/<segment>`` (:mod:`store.s3_journal`),
``quarantine/<key>.<ns>``, and ``leases/`` (:mod:`store.s3_lease`). A store
copied object by object between the backends therefore stays valid.

* Objects are created with ``If-None-Match: *`` (one PUT, or a multipart
  upload completed with the same condition for large spooled objects), so the
  first writer wins and an object is never seen partial (an S3 PUT is atomic).
  A re-put of an existing object compares the ETag with the MD5 of its own
  frame (one HEAD) and only reads the object back when they differ.
* Refs use ``If-Match`` on the ETag (and ``If-None-Match: *`` to create) for
  compare-and-swap; deletes use ``If-Match`` too.
* An object's age is its ``LastModified`` against the server's ``Date``; a
  re-put of an object older than :data:`REFRESH_AGE_SECONDS`, or stamped
  before this process's writer lease was taken, copies it onto itself to
  make it young again (``touch``), so that gc, which runs beside writers,
  keeps it while the lease lives.
* The service must offer conditional writes (AWS S3 since 2024, MinIO, Ceph
  RGW, R2 and the test server do); see docs/store.md.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from .backend import ANY, Backend, ObjectInfo, WriterLease
from .errors import ObjectNotFoundError, RefConflictError, StoreFormatError, StoreLayoutError
from .journal import MAX_JOURNAL_BYTES, JournalWriter
from .keys import validate_journal_name, validate_key, validate_ref_name
from .layout import FORMAT_CAP, FORMAT_FILE, REFLOG_FOLDER, check_format, format_text
from .reflog import parse_seq_name, seq_name
from .s3_history import BucketHistory
from .locator import S3Locator
from .s3_client import (
    CONFLICT,
    PRECONDITION,
    client_errors,
    error_code,
    io_error,
    is_not_found,
    make_client,
    server_time,
)
from .s3_journal import SegmentJournalWriter, delete_segments, import_segments, read_segments
from .s3_lease import Leases

REF_CAP = 1024
REFRESH_AGE_SECONDS = 3600.0
"""A re-put refreshes an object's age only when it is older than this (one copy request)."""
SINGLE_PUT_LIMIT = 64 << 20
PART_SIZE = 16 << 20
_LIST_THRESHOLD = 64


class S3Backend(Backend):
    """A store under one S3 prefix. See the module docstring."""

    probe_first = False  # create first: most puts are of new objects, and a PUT is one request
    remote = True

    def __init__(self, loc: S3Locator, client: Any) -> None:
        self.client = client
        self.bucket = loc.bucket
        self.prefix = f"{loc.prefix}/" if loc.prefix else ""
        endpoint = loc.endpoint
        resolved = getattr(getattr(client, "meta", None), "endpoint_url", None)
        if endpoint is None and resolved and "amazonaws.com" not in resolved:
            endpoint = resolved  # from AWS_ENDPOINT_URL(_S3): carry it so other nodes reach the same service
        self.locator = loc.render(endpoint=endpoint)
        self.name = S3Locator(loc.bucket, loc.prefix).render()  # for messages: no query part
        self.leases = Leases(client, self.bucket, self.prefix, self.name)
        self.history = BucketHistory(client, loc.bucket, loc.retain_days, loc.lock_mode, self.name)

    @classmethod
    def open(cls, loc: S3Locator, *, create: bool = False) -> S3Backend:
        """Open (or create) the store at ``loc``.

        Raises:
            StoreFormatError: no store there (and not ``create``), a non-empty
                prefix that is not a store, or an unknown format version.
        """
        backend = cls(loc, make_client(loc.endpoint, loc.region))
        raw = backend.get_small(backend.prefix + FORMAT_FILE, FORMAT_CAP)
        if raw is None:
            if not create:
                raise StoreFormatError(f"{backend.name} is not a store (no {FORMAT_FILE} object)",
                                       path=backend.name)
            backend.created = backend._create()
            raw = backend.get_small(backend.prefix + FORMAT_FILE, FORMAT_CAP) or b""
        check_format(raw, f"{backend.name}/{FORMAT_FILE}")
        return backend

    def _create(self) -> bool:
        """Write the format marker under an empty prefix; whether this call did (False: another creator won)."""
        if any(True for _ in self.list_prefix(self.prefix, limit=1)):
            raise StoreFormatError(f"{self.name} holds objects but no {FORMAT_FILE}: not a store, "
                                   "and not empty (refusing to turn it into one)", path=self.name)
        try:
            self.client.put_object(Bucket=self.bucket, Key=self.prefix + FORMAT_FILE, Body=format_text(),
                                   IfNoneMatch="*")
        except client_errors() as exc:
            if error_code(exc) not in (PRECONDITION, CONFLICT):  # else: another creator won
                raise io_error("create store", self.name, exc) from exc
            return False
        return True

    def close(self) -> None:
        self.leases.release_writer()

    def writer_epoch(self) -> int:
        """Changes whenever this process's writer lease had a gap; -1 while none is valid."""
        return self.leases.current_epoch()

    # -- helpers ---------------------------------------------------------------------

    def _where(self, key: str) -> str:
        return f"{self.name}/{key[len(self.prefix):]}"

    def _okey(self, key: str) -> str:
        validate_key(key)
        return f"{self.prefix}objects/{key[:2]}/{key[2:]}"

    def list_prefix(self, base: str, *, limit: int | None = None) -> Iterator[dict[str, Any]]:
        """Every object under ``base`` (``Key``, ``Size``, ``LastModified``), in key order."""
        token = None
        seen = 0
        while True:
            kwargs: dict[str, Any] = {"Bucket": self.bucket, "Prefix": base}
            if token:
                kwargs["ContinuationToken"] = token
            if limit is not None:
                kwargs["MaxKeys"] = limit
            try:
                page = self.client.list_objects_v2(**kwargs)
            except client_errors() as exc:
                raise io_error("list", self._where(base), exc) from exc
            for item in page.get("Contents", []):
                yield item
                seen += 1
                if limit is not None and seen >= limit:
                    return
            token = page.get("NextContinuationToken")
            if not token:
                return

    def get_small(self, key: str, cap: int) -> bytes | None:
        """The bytes of a small object (a ref, a journal segment, the format), or None if absent."""
        piece = self.get_piece(key, cap)
        return None if piece is None else piece[0]

    def get_piece(self, key: str, cap: int) -> tuple[bytes, dict[str, str]] | None:
        """The bytes and user metadata of a journal piece, or None if absent (capped like :meth:`get_small`)."""
        try:
            reply = self.client.get_object(Bucket=self.bucket, Key=key)
        except client_errors() as exc:
            if is_not_found(exc):
                return None
            raise io_error("read", self._where(key), exc) from exc
        with contextlib.closing(reply["Body"]) as body:
            if reply.get("ContentLength", 0) > cap:
                raise StoreLayoutError(self._where(key), f"larger than the {cap}-byte cap for this kind of entry")
            data = body.read(cap + 1)
        if len(data) > cap:
            raise StoreLayoutError(self._where(key), f"larger than the {cap}-byte cap for this kind of entry")
        return data, {str(k).lower(): str(v) for k, v in (reply.get("Metadata") or {}).items()}

    def delete_key(self, key: str, **conditions: str) -> None:
        try:
            self.client.delete_object(Bucket=self.bucket, Key=key, **conditions)
        except client_errors() as exc:
            if is_not_found(exc):
                return
            if error_code(exc) in (PRECONDITION, CONFLICT):
                raise
            raise io_error("delete", self._where(key), exc) from exc

    # -- objects ---------------------------------------------------------------------

    def open_object(self, key: str) -> tuple[BinaryIO, int]:
        okey = self._okey(key)
        try:
            reply = self.client.get_object(Bucket=self.bucket, Key=okey)
        except client_errors() as exc:
            if is_not_found(exc):
                raise ObjectNotFoundError(key) from None
            raise io_error("read", self._where(okey), exc, key=key) from exc
        return reply["Body"], int(reply["ContentLength"])

    def _head(self, okey: str, key: str | None = None) -> dict[str, Any] | None:
        try:
            return self.client.head_object(Bucket=self.bucket, Key=okey)
        except client_errors() as exc:
            if is_not_found(exc):
                return None
            raise io_error("stat", self._where(okey), exc, key=key) from exc

    def object_info(self, key: str) -> ObjectInfo | None:
        head = self._head(self._okey(key), key)
        if head is None:
            return None
        return ObjectInfo(key, int(head["ContentLength"]), head["LastModified"].timestamp())

    def present_keys(self, keys: list[str]) -> set[str]:
        """Which of ``keys`` are stored: one listing for many keys, HEADs for a few."""
        if len(keys) <= _LIST_THRESHOLD:
            return {k for k in keys if self.object_info(k) is not None}
        stored = {info.key for info in self.list_objects()}
        return stored.intersection(keys)

    def new_spool(self, key_hint: str) -> tuple[int, str]:
        fd, path = tempfile.mkstemp(prefix=".emberbench-spool.", suffix=".tmp")
        return fd, path

    def drop_temp(self, name: str) -> None:
        with contextlib.suppress(OSError):
            os.unlink(name)

    def _upload(self, okey: str, key: str, frame: bytes | str, **conditions: str) -> None:
        """PUT ``frame`` (bytes or a spool path) to ``okey`` with ``conditions``; raises ClientError as is."""
        lock = self.history.write_once_args()
        if isinstance(frame, bytes):
            self.client.put_object(Bucket=self.bucket, Key=okey, Body=frame, **conditions, **lock)
            return
        size = os.path.getsize(frame)
        if size <= SINGLE_PUT_LIMIT:
            with open(frame, "rb") as handle:
                self.client.put_object(Bucket=self.bucket, Key=okey, Body=handle, ContentLength=size, **conditions,
                                       **lock)
            return
        checksum = {k: v for k, v in lock.items() if k == "ChecksumAlgorithm"}
        upload = self.client.create_multipart_upload(Bucket=self.bucket, Key=okey, **lock)
        upload_id = upload["UploadId"]
        try:
            parts = []
            with open(frame, "rb") as handle:
                number = 1
                while piece := handle.read(PART_SIZE):
                    self.leases.ensure_writer()
                    reply = self.client.upload_part(Bucket=self.bucket, Key=okey, UploadId=upload_id,
                                                    PartNumber=number, Body=piece, **checksum)
                    part = {"ETag": reply["ETag"], "PartNumber": number}
                    if "ChecksumSHA256" in reply:
                        part["ChecksumSHA256"] = reply["ChecksumSHA256"]
                    parts.append(part)
                    number += 1
            self.client.complete_multipart_upload(Bucket=self.bucket, Key=okey, UploadId=upload_id,
                                                  MultipartUpload={"Parts": parts}, **conditions)
        except BaseException:
            with contextlib.suppress(*client_errors()):
                self.client.abort_multipart_upload(Bucket=self.bucket, Key=okey, UploadId=upload_id)
            raise

    def create_object(self, key: str, frame: bytes | str) -> bool:
        okey = self._okey(key)
        try:
            self._upload(okey, key, frame, IfNoneMatch="*")
        except client_errors() as exc:
            if error_code(exc) in (PRECONDITION, CONFLICT):
                return False
            raise io_error("put", self._where(okey), exc, key=key) from exc
        return True

    def same_frame(self, key: str, frame: bytes | str) -> bool:
        """Whether the stored object is byte for byte ``frame`` (its ETag is the frame's MD5)."""
        head = self._head(self._okey(key), key)
        if head is None:
            return False
        etag = str(head.get("ETag", "")).strip('"')
        if "-" in etag:
            return False  # a multipart ETag is not an MD5 of the content
        md5 = hashlib.md5(usedforsecurity=False)
        if isinstance(frame, bytes):
            md5.update(frame)
        else:
            with open(frame, "rb") as handle:
                while piece := handle.read(1 << 20):
                    md5.update(piece)
        return md5.hexdigest() == etag

    def replace_object(self, key: str, frame: bytes | str) -> None:
        okey = self._okey(key)
        head = self._head(okey, key)
        if head is None:
            self.create_object(key, frame)
            return
        with contextlib.suppress(*client_errors()):
            self.client.copy_object(Bucket=self.bucket, Key=f"{self.prefix}quarantine/{key}.{time.time_ns()}",
                                    CopySource={"Bucket": self.bucket, "Key": okey})
        try:
            self._upload(okey, key, frame, IfMatch=head["ETag"])
        except client_errors() as exc:
            if error_code(exc) not in (PRECONDITION, CONFLICT):  # else: another writer replaced it first
                raise io_error("put", self._where(okey), exc, key=key) from exc

    def touch_object(self, key: str) -> None:
        okey = self._okey(key)
        head = self._head(okey, key)
        if head is None:
            raise ObjectNotFoundError(key)
        now = server_time(head) or time.time()
        stamped = head["LastModified"].timestamp()
        since = self.leases.writer_since()
        if now - stamped < REFRESH_AGE_SECONDS and since is not None and stamped >= since:
            return  # stamped under this writer lease: gc keeps it while the lease lives
        try:
            self.client.copy_object(Bucket=self.bucket, Key=okey, CopySource={"Bucket": self.bucket, "Key": okey},
                                    MetadataDirective="REPLACE", Metadata={"refreshed": str(time.time_ns())})
        except client_errors() as exc:
            if is_not_found(exc):
                raise ObjectNotFoundError(key) from None  # gc took it meanwhile: the caller stores it again
            raise io_error("refresh", self._where(okey), exc, key=key) from exc
        # A gc that chose this object before the refresh may still be sweeping:
        # look again once none is; a later gc sees the new stamp.
        self.leases.wait_for_gc()
        if self._head(okey, key) is None:
            raise ObjectNotFoundError(key)

    def list_objects(self) -> Iterator[ObjectInfo]:
        base = f"{self.prefix}objects/"
        for item in self.list_prefix(base):
            rest = item["Key"][len(base):]
            if len(rest) != 65 or rest[2] != "/":
                continue
            with contextlib.suppress(ValueError):
                yield ObjectInfo(validate_key(rest[:2] + rest[3:]), int(item["Size"]),
                                 item["LastModified"].timestamp())

    def stray_entries(self) -> list[str]:
        base = f"{self.prefix}objects/"
        strays = []
        for item in self.list_prefix(base):
            rest = item["Key"][len(base):]
            try:
                if len(rest) != 65 or rest[2] != "/":
                    raise ValueError(rest)
                validate_key(rest[:2] + rest[3:])
            except ValueError:
                strays.append(f"objects/{rest}")
        return strays

    def delete_object(self, key: str) -> bool:
        self.delete_key(self._okey(key))
        return True

    def quarantine_object(self, key: str) -> str | None:
        okey = self._okey(key)
        head = self._head(okey, key)
        if head is None:
            return None
        target = f"quarantine/{key}.{time.time_ns()}"
        try:
            self.client.copy_object(Bucket=self.bucket, Key=self.prefix + target,
                                    CopySource={"Bucket": self.bucket, "Key": okey})
        except client_errors() as exc:
            raise io_error("quarantine", self._where(okey), exc, key=key) from exc
        with contextlib.suppress(*client_errors()):
            self.delete_key(okey, IfMatch=head["ETag"])
        return target

    def quarantine_count(self) -> int:
        return sum(1 for _ in self.list_prefix(f"{self.prefix}quarantine/"))

    def temp_entries(self) -> list[tuple[str, float]]:
        """Multipart uploads left unfinished by crashed writers: ``("uploads/<key>/<id>", initiated)``."""
        try:
            reply = self.client.list_multipart_uploads(Bucket=self.bucket, Prefix=self.prefix)
        except client_errors() as exc:
            raise io_error("list uploads", self.name, exc) from exc
        return [(f"uploads/{u['Key'][len(self.prefix):]}/{u['UploadId']}", u["Initiated"].timestamp())
                for u in reply.get("Uploads", [])]

    def delete_temp(self, path: str) -> None:
        _, rest = path.split("/", 1)
        okey, upload_id = rest.rsplit("/", 1)
        with contextlib.suppress(*client_errors()):
            self.client.abort_multipart_upload(Bucket=self.bucket, Key=self.prefix + okey, UploadId=upload_id)

    def now(self) -> float:
        try:
            reply = self.client.list_objects_v2(Bucket=self.bucket, Prefix=self.prefix + FORMAT_FILE, MaxKeys=1)
        except client_errors() as exc:
            raise io_error("list", self.name, exc) from exc
        return server_time(reply) or time.time()

    # -- guards ------------------------------------------------------------------------

    def writer_guard(self) -> contextlib.AbstractContextManager[None]:
        return self.leases.writer()

    def exclusive_guard(self, timeout: float, *, beside_writers: bool = False
                        ) -> contextlib.AbstractContextManager[Callable[[], None]]:
        return self.leases.exclusive(timeout, beside_writers=beside_writers)

    def writer_leases(self) -> list[WriterLease]:
        return [WriterLease(view.name, view.since) for view in self.leases.leases("writer") if view.live]

    def release_dead_leases(self) -> list[str]:
        return self.leases.release_stale()

    def keep_alive(self) -> None:
        """Renew this process's writer lease if it is due (a run's heartbeat calls it)."""
        self.leases.keep_writer()

    # -- refs --------------------------------------------------------------------------

    def _rkey(self, name: str) -> str:
        return f"{self.prefix}refs/{validate_ref_name(name)}"

    def _read_ref_tagged(self, name: str, *, oversized: bool = False) -> tuple[bytes, str] | None:
        """The ref's bytes and ETag (None: no such ref); ``oversized``: a ref over the cap reads as ``b""``
        (for its removal) instead of raising StoreLayoutError."""
        rkey = self._rkey(name)
        try:
            reply = self.client.get_object(Bucket=self.bucket, Key=rkey)
        except client_errors() as exc:
            if is_not_found(exc):
                return None
            raise io_error("read", self._where(rkey), exc) from exc
        with contextlib.closing(reply["Body"]) as body:
            data = body.read(REF_CAP + 1)
        if len(data) > REF_CAP:
            if oversized:
                return b"", reply["ETag"]
            raise StoreLayoutError(self._where(rkey), f"larger than the {REF_CAP}-byte cap of a ref")
        return data, reply["ETag"]

    def read_ref(self, name: str) -> bytes | None:
        found = self._read_ref_tagged(name)
        return None if found is None else found[0]

    def swap_ref(self, name: str, expected: Any, new: bytes | None) -> bytes | None:
        # Always conditional, even for a plain set (ANY): the value replaced is
        # then exactly the one read, which is what the ref log records.
        rkey = self._rkey(name)
        removal = expected is ANY and new is None  # a ref over the cap can still be removed (it reads as b"")
        for _ in range(64 if expected is ANY else 8):
            current = self._read_ref_tagged(name, oversized=removal)
            actual = None if current is None else current[0]
            if expected is not ANY and actual != expected:
                raise RefConflictError(name, _text(expected), _text(actual))
            conditions = {"IfNoneMatch": "*"} if current is None else {"IfMatch": current[1]}
            try:
                if new is not None:
                    self.client.put_object(Bucket=self.bucket, Key=rkey, Body=new, **conditions)
                elif current is not None:
                    self.delete_key(rkey, **conditions)
                return actual
            except client_errors() as exc:
                code = error_code(exc)
                if code == CONFLICT or (code == PRECONDITION and expected is ANY):
                    continue  # a concurrent request; re-read and try again
                if code == PRECONDITION:
                    current = self._read_ref_tagged(name)
                    raise RefConflictError(name, _text(expected), _text(None if current is None else current[0])) \
                        from None
                raise io_error("update ref", self._where(rkey), exc) from exc
        raise RefConflictError(name, _text(expected), None)

    def ref_names(self) -> list[str]:
        base = f"{self.prefix}refs/"
        names = []
        for item in self.list_prefix(base):
            with contextlib.suppress(ValueError):
                names.append(validate_ref_name(item["Key"][len(base):]))
        return sorted(names)

    # -- journals ----------------------------------------------------------------------

    def journal_writer(self, name: str, has: Callable[[str], bool], *, create: bool, timeout: float) -> JournalWriter:
        return SegmentJournalWriter(self, validate_journal_name(name), has, create=create, timeout=timeout)

    def read_journal_bytes(self, name: str, cap: int = MAX_JOURNAL_BYTES) -> bytes:
        return read_segments(self, validate_journal_name(name), cap)[0]

    def journal_names(self) -> list[str]:
        base = f"{self.prefix}journals/"
        names: set[str] = set()
        token = None
        while True:
            kwargs: dict[str, Any] = {"Bucket": self.bucket, "Prefix": base, "Delimiter": "/"}
            if token:
                kwargs["ContinuationToken"] = token
            try:
                page = self.client.list_objects_v2(**kwargs)
            except client_errors() as exc:
                raise io_error("list", self._where(base), exc) from exc
            for common in page.get("CommonPrefixes", []):
                with contextlib.suppress(ValueError):
                    names.add(validate_journal_name(common["Prefix"][len(base):].rstrip("/")))
            token = page.get("NextContinuationToken")
            if not token:
                return sorted(names)

    def delete_journal(self, name: str, timeout: float) -> bool:
        return delete_segments(self, validate_journal_name(name), timeout)

    def import_journal(self, name: str, data: bytes) -> None:
        import_segments(self, validate_journal_name(name), data)

    # -- the ref log --------------------------------------------------------------------

    def _lkey(self, seq: int) -> str:
        return f"{self.prefix}{REFLOG_FOLDER}/{seq_name(seq)}"

    def create_log_entry(self, seq: int, data: bytes) -> bool:
        lkey = self._lkey(seq)
        try:
            self.client.put_object(Bucket=self.bucket, Key=lkey, Body=data, IfNoneMatch="*",
                                   **self.history.write_once_args())
        except client_errors() as exc:
            if error_code(exc) in (PRECONDITION, CONFLICT):
                return False
            raise io_error("append to the ref log", self._where(lkey), exc) from exc
        return True

    def read_log_entry(self, seq: int, cap: int) -> bytes | None:
        return self.get_small(self._lkey(seq), cap)

    def log_seqs(self, start: int = 0, limit: int | None = None) -> list[int]:
        base = f"{self.prefix}{REFLOG_FOLDER}/"
        found: list[int] = []
        token = None
        while True:
            kwargs: dict[str, Any] = {"Bucket": self.bucket, "Prefix": base}
            if token:
                kwargs["ContinuationToken"] = token
            elif start > 0:
                kwargs["StartAfter"] = base + seq_name(start - 1)
            if limit is not None:
                kwargs["MaxKeys"] = min(1000, max(1, limit - len(found)))
            try:
                page = self.client.list_objects_v2(**kwargs)
            except client_errors() as exc:
                raise io_error("list", self._where(base), exc) from exc
            for item in page.get("Contents", []):
                seq = parse_seq_name(item["Key"][len(base):])
                if seq is not None and seq >= start:
                    found.append(seq)
            token = page.get("NextContinuationToken")
            if not token or (limit is not None and len(found) >= limit):
                return found if limit is None else found[:limit]

    def last_log_seq(self) -> int | None:
        # A galloping search over "is there an entry at or after n" (one listing of one key each):
        # a few requests for any length of log, where listing it all would cost one per thousand.
        def at_or_after(n: int) -> int | None:
            found = self.log_seqs(n, 1)
            return found[0] if found else None

        first = at_or_after(0)
        if first is None:
            return None
        low, step = first, 1
        while at_or_after(low + step) is not None:
            low, step = low + step, step * 2
        high = low + step  # nothing at or after it
        while high - low > 1:
            mid = (low + high) // 2
            if at_or_after(mid) is None:
                high = mid
            else:
                low = mid
        return low

    def log_stray_entries(self) -> list[str]:
        base = f"{self.prefix}{REFLOG_FOLDER}/"
        return [f"{REFLOG_FOLDER}/{item['Key'][len(base):]}" for item in self.list_prefix(base)
                if parse_seq_name(item["Key"][len(base):]) is None]

    # -- what these credentials may do, and what keeps history ------------------------

    def write_probe(self) -> str | None:
        """A conditional PUT of the format marker, which exists: 412 means allowed, AccessDenied means not.

        It never writes: the condition fails wherever the write is allowed.
        """
        try:
            self.client.put_object(Bucket=self.bucket, Key=self.prefix + FORMAT_FILE, Body=format_text(),
                                   IfNoneMatch="*")
        except client_errors() as exc:
            code = error_code(exc)
            if code in (PRECONDITION, CONFLICT):
                return None
            if code in ("AccessDenied", "403", "AllAccessDisabled", "InvalidAccessKeyId", "SignatureDoesNotMatch"):
                return f"PutObject denied ({code})"
            raise io_error("probe write access", self._where(self.prefix + FORMAT_FILE), exc) from exc
        # Only a service that ignores If-None-Match gets here; the marker was rewritten with its own bytes.
        return None

    def describe_history(self) -> list[str]:
        return self.history.describe()


def _text(raw: Any) -> str | None:
    if raw is None or raw is ANY:
        return None
    return bytes(raw).decode("ascii", "replace").strip()
