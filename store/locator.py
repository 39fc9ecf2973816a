"""Store locators: one string that names a store on any machine, and how it is parsed.

A locator is either a folder path (a local store, possibly on a shared
mount) or ``s3://bucket/prefix`` (S3-compatible object storage). An S3
locator may carry ``?endpoint=URL`` (MinIO, Ceph, R2...) and ``&region=NAME``;
:attr:`store.Store.locator` writes them back when they were in effect, so a
Ray worker on another node reopens exactly the same store. Credentials are
never part of a locator: every process finds its own through the standard
AWS chain (environment, shared config and credentials files, instance or pod
roles). Any other ``scheme://`` is refused rather than taken as a folder name.
:func:`store.open_store` (in :mod:`store.core`) opens the store a locator names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, urlsplit

from .errors import LocatorError

_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_BUCKET_RE = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_QUERY_KEYS = frozenset({"endpoint", "region", "retain_days", "lock_mode"})
LOCK_MODES = ("governance", "compliance")
MAX_RETAIN_DAYS = 36500


@dataclass(frozen=True, slots=True)
class S3Locator:
    """A parsed ``s3://`` locator.

    Attributes:
        bucket: the bucket name.
        prefix: the key prefix of the store inside the bucket ("" for the root),
            without leading or trailing slashes.
        endpoint: an endpoint URL overriding the AWS default, or None.
        region: a region name, or None.
        retain_days: with a bucket that has Object Lock: put write-once
            entries (objects, journal segments, ref log entries) with a
            retention of this many days (None: only the bucket's default rule).
        lock_mode: ``governance`` or ``compliance`` (with ``retain_days``).
    """

    bucket: str
    prefix: str
    endpoint: str | None = None
    region: str | None = None
    retain_days: int | None = None
    lock_mode: str | None = None

    def render(self, endpoint: str | None = None, region: str | None = None) -> str:
        """The locator string (endpoint and region as given, or as passed here)."""
        text = f"s3://{self.bucket}/{self.prefix}" if self.prefix else f"s3://{self.bucket}"
        query = [(k, v) for k, v in (("endpoint", endpoint or self.endpoint), ("region", region or self.region),
                                     ("retain_days", None if self.retain_days is None else str(self.retain_days)),
                                     ("lock_mode", self.lock_mode)) if v]
        if query:
            text += "?" + "&".join(f"{k}={quote(v, safe=':/')}" for k, v in query)
        return text


def is_url(locator: str) -> bool:
    """Whether ``locator`` looks like ``scheme://...`` rather than a path."""
    return _SCHEME_RE.match(locator) is not None


def parse_s3(locator: str) -> S3Locator:
    """Parse ``s3://bucket/prefix[?endpoint=URL&region=NAME]``.

    Raises:
        LocatorError: a bad bucket name, an unsafe prefix (``..``, empty
            components), a query key other than endpoint/region, or an endpoint
            with credentials in it.
    """
    parts = urlsplit(locator)
    if parts.scheme != "s3":
        raise LocatorError(locator, f"unsupported scheme {parts.scheme!r} (use a folder path or s3://bucket/prefix)")
    bucket = parts.netloc
    if _BUCKET_RE.fullmatch(bucket) is None or ".." in bucket:
        raise LocatorError(locator, f"invalid bucket name {bucket!r}")
    prefix = parts.path.strip("/")
    if prefix and any(p in ("", ".", "..") for p in prefix.split("/")):
        raise LocatorError(locator, "the prefix must be '/'-separated names without '.', '..' or empty parts")
    if parts.fragment:
        raise LocatorError(locator, "a locator has no '#' part")
    query: dict[str, str] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True, strict_parsing=False):
        if key not in _QUERY_KEYS or key in query:
            raise LocatorError(locator, f"unknown or repeated option {key!r} (allowed: endpoint, region, "
                                        "retain_days, lock_mode)")
        query[key] = value
    endpoint = query.get("endpoint") or None
    if endpoint is not None:
        url = urlsplit(endpoint)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise LocatorError(locator, "endpoint must be an http:// or https:// URL")
        if url.username or url.password:
            raise LocatorError(locator, "endpoint must not carry credentials (use the AWS credential chain)")
    retain = query.get("retain_days")
    days: int | None = None
    if retain is not None:
        if not retain.isascii() or not retain.isdigit() or not 1 <= int(retain) <= MAX_RETAIN_DAYS:
            raise LocatorError(locator, f"retain_days must be a whole number of days from 1 to {MAX_RETAIN_DAYS}")
        days = int(retain)
    mode = query.get("lock_mode")
    if mode is not None:
        if mode not in LOCK_MODES:
            raise LocatorError(locator, f"lock_mode must be one of {', '.join(LOCK_MODES)}")
        if days is None:
            raise LocatorError(locator, "lock_mode needs retain_days")
    elif days is not None:
        mode = "governance"
    return S3Locator(bucket, prefix, endpoint, query.get("region") or None, days, mode)
