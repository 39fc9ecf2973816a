"""One HTTP exchange with an OpenAI-compatible server, with httpx.

:class:`Server` holds the base URL, the key and the per-request timeout, and
one :class:`httpx.Client` shared by every policy of the process that talks to
that server (a pool of kept-alive connections). :meth:`Server.post` sends the
exact body bytes it is given and returns the exact body bytes of a 200
response, read under a size cap; every other outcome raises:

* :class:`~.retry.Transient` for what a later attempt may cure: HTTP 408, 429
  and 5xx (with the server's ``Retry-After``), timeouts (the client's timeout
  between bytes, or the whole request passing its deadline), connections
  refused, reset or cut before the body was complete;
* :class:`Refused` for the rest: another HTTP status (400, 401, 404...), a
  body over the cap.

The key is sent as ``Authorization: Bearer <key>`` and appears nowhere else:
not in messages, not in the cache, not in the run's provenance.
"""

from __future__ import annotations

import threading
import time
import urllib.parse
from typing import Any

from .reply import MAX_BODY_BYTES, excerpt
from .retry import Transient, parse_retry_after

_RETRIED_STATUS = frozenset({408, 429})


class Refused(Exception):
    """A failure that another attempt will not cure (``cause`` says what, in one line)."""

    def __init__(self, cause: str) -> None:
        super().__init__(cause)
        self.cause = cause


def public_url(url: str) -> str:
    """``url`` without user, password, query or fragment: safe to show and to store."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host if parts.port is None else f"{host}:{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def check_base_url(url: str) -> str:
    """``url`` if it is an absolute http(s) URL with a host, else ValueError saying why."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"the base URL must be an http:// or https:// URL with a host, got {public_url(url)!r}")
    return url


class Server:
    """An OpenAI-compatible server: where to post, with which key and timeout.

    Args:
        base_url: e.g. ``http://127.0.0.1:8000/v1``; ``/chat/completions`` is appended.
        api_key: sent as a bearer token, or None to send no Authorization header.
        timeout: seconds one request may take, from sending to the last byte of the answer.
    """

    def __init__(self, base_url: str, api_key: str | None, timeout: float) -> None:
        import httpx

        self.base_url = check_base_url(base_url)
        self.name = public_url(base_url)
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.timeout = timeout
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        # Redirects are not followed: a POST is answered where it was sent, or it fails.
        self._client = httpx.Client(timeout=httpx.Timeout(timeout), headers=headers, follow_redirects=False)
        self._httpx = httpx

    def post(self, body: bytes, headers: dict[str, str]) -> bytes:
        """POST ``body`` to the chat-completions URL; the body of a 200 answer.

        Raises:
            Transient: a failure worth retrying.
            Refused: any other failure.
        """
        httpx = self._httpx
        deadline = time.monotonic() + self.timeout
        try:
            with self._client.stream("POST", self.url, content=body, headers=headers) as response:
                status = response.status_code
                data = _read_capped(response, deadline, self.timeout)
        except httpx.TimeoutException:
            raise Transient(f"no answer within {self.timeout:g} s") from None
        except httpx.TransportError as exc:
            raise Transient(f"{type(exc).__name__}: {excerpt(str(exc) or 'connection failed')}") from None
        if status == 200:
            return data
        cause = f"HTTP {status}{_server_message(data)}"
        if status in _RETRIED_STATUS or 500 <= status <= 599:
            raise Transient(cause, parse_retry_after(response.headers))
        raise Refused(cause)

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()


def _read_capped(response: Any, deadline: float, timeout: float) -> bytes:
    """The response body, at most :data:`MAX_BODY_BYTES`, before ``deadline``."""
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise Refused(f"HTTP {response.status_code} with a body larger than {MAX_BODY_BYTES} bytes")
        chunks.append(chunk)
        if time.monotonic() > deadline:
            raise Transient(f"no complete answer within {timeout:g} s")
    return b"".join(chunks)


def _server_message(data: bytes) -> str:
    """``: <message>`` from an error body (OpenAI's ``{"error": {"message"}}`` or plain text), or ''."""
    import json

    text = data[:4096].decode("utf-8", "replace").strip()
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        error = parsed.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        text = message if isinstance(message, str) else ""
    return f": {excerpt(text)}" if text else ""


_SERVERS: dict[tuple[str, str | None, float], Server] = {}
_SERVERS_LOCK = threading.Lock()


def server_for(base_url: str, api_key: str | None, timeout: float) -> Server:
    """The process's :class:`Server` for these settings (made on first use, then shared)."""
    key = (base_url, api_key, timeout)
    with _SERVERS_LOCK:
        server = _SERVERS.get(key)
        if server is None:
            server = _SERVERS[key] = Server(base_url, api_key, timeout)
        return server


__all__ = ["Refused", "Server", "check_base_url", "public_url", "server_for"]
