"""The S3 client of the S3 backend: building it, and turning its failures into store errors.

The client is boto3's (see docs/store.md for why boto3 over obstore and
s3fs), built through botocore's session: boto3's own session adds only
resources and file-transfer helpers the store does not use, and importing it
(with s3transfer) costs a command like ``runs ls`` a noticeable part of its
start-up. Credentials come from the standard AWS chain (environment variables,
``AWS_PROFILE`` and the shared config and credentials files, web identity,
container and instance roles); the endpoint from the locator's ``endpoint``
option, else the standard ``AWS_ENDPOINT_URL_S3`` / ``AWS_ENDPOINT_URL``
variables, else AWS. Nothing here prints or keeps a credential: errors carry
the S3 error code, the operation and the object's locator-relative name.
"""

from __future__ import annotations

import errno
import os
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit
from typing import Any

from .errors import LocatorError, StoreIOError

PRECONDITION = "PreconditionFailed"
CONFLICT = "ConditionalRequestConflict"
_NOT_FOUND = {"NoSuchKey", "404", "NotFound"}


def import_botocore_session() -> Any:
    """botocore's session module (boto3's client layer), or a LocatorError telling how to install S3 support."""
    try:
        import botocore.session
    except ImportError:
        raise LocatorError("s3://", "S3 support is not installed (pip install 'emberbench[s3]')") from None
    return botocore.session


_CLIENTS: dict[tuple[int, str | None, str | None], Any] = {}


def make_client(endpoint: str | None, region: str | None) -> Any:
    """A boto3 S3 client for ``endpoint`` (None: the environment's or AWS) and ``region``.

    Clients are thread-safe and costly to build, so one is kept per process
    (a forked child builds its own: connection pools do not survive a fork).
    """
    cache_key = (os.getpid(), endpoint, region)
    client = _CLIENTS.get(cache_key)
    if client is None:
        client = _CLIENTS[cache_key] = _build_client(endpoint, region)
    return client


def _build_client(endpoint: str | None, region: str | None) -> Any:
    session_module = import_botocore_session()
    from botocore.config import Config

    config = Config(
        retries={"max_attempts": 5, "mode": "standard"},
        max_pool_connections=32,
        # Path-style addressing works with every S3-compatible server; AWS
        # still accepts it for the buckets the store needs.
        s3={"addressing_style": "path"} if endpoint else {},
        # Checksums only where a request needs one: some S3-compatible servers
        # reject the newer default trailing checksums.
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
    )
    session = session_module.get_session()
    return session.create_client("s3", endpoint_url=endpoint, region_name=region, config=config)


def error_code(exc: BaseException) -> str | None:
    """The S3 error code of a botocore ClientError, else None."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return None
    code = response.get("Error", {}).get("Code")
    if code is None:
        code = str(response.get("ResponseMetadata", {}).get("HTTPStatusCode", ""))
    return str(code)


def is_not_found(exc: BaseException) -> bool:
    return error_code(exc) in _NOT_FOUND


def io_error(operation: str, where: str, exc: BaseException, key: str | None = None) -> StoreIOError:
    """A StoreIOError for a failed S3 request (code and a short message, never credentials)."""
    code = error_code(exc)
    server = unreachable_server(exc)
    if code in ("AccessDenied", "AllAccessDisabled"):
        text = f"S3 {code}: these credentials may not {operation} here (their role does not allow it; docs/store.md#roles)"
    elif code is not None:
        text = f"S3 {code}"
    elif server is not None:
        text = f"cannot reach the S3 server at {server} ({type(exc).__name__})"
    else:
        text = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".strip()
        if type(exc).__name__ in ("NoCredentialsError", "PartialCredentialsError"):
            text = "no AWS credentials found (environment, AWS_PROFILE, config files or an instance role)"
    return StoreIOError(operation, where, OSError(errno.EIO, text), key=key)


_UNREACHABLE = ("EndpointConnectionError", "ConnectTimeoutError", "ReadTimeoutError", "ConnectionClosedError",
                "ProxyConnectionError")


def unreachable_server(exc: BaseException) -> str | None:
    """The endpoint (scheme, host and port) a failed request could not reach, or None for other failures.

    Only the server's address is kept: no path, no query and no user
    information (an endpoint from the environment could carry one).
    """
    if type(exc).__name__ not in _UNREACHABLE:
        return None
    url = str(getattr(exc, "kwargs", {}).get("endpoint_url") or "")
    parts = urlsplit(url)
    if not parts.scheme or not parts.hostname:
        return "its endpoint"
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host}" + (f":{parts.port}" if parts.port else "")


def server_time(response: dict[str, Any]) -> float | None:
    """The server's clock from a response's Date header (seconds since the epoch), if present."""
    headers = response.get("ResponseMetadata", {}).get("HTTPHeaders", {})
    date = headers.get("date")
    if not date:
        return None
    try:
        return parsedate_to_datetime(date).timestamp()
    except (TypeError, ValueError):
        return None


def client_errors() -> tuple[type[BaseException], ...]:
    """The botocore exception classes a request may raise."""
    from botocore.exceptions import BotoCoreError, ClientError

    return (ClientError, BotoCoreError)
