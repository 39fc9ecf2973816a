"""Leases: the S3 backend's replacement for flock (gc lock, writer guard, journal writer lock).

S3 has no locks, so mutual exclusion is built from small lease objects under
``<prefix>/leases/`` and the service's conditional writes:

* **Writer leases** (``leases/writer-<id>``, one per process that writes,
  like a shared flock). A writer creates its lease, then checks that no live
  gc lease exists; if one does, it deletes its own and waits. It keeps the
  lease while it works, refreshing it every :data:`REFRESH_SECONDS`, and
  deletes it on close.
* **The gc lease** (``leases/gc``, like the exclusive flock). gc creates it
  with ``If-None-Match: *`` (so two gcs exclude each other), then waits until
  no live writer lease remains; it renews it with ``If-Match`` on its own ETag
  while it sweeps (losing it stops the sweep) and deletes it at the end.
  Because each side writes its own lease before looking for the other's, and
  S3 is strongly consistent for writes and lists, at least one of a racing
  writer and gc sees the other and backs off: a writer never relies on an
  object while gc deletes.
* **Journal leases** (``leases/journal-<name>``): the single writer of a
  journal, taken with ``If-None-Match: *``, renewed with ``If-Match``.

**Time and clock skew.** A lease is live while the *server's* clock (the
``Date`` of the listing or HEAD that looks at it) is less than
:data:`TTL_SECONDS` past the lease's ``LastModified`` (also the server's
clock), so clients' clocks never enter the judgement. A holder, in turn,
trusts its lease only until ``TTL - MARGIN`` seconds after it *sent* the
request that wrote it, measured on its own monotonic clock: that moment is
before the server stamped the lease, so the holder stops trusting it before
anyone else may take over. What remains assumed: no process stalls for more
than :data:`MARGIN_SECONDS` between checking its deadline and its request
reaching the server, and clock rates (not offsets) agree to well under
``MARGIN/TTL`` (20%). A crashed holder's lease expires after the TTL; one
whose holder ran on this host and no longer exists (its pid is gone) is taken
over at once, so a SIGKILLed run resumes without waiting.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .errors import LockError
from .s3_client import CONFLICT, PRECONDITION, client_errors, error_code, io_error, is_not_found, server_time

TTL_SECONDS = 300.0
MARGIN_SECONDS = 60.0
REFRESH_SECONDS = 60.0
WRITER_WAIT_SECONDS = 900.0
"""How long a writer waits for a gc lease to go (gc sweeps are minutes at most)."""
_POLL_SECONDS = 0.25


@dataclass(slots=True)
class Held:
    """One lease this process holds."""

    key: str
    etag: str
    sent: float  # monotonic time the request that wrote it was sent
    renewed: float

    @property
    def deadline(self) -> float:
        return self.sent + TTL_SECONDS - MARGIN_SECONDS


class Leases:
    """The leases of one S3 store, for one process.

    Args:
        client: the boto3 client.
        bucket: the bucket.
        prefix: the store's key prefix, ending in "/" (or "").
        where: the store's locator, for messages.
    """

    def __init__(self, client: Any, bucket: str, prefix: str, where: str) -> None:
        self.client, self.bucket, self.prefix, self.where = client, bucket, prefix, where
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self._writer: Held | None = None
        self._lock = threading.RLock()
        self._atexit = False
        self.writer_epoch = 0
        """Counts writer leases taken: unchanged means the lease was held without a gap."""

    def _key(self, name: str) -> str:
        return f"{self.prefix}leases/{name}"

    def _body(self, kind: str) -> bytes:
        return json.dumps({"kind": kind, "owner": self.owner, "ttl": TTL_SECONDS}, sort_keys=True).encode()

    def _put(self, key: str, kind: str, **conditions: str) -> Held:
        sent = time.monotonic()
        try:
            reply = self.client.put_object(Bucket=self.bucket, Key=key, Body=self._body(kind), **conditions)
        except client_errors() as exc:
            if error_code(exc) in (PRECONDITION, CONFLICT):
                raise _Taken() from None
            raise io_error("lease", f"{self.where}/{key[len(self.prefix):]}", exc) from exc
        return Held(key, reply["ETag"], sent, sent)

    def _delete(self, held: Held) -> None:
        with contextlib.suppress(*client_errors()):
            self.client.delete_object(Bucket=self.bucket, Key=held.key, IfMatch=held.etag)

    def holder_is_dead(self, key: str) -> bool:
        """Whether the lease at ``key`` belongs to a process of this host that no longer exists.

        Such a lease (left by a SIGKILLed run, say) may be taken over at once
        instead of after its TTL: the holder provably cannot act any more. A
        holder on another host, or a pid that exists (even reused), waits for
        the TTL as usual.
        """
        try:
            reply = self.client.get_object(Bucket=self.bucket, Key=key)
            owner = json.loads(reply["Body"].read(4096)).get("owner", "")
            host, pid, _ = str(owner).rsplit(":", 2)
            number = int(pid)
        except (ValueError, TypeError, AttributeError, *client_errors()):
            return False
        if host != socket.gethostname() or number == os.getpid():
            return False
        try:
            os.kill(number, 0)
        except ProcessLookupError:
            return True
        except OSError:
            return False
        return False

    def live_lease(self, key: str) -> dict[str, Any] | None:
        """``{"etag", "owner"}`` of the live lease at ``key``; None if absent or expired."""
        try:
            head = self.client.head_object(Bucket=self.bucket, Key=key)
        except client_errors() as exc:
            if is_not_found(exc):
                return None
            raise io_error("lease", f"{self.where}/{key[len(self.prefix):]}", exc) from exc
        now = server_time(head) or time.time()
        if now - head["LastModified"].timestamp() >= TTL_SECONDS or self.holder_is_dead(key):
            return {"etag": head["ETag"], "owner": None}
        return {"etag": head["ETag"], "owner": key.rsplit("/", 1)[-1], "live": True}

    def live_writers(self) -> list[str]:
        """Names of the live writer leases (other than this process's)."""
        live: list[str] = []
        token = None
        while True:
            kwargs: dict[str, Any] = {"Bucket": self.bucket, "Prefix": self._key("writer-")}
            if token:
                kwargs["ContinuationToken"] = token
            try:
                page = self.client.list_objects_v2(**kwargs)
            except client_errors() as exc:
                raise io_error("list leases", f"{self.where}/leases", exc) from exc
            now = server_time(page) or time.time()
            for item in page.get("Contents", []):
                mine = self._writer is not None and item["Key"] == self._writer.key
                if not mine and now - item["LastModified"].timestamp() < TTL_SECONDS \
                        and not self.holder_is_dead(item["Key"]):
                    live.append(item["Key"].rsplit("/", 1)[-1])
            token = page.get("NextContinuationToken")
            if not token:
                return live

    # -- writer leases ---------------------------------------------------------------------

    @contextlib.contextmanager
    def writer(self) -> Iterator[None]:
        """Hold a valid writer lease for the block (taken or renewed on entry, checked on exit)."""
        self.ensure_writer()
        yield
        with self._lock:
            if self._writer is None or time.monotonic() >= self._writer.deadline:
                raise LockError(f"{self.where}/leases", "the writer lease ran out during the operation; "
                                "nothing may rely on it (retry)")

    def ensure_writer(self) -> None:
        """Take a writer lease, or renew the one held when due."""
        with self._lock:
            now = time.monotonic()
            held = self._writer
            if held is not None and now < held.deadline:
                if now - held.renewed >= REFRESH_SECONDS:
                    fresh = self._put(held.key, "writer")
                    held.etag, held.sent, held.renewed = fresh.etag, fresh.sent, fresh.renewed
                return
            self._writer = None
            deadline = now + WRITER_WAIT_SECONDS
            key = self._key(f"writer-{self.owner.replace(':', '-')}")
            while True:
                held = self._put(key, "writer")
                gc_lease = self.live_lease(self._key("gc"))
                if gc_lease is None or not gc_lease.get("live"):
                    self._writer = held
                    self.writer_epoch += 1
                    if not self._atexit:
                        # A process that ends normally frees its lease at once
                        # (a killed one's lease expires, see holder_is_dead).
                        atexit.register(self.release_writer)
                        self._atexit = True
                    return
                self._delete(held)
                if time.monotonic() >= deadline:
                    raise LockError(f"{self.where}/leases/gc",
                                    f"gc holds the store after {WRITER_WAIT_SECONDS:g} s of waiting")
                time.sleep(_POLL_SECONDS)

    def current_epoch(self) -> int:
        """:attr:`writer_epoch` while the writer lease is valid, else -1."""
        with self._lock:
            held = self._writer
            return self.writer_epoch if held is not None and time.monotonic() < held.deadline else -1

    def release_writer(self) -> None:
        with self._lock:
            if self._writer is not None:
                self._delete(self._writer)
                self._writer = None

    # -- the gc lease --------------------------------------------------------------------------

    @contextlib.contextmanager
    def exclusive(self, timeout: float) -> Iterator[Callable[[], None]]:
        """Hold the gc lease with no live writer lease; yields ``check()`` (renews, raises if lost)."""
        self.release_writer()
        held = self.take(self._key("gc"), "gc", timeout)
        try:
            deadline = time.monotonic() + timeout
            while writers := self.live_writers():
                if time.monotonic() >= deadline:
                    raise LockError(f"{self.where}/leases", f"{len(writers)} writer(s) active after {timeout:g} s "
                                    f"(first: {writers[0]}); gc runs when no run is writing")
                time.sleep(_POLL_SECONDS)
                self.renew(held)
            yield lambda: self.renew(held)
        finally:
            self._delete(held)

    def take(self, key: str, kind: str, timeout: float) -> Held:
        """Create the exclusive lease ``key``, taking over an expired one; LockError after ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self._put(key, kind, IfNoneMatch="*")
            except _Taken:
                pass
            current = self.live_lease(key)
            if current is not None and not current.get("live"):
                with contextlib.suppress(_Taken):
                    return self._put(key, kind, IfMatch=current["etag"])
            if time.monotonic() >= deadline:
                raise LockError(f"{self.where}/{key[len(self.prefix):]}",
                                f"held by another process (a live lease) after {timeout:g} s")
            time.sleep(_POLL_SECONDS)

    def renew(self, held: Held, *, reclaim: bool = False) -> None:
        """Renew ``held`` when due; LockError if it ran out or someone took it over.

        Args:
            reclaim: after the lease ran out, take it back if nobody took it
                over meanwhile (its ETag is still ours). Right for journal
                leases only, whose rivals must rewrite the lease object to
                act; gc's rivals (writers) never touch the gc lease.
        """
        now = time.monotonic()
        if now >= held.deadline and not reclaim:
            raise LockError(f"{self.where}/{held.key[len(self.prefix):]}", "lease ran out")
        if now < held.deadline and now - held.renewed < REFRESH_SECONDS:
            return
        try:
            fresh = self._put(held.key, "renew", IfMatch=held.etag)
        except _Taken:
            raise LockError(f"{self.where}/{held.key[len(self.prefix):]}", "lease was taken over") from None
        held.etag, held.sent, held.renewed = fresh.etag, fresh.sent, fresh.renewed

    def release(self, held: Held) -> None:
        self._delete(held)


class _Taken(Exception):
    """A conditional lease write found the lease held (412/409)."""
