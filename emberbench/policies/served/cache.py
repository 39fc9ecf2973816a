"""The response cache of served models, in the content-addressed store.

One **cache entry** (format ``model_cache_entry`` :data:`MODEL_CACHE_VERSION`)
is an ordinary store object, the canonical JSON of::

    {"model_cache_entry": "1.0",
     "request_digest": "<SHA-256 of the canonical request>",
     "request": {"model", "messages", "parameters", "prompt_version"},
     "response_body": "<the server's response body, as text>",
     "server": "<the base URL that answered, without credentials or query>"}

and the ref ``model-cache/<first two hex digits>/<request digest>`` names it,
which also keeps it alive across gc. A request is answered from the cache
when that ref exists; its entry must be of this version and hold exactly the
request asked (else :class:`~emberbench.errors.ModelCacheError`). So an
auditor reads what the model was asked and what it answered with ``store
cat``, and a rerun, a resume or a repair asks the server nothing.

The first answer stored for a request is the answer: an entry is filed with a
compare-and-swap that creates the ref only if it is absent, and a writer that
loses that race (another worker asked the same request at the same moment)
uses the winner's answer instead of its own. Every episode that ever asks a
request, in this run or a later one, therefore acts on the same answer.

Only answers the adapter could read as chat completions are stored (HTTP
200 with a well-formed body), whether or not the model's text is a valid
action; errors and retries are never stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...io.canonical import canonical_bytes, is_sha256_hex
from ...errors import CanonicalFormError, ModelCacheError
from ...io.input_policy import parse_json
from ...io.versions import MODEL_CACHE_VERSION
from .reply import MAX_BODY_BYTES
from .request import ChatRequest

REF_PREFIX = "model-cache/"
ENTRY_KEYS = frozenset({"model_cache_entry", "request_digest", "request", "response_body", "server"})
MAX_ENTRY_BYTES = 8 * MAX_BODY_BYTES
"""An entry holds the request (a few KiB per observation) and a body of at most MAX_BODY_BYTES, JSON-escaped."""
_MAX_ENTRY_VALUES = 1_000_000


def ref_name(request_digest: str) -> str:
    """The ref that names the entry of a request (fanned out by the digest's first two hex digits)."""
    if not is_sha256_hex(request_digest):
        raise ValueError(f"not a SHA-256 digest: {request_digest!r:.80}")
    return f"{REF_PREFIX}{request_digest[:2]}/{request_digest}"


def entry_bytes(request: ChatRequest, response_body: str, server: str) -> bytes:
    """The canonical JSON of the entry for ``request``."""
    return canonical_bytes({"model_cache_entry": MODEL_CACHE_VERSION, "request_digest": request.digest,
                            "request": request.to_dict(), "response_body": response_body, "server": server})


def read_entry(data: bytes, *, where: str) -> dict[str, Any]:
    """Parse and check one entry's bytes (canonical JSON, this version, exact keys, a matching digest).

    Raises:
        ModelCacheError: naming ``where`` and what is wrong.
    """
    if len(data) > MAX_ENTRY_BYTES:
        raise ModelCacheError(f"{where}: larger than {MAX_ENTRY_BYTES} bytes")
    try:
        entry = parse_json(data, where=where, max_values=_MAX_ENTRY_VALUES)
    except CanonicalFormError as exc:
        raise ModelCacheError(str(exc)) from None
    if not isinstance(entry, dict):
        raise ModelCacheError(f"{where}: not a JSON object")
    version = entry.get("model_cache_entry")
    if version != MODEL_CACHE_VERSION:
        raise ModelCacheError(f"{where}: unsupported model_cache_entry {version!r} (this code reads "
                              f"{MODEL_CACHE_VERSION})")
    unknown, missing = sorted(set(entry) - ENTRY_KEYS), sorted(ENTRY_KEYS - set(entry))
    if unknown or missing:
        raise ModelCacheError(f"{where}: unknown key(s) {unknown}, missing key(s) {missing}")
    if canonical_bytes(entry) != data:
        raise ModelCacheError(f"{where}: not in canonical JSON form")
    if not isinstance(entry["response_body"], str) or not isinstance(entry["server"], str):
        raise ModelCacheError(f"{where}: response_body and server must be strings")
    request = entry["request"]
    if not is_sha256_hex(entry["request_digest"]) or entry["request_digest"] != _digest_of(request):
        raise ModelCacheError(f"{where}: request_digest is not the SHA-256 of its request")
    return entry


def _digest_of(request: Any) -> str:
    from ...io.canonical import sha256_hex

    try:
        return sha256_hex(canonical_bytes(request))
    except CanonicalFormError:
        return ""


@dataclass(frozen=True, slots=True)
class CachedAnswer:
    """A response body from the cache, and the entry (store key) it came from."""

    response_body: str
    entry_key: str


class ResponseCache:
    """The cache entries of one store.

    Args:
        store: a :class:`store.Store` (local or S3); reads and writes go through its interface only.
    """

    def __init__(self, store: Any) -> None:
        self.store = store

    def lookup(self, request: ChatRequest) -> CachedAnswer | None:
        """The stored answer to ``request``, or None when there is none.

        Raises:
            ModelCacheError: the entry is damaged, of another version, or for another request.
        """
        from ...store import RefError

        name = ref_name(request.digest)
        try:
            key = self.store.refs.get(name)
        except RefError as exc:
            if exc.reason == "no such ref":
                return None
            raise ModelCacheError(f"model cache ref {name}: {exc}") from None
        return self._answer(name, key, request)

    def _answer(self, name: str, key: str, request: ChatRequest) -> CachedAnswer:
        entry = read_entry(self.store.get(key), where=f"model cache entry {key} (ref {name})")
        if entry["request_digest"] != request.digest:
            raise ModelCacheError(f"model cache entry {key} (ref {name}) holds request {entry['request_digest']}, "
                                  f"not {request.digest}")
        return CachedAnswer(entry["response_body"], key)

    def save(self, request: ChatRequest, response_body: str, server: str) -> CachedAnswer:
        """File ``response_body`` as the answer to ``request``, unless an answer is already filed.

        Returns:
            The answer now filed: this one, or the one another writer filed first.
        """
        from ...store import RefConflictError

        data = entry_bytes(request, response_body, server)
        key = self.store.put(data)
        name = ref_name(request.digest)
        try:
            self.store.refs.compare_and_swap(name, None, key)
        except RefConflictError:
            return self._answer(name, self.store.refs.get(name), request)
        return CachedAnswer(response_body, key)


__all__ = ["ENTRY_KEYS", "REF_PREFIX", "CachedAnswer", "ResponseCache", "entry_bytes", "read_entry", "ref_name"]
