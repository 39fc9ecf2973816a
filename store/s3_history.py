"""What keeps an S3 store's history: bucket versioning and Object Lock, detected and used.

The store never overwrites or deletes an object, a journal segment or a ref
log entry itself (except gc and repairs), but anyone holding the bucket's
credentials can. On a bucket with **versioning**, an overwrite or a delete
only adds a version or a delete marker: the earlier bytes stay retrievable.
With **Object Lock** (which needs versioning), a version under retention
cannot be deleted or changed before its date, in *governance* mode (only
principals with ``s3:BypassGovernanceRetention`` may) or *compliance* mode
(nobody, not even the account's root).

:class:`BucketHistory` asks the bucket once, lazily
(``GetBucketVersioning`` and ``GetObjectLockConfiguration``), and:

* when the bucket has Object Lock, sends a checksum with every write-once
  put (S3 requires a content checksum for puts to a bucket with Object Lock);
* when the store's locator asks for it (``?retain_days=N&lock_mode=MODE``),
  puts every write-once entry (objects, journal segments and bases, ref log
  entries) with that retention. Refs and leases are never given a retention:
  they are overwritten and deleted by design (their history is the ref log).

A principal that may not read the bucket's configuration gets "unknown",
and the store then adds nothing to its puts (unless ``retain_days`` asks,
which then fails loudly at the first put if the bucket has no Object Lock).
"""

from __future__ import annotations

import datetime
import threading
from dataclasses import dataclass
from typing import Any

from .s3_client import client_errors, error_code


@dataclass(frozen=True, slots=True)
class HistorySetup:
    """What the bucket said.

    Attributes:
        versioning: ``Enabled``, ``Suspended``, ``off``, or ``unknown (reason)``.
        object_lock: whether Object Lock is enabled (None: unknown).
        default_mode, default_days: the bucket's default retention rule, if any.
        detail: why something is unknown, else "".
    """

    versioning: str
    object_lock: bool | None
    default_mode: str | None
    default_days: int | None
    detail: str


class BucketHistory:
    """The history setup of one bucket, asked once per process (see the module docstring)."""

    def __init__(self, client: Any, bucket: str, retain_days: int | None, lock_mode: str | None, name: str) -> None:
        self._client = client
        self._bucket = bucket
        self.retain_days = retain_days
        self.lock_mode = lock_mode
        self._name = name
        self._setup: HistorySetup | None = None
        self._lock = threading.Lock()

    def setup(self) -> HistorySetup:
        """The bucket's versioning and Object Lock configuration (asked on first use)."""
        with self._lock:
            if self._setup is None:
                self._setup = self._ask()
            return self._setup

    def _ask(self) -> HistorySetup:
        detail = []
        try:
            reply = self._client.get_bucket_versioning(Bucket=self._bucket)
            versioning = reply.get("Status") or "off"
        except client_errors() as exc:
            versioning = f"unknown ({error_code(exc) or type(exc).__name__})"
            detail.append(f"GetBucketVersioning: {error_code(exc)}")
        lock: bool | None
        mode = days = None
        try:
            reply = self._client.get_object_lock_configuration(Bucket=self._bucket)
            config = reply.get("ObjectLockConfiguration", {})
            lock = config.get("ObjectLockEnabled") == "Enabled"
            retention = config.get("Rule", {}).get("DefaultRetention", {})
            if retention:
                mode = str(retention.get("Mode", "")).lower() or None
                days = retention.get("Days") or (365 * retention["Years"] if retention.get("Years") else None)
        except client_errors() as exc:
            code = error_code(exc)
            if code == "ObjectLockConfigurationNotFoundError":
                lock = False
            else:
                lock = None
                detail.append(f"GetObjectLockConfiguration: {code}")
        return HistorySetup(versioning, lock, mode, days, "; ".join(detail))

    def write_once_args(self) -> dict[str, Any]:
        """Extra arguments for the put of a write-once entry (nothing on a bucket without Object Lock)."""
        if self.retain_days is None:
            setup = self.setup() if self._setup is None else self._setup
            return {"ChecksumAlgorithm": "SHA256"} if setup.object_lock else {}
        until = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=self.retain_days)
        return {"ChecksumAlgorithm": "SHA256", "ObjectLockMode": str(self.lock_mode).upper(),
                "ObjectLockRetainUntilDate": until}

    def describe(self) -> list[str]:
        """Lines for ``store info``: versioning, Object Lock, what this store adds to its puts."""
        s = self.setup()
        lines = [f"bucket versioning: {s.versioning}"]
        if s.object_lock is None:
            lines.append("object lock: unknown (these credentials may not read the bucket's configuration)")
        elif not s.object_lock:
            lines.append("object lock: off")
        else:
            rule = (f"default retention {s.default_mode} {s.default_days} days" if s.default_mode
                    else "no default retention")
            lines.append(f"object lock: enabled ({rule})")
        if self.retain_days is not None:
            lines.append(f"this store puts objects, journal segments and ref log entries with "
                         f"{self.lock_mode} retention of {self.retain_days} days")
        elif s.object_lock:
            lines.append("this store adds no retention of its own (give ?retain_days=N&lock_mode=MODE to the "
                         "locator); the bucket's default rule applies")
        if s.versioning != "Enabled":
            lines.append("history: NOT immutable: without versioning, an overwrite or delete made around the "
                         "store cannot be undone (docs/store.md, Write-once history)")
        elif not s.object_lock:
            lines.append("history: versioned (earlier versions stay retrievable), not locked: whoever may delete "
                         "versions can still erase it")
        else:
            lines.append("history: versioned and locked: a retained version cannot be deleted before its date")
        return lines


__all__ = ["BucketHistory", "HistorySetup"]
