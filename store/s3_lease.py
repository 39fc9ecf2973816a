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
``MARGIN/TTL``.

**A lease is a heartbeat, never a pid.** Holders renew their leases at least
every :data:`REFRESH_SECONDS` while they work (a run renews its writer and
journal leases from its heartbeat, see docs/store.md), so a lease not renewed
for :data:`TTL_SECONDS` belongs to a holder that is dead, stalled or cut off,
and is taken over (or, by gc, deleted). The one shortcut: a lease whose
holder ran on this machine, in this PID namespace, since this boot, and
whose process no longer exists (:func:`store._identity.provably_dead`) is
taken over at once, so a SIGKILLed run resumes without waiting. A holder in
another PID namespace (a sidecar container) or on another host proves
nothing by its pid and is judged by its heartbeat alone.

**gc beside writers.** Each writer lease records ``since``: the server's
time when it was taken. gc keeps every unreferenced object stamped at or
after the ``since`` of any live writer lease (what a writer put or refreshed
under its lease, and may be about to reference), and takes only the gc lease:
it no longer waits for writers to stop. New writer leases still wait while a
gc lease is live; a writer that refreshes an old object under an existing
lease looks again once no gc lease is live (see :meth:`Leases.wait_for_gc`).
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

from ._identity import process_identity, provably_dead
from .errors import LockError
from .s3_client import CONFLICT, PRECONDITION, client_errors, error_code, io_error, is_not_found, server_time

TTL_SECONDS = 180.0
"""A lease not renewed for this long (by the server's clock) is stale: its holder is dead or cut off."""
MARGIN_SECONDS = 60.0
REFRESH_SECONDS = 50.0
"""Holders renew a lease they use once it is this old (a run's heartbeat, every 60 s, always renews)."""
WRITER_WAIT_SECONDS = 900.0
"""How long a writer waits for a gc lease to go (gc sweeps are minutes at most)."""
_POLL_SECONDS = 0.25
_BODY_CAP = 4096


@dataclass(slots=True)
class Held:
    """One lease this process holds."""

    key: str
    etag: str
    sent: float  # monotonic time the request that wrote it was sent
    renewed: float
    since: float  # the server's time when the lease was taken (kept by renewals)

    @property
    def deadline(self) -> float:
        return self.sent + TTL_SECONDS - MARGIN_SECONDS


@dataclass(frozen=True, slots=True)
class LeaseView:
    """What another process sees of a lease.

    Attributes:
        name: the lease object's name under ``leases/``.
        live: renewed within the TTL and its holder not provably dead.
        since: the server's time when it was taken (its first stamp, if it never said).
        etag: the lease object's ETag (to delete it only if unchanged).
        owner: the holder as the lease names it (host:pid:token), for messages.
    """

    name: str
    live: bool
    since: float
    etag: str
    owner: str


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
        self.identity = process_identity()
        self._writer: Held | None = None
        self._lock = threading.RLock()
        self._atexit = False
        self.writer_epoch = 0
        """Counts writer leases taken: unchanged means the lease was held without a gap."""

    def _key(self, name: str) -> str:
        return f"{self.prefix}leases/{name}"

    def _where(self, key: str) -> str:
        return f"{self.where}/{key[len(self.prefix):]}"

    def _body(self, kind: str, since: float | None) -> bytes:
        doc: dict[str, Any] = {"kind": kind, "owner": self.owner, "ttl": TTL_SECONDS, "identity": self.identity}
        if since is not None:
            doc["since"] = since
        return json.dumps(doc, sort_keys=True).encode()

    def _put(self, key: str, kind: str, since: float | None = None, **conditions: str) -> Held:
        sent = time.monotonic()
        try:
            reply = self.client.put_object(Bucket=self.bucket, Key=key, Body=self._body(kind, since), **conditions)
        except client_errors() as exc:
            if error_code(exc) in (PRECONDITION, CONFLICT):
                raise _Taken() from None
            raise io_error("lease", self._where(key), exc) from exc
        if since is None:
            # The server's time of this first stamp: every object this holder
            # writes afterwards is stamped at or after it.
            since = server_time(reply)
            if since is None:
                head = self._head(key)
                since = head["LastModified"].timestamp() if head is not None else time.time()
        return Held(key, reply["ETag"], sent, sent, since)

    def _head(self, key: str) -> dict[str, Any] | None:
        try:
            return self.client.head_object(Bucket=self.bucket, Key=key)
        except client_errors() as exc:
            if is_not_found(exc):
                return None
            raise io_error("lease", self._where(key), exc) from exc

    def _delete(self, held: Held) -> None:
        with contextlib.suppress(*client_errors()):
            self.client.delete_object(Bucket=self.bucket, Key=held.key, IfMatch=held.etag)

    def _read_body(self, key: str) -> dict[str, Any]:
        """The lease's JSON body, or {} when it is gone or unreadable (a lease says nothing then)."""
        try:
            reply = self.client.get_object(Bucket=self.bucket, Key=key)
            doc = json.loads(reply["Body"].read(_BODY_CAP))
        except (ValueError, TypeError, KeyError, *client_errors()):
            return {}
        return doc if isinstance(doc, dict) else {}

    def holder_is_dead(self, key: str) -> bool:
        """Whether the holder of the lease at ``key`` provably no longer exists (see :mod:`store._identity`).

        Never judged by a pid alone: only a holder of this host, boot and PID
        namespace whose process is gone (or was replaced by another with the
        same pid) counts; anything else waits for the lease's heartbeat to go stale.
        """
        return provably_dead(self._read_body(key).get("identity"))

    def live_lease(self, key: str) -> dict[str, Any] | None:
        """``{"etag", "owner"}`` of the live lease at ``key``; None if absent or expired."""
        head = self._head(key)
        if head is None:
            return None
        now = server_time(head) or time.time()
        if now - head["LastModified"].timestamp() >= TTL_SECONDS or self.holder_is_dead(key):
            return {"etag": head["ETag"], "owner": None}
        return {"etag": head["ETag"], "owner": key.rsplit("/", 1)[-1], "live": True}

    def leases(self, kind: str) -> list[LeaseView]:
        """Every lease named ``<kind>-...`` other than this process's writer lease, live or not, in name order."""
        views: list[LeaseView] = []
        token = None
        while True:
            kwargs: dict[str, Any] = {"Bucket": self.bucket, "Prefix": self._key(f"{kind}-")}
            if token:
                kwargs["ContinuationToken"] = token
            try:
                page = self.client.list_objects_v2(**kwargs)
            except client_errors() as exc:
                raise io_error("list leases", f"{self.where}/leases", exc) from exc
            now = server_time(page) or time.time()
            for item in page.get("Contents", []):
                if self._writer is not None and item["Key"] == self._writer.key:
                    continue
                stamped = item["LastModified"].timestamp()
                body = self._read_body(item["Key"])
                since = body.get("since")
                if not isinstance(since, (int, float)) or isinstance(since, bool) or since > stamped:
                    since = stamped  # never renewed: its only stamp is when it was taken
                live = now - stamped < TTL_SECONDS and not provably_dead(body.get("identity"))
                views.append(LeaseView(item["Key"].rsplit("/", 1)[-1], live, float(since), item["ETag"],
                                       str(body.get("owner", ""))[:200]))
            token = page.get("NextContinuationToken")
            if not token:
                return views

    def live_writers(self) -> list[str]:
        """Names of the live writer leases (other than this process's)."""
        return [view.name for view in self.leases("writer") if view.live]

    def release_stale(self) -> list[str]:
        """Delete every writer and journal lease that is no longer live (only if unchanged); their names.

        A lease renewed between the look and the delete keeps its new ETag,
        so the conditional delete leaves it alone.
        """
        gone = []
        for kind in ("writer", "journal"):
            for view in self.leases(kind):
                if view.live:
                    continue
                with contextlib.suppress(*client_errors()):
                    self.client.delete_object(Bucket=self.bucket, Key=self._key(view.name), IfMatch=view.etag)
                    gone.append(view.name)
        return gone

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
                    fresh = self._put(held.key, "writer", held.since)
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
                        # (a killed one's lease goes stale, or see holder_is_dead).
                        atexit.register(self.release_writer)
                        self._atexit = True
                    return
                self._delete(held)
                if time.monotonic() >= deadline:
                    raise LockError(f"{self.where}/leases/gc",
                                    f"gc holds the store after {WRITER_WAIT_SECONDS:g} s of waiting")
                time.sleep(_POLL_SECONDS)

    def writer_since(self) -> float | None:
        """The server's time when this process's current writer lease was taken (None: no valid lease)."""
        with self._lock:
            held = self._writer
            return held.since if held is not None and time.monotonic() < held.deadline else None

    def wait_for_gc(self) -> None:
        """Return once no live gc lease exists, renewing this process's writer lease meanwhile.

        A writer that refreshed an old object calls it before looking at the
        object again: a gc that chose the object before the refresh may still
        be deleting, and one that takes its lease later sees the new stamp.
        """
        deadline = time.monotonic() + WRITER_WAIT_SECONDS
        while True:
            lease = self.live_lease(self._key("gc"))
            if lease is None or not lease.get("live"):
                return
            if time.monotonic() >= deadline:
                raise LockError(f"{self.where}/leases/gc", f"gc holds the store after {WRITER_WAIT_SECONDS:g} s "
                                "of waiting")
            self.keep_writer()
            time.sleep(_POLL_SECONDS)

    def keep_writer(self) -> None:
        """Renew this process's writer lease if one is held and due (a heartbeat); never takes a new one."""
        with self._lock:
            held = self._writer
            now = time.monotonic()
            if held is None or now >= held.deadline or now - held.renewed < REFRESH_SECONDS:
                return
            fresh = self._put(held.key, "writer", held.since)
            held.etag, held.sent, held.renewed = fresh.etag, fresh.sent, fresh.renewed

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
    def exclusive(self, timeout: float, *, beside_writers: bool = False) -> Iterator[Callable[[], None]]:
        """Hold the gc lease; yields ``check()`` (renews, raises if lost).

        Args:
            timeout: seconds to wait for the lease (and, unless ``beside_writers``,
                for live writer leases to go).
            beside_writers: do not wait for writers (gc: it keeps what their
                leases protect); otherwise wait until no live writer lease
                remains (fsck's quarantine, which replaces objects).
        """
        self.release_writer()
        held = self.take(self._key("gc"), "gc", timeout)
        try:
            deadline = time.monotonic() + timeout
            while not beside_writers and (writers := self.live_writers()):
                if time.monotonic() >= deadline:
                    raise LockError(f"{self.where}/leases", f"{len(writers)} writer(s) active after {timeout:g} s "
                                    f"(first: {writers[0]}); quarantine runs when no run is writing")
                time.sleep(_POLL_SECONDS)
                self.renew(held)
            yield lambda: self.renew(held)
        finally:
            self._delete(held)

    def take(self, key: str, kind: str, timeout: float) -> Held:
        """Create the exclusive lease ``key``, taking over a stale one; LockError after ``timeout``."""
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
                raise LockError(self._where(key), f"held by another process (a live lease) after {timeout:g} s")
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
            raise LockError(self._where(held.key), "lease ran out")
        if now < held.deadline and now - held.renewed < REFRESH_SECONDS:
            return
        try:
            fresh = self._put(held.key, "renew", held.since, IfMatch=held.etag)
        except _Taken:
            raise LockError(self._where(held.key), "lease was taken over") from None
        held.etag, held.sent, held.renewed = fresh.etag, fresh.sent, fresh.renewed

    def release(self, held: Held) -> None:
        self._delete(held)


class _Taken(Exception):
    """A conditional lease write found the lease held (412/409)."""
