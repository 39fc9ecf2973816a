"""``openai:MODEL``: a policy answered by a model behind an OpenAI-compatible chat-completions server.

Each step is one request (:mod:`.prompt`: fixed instructions and the
observation's canonical JSON, temperature 0, a fixed sampling seed), answered
from the response cache in the store when it holds the request
(:mod:`.cache`), else by the server: through the server's limits
(:mod:`.limits`), retried on transient failures (:mod:`.retry`). The model's
text is read strictly (:mod:`.reply`) and returned as the action, which the
episode validates like any other.

Where the server is and how hard to press it come from the environment
(:data:`ENVIRONMENT`): ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` as for
OpenAI's own clients, and ``EMBERBENCH_MODEL_*`` for timeouts, retries and
limits. None of these changes what is asked or what is done with an answer,
so none of them is part of the policy spec or the cache key.

Failures, as docs/served-models.md lists them: a server that gives no usable
answer raises :class:`~emberbench.errors.ModelError` (a ``PolicyError``),
naming the server and the cause; a model whose text is not an action raises
:class:`~emberbench.errors.InvalidActionError`. Either ends the episode and
stops the run, keeping the episodes completed before it.
"""

from __future__ import annotations

import math
import os
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import ModelCacheError, ModelError, PolicyError
from ...sim.observation import Observation
from .cache import ResponseCache
from .limits import RequestGate, gate_for
from .prompt import PARAMETERS, PROMPT_VERSION, render_messages
from .reply import Completion, EnvelopeError, parse_action, parse_completion
from .request import ChatRequest
from .retry import GaveUp, RetryPolicy, call_with_retries
from .usage import ModelUsage

DEFAULT_BASE_URL = "https://api.openai.com/v1"
MAX_MODEL_NAME = 256

ENVIRONMENT: dict[str, str] = {
    "OPENAI_BASE_URL": f"the server's base URL, up to /v1 (default {DEFAULT_BASE_URL})",
    "OPENAI_API_KEY": "sent as a bearer token; unset or empty: no Authorization header",
    "EMBERBENCH_MODEL_TIMEOUT": "seconds one request may take (default 120)",
    "EMBERBENCH_MODEL_MAX_ATTEMPTS": "attempts per step, the first included (default 6)",
    "EMBERBENCH_MODEL_MAX_SECONDS": "seconds one step may spend on retries and waits (default 300)",
    "EMBERBENCH_MODEL_BACKOFF": "upper bound of the first retry's wait, doubling up to 60 s (default 1)",
    "EMBERBENCH_MODEL_CONCURRENCY": "requests in flight to the server at once, per process (default 8)",
    "EMBERBENCH_MODEL_RPM": "requests started per minute, per process (default 0: no limit)",
}
"""Every environment variable the adapter reads, and what it sets."""


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """How to reach a server and how hard to press it (never part of a request or a record).

    Attributes:
        base_url: the server's base URL (``/chat/completions`` is appended).
        api_key: the bearer token, or None.
        timeout: seconds one request may take.
        retry: when to try again.
        concurrency: requests in flight at once (per process and server).
        per_minute: requests started per minute (per process and server), 0 for no limit.
    """

    base_url: str = DEFAULT_BASE_URL
    api_key: str | None = None
    timeout: float = 120.0
    retry: RetryPolicy = RetryPolicy()
    concurrency: int = 8
    per_minute: int = 0

    def __repr__(self) -> str:  # never show the key
        return (f"ServerSettings(base_url={self.base_url!r}, api_key={'***' if self.api_key else None}, "
                f"timeout={self.timeout!r}, retry={self.retry!r}, concurrency={self.concurrency!r}, "
                f"per_minute={self.per_minute!r})")

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> ServerSettings:
        """Read :data:`ENVIRONMENT` (an empty value counts as unset).

        Raises:
            PolicyError: a value that is not a number in its range, naming the variable.
        """
        def get(name: str) -> str | None:
            value = environ.get(name)
            return value if value else None

        def number(name: str, default: float, *, integer: bool = False, low: float = 0.0,
                   high: float = 86_400.0, strict: bool = True) -> Any:
            raw = get(name)
            if raw is None:
                return default
            try:
                value: float = int(raw) if integer else float(raw)
            except ValueError:
                value = math.nan
            if not (math.isfinite(value) and (value > low if strict else value >= low) and value <= high):
                kind = "an integer" if integer else "a number"
                rel = ">" if strict else ">="
                raise PolicyError(f"{name}={raw!r:.40}: must be {kind} {rel} {low:g} and <= {high:g}")
            return value

        retry = RetryPolicy(max_attempts=number("EMBERBENCH_MODEL_MAX_ATTEMPTS", 6, integer=True, high=100),
                            max_seconds=number("EMBERBENCH_MODEL_MAX_SECONDS", 300.0),
                            first_backoff=number("EMBERBENCH_MODEL_BACKOFF", 1.0, high=3600.0, strict=False))
        return cls(base_url=get("OPENAI_BASE_URL") or DEFAULT_BASE_URL, api_key=get("OPENAI_API_KEY"),
                   timeout=number("EMBERBENCH_MODEL_TIMEOUT", 120.0), retry=retry,
                   concurrency=number("EMBERBENCH_MODEL_CONCURRENCY", 8, integer=True, high=4096),
                   per_minute=number("EMBERBENCH_MODEL_RPM", 0, integer=True, high=10_000_000, strict=False))


def check_model_name(model: str, spec: str) -> str:
    """``model`` if it is 1-256 printable characters without surrounding spaces, else PolicyError."""
    if not model or len(model) > MAX_MODEL_NAME or not model.isprintable() or model.strip() != model:
        raise PolicyError(f"policy {spec!r}: the model name after 'openai:' must be 1-{MAX_MODEL_NAME} printable "
                          "characters without leading or trailing spaces")
    return model


class OpenAIChatFactory:
    """Makes one :class:`OpenAIChatPolicy` per episode; all of them share the server, its limits and the cache.

    Args:
        model: the model name sent in every request.
        settings: where the server is and its limits.
        store: a store for the response cache, or None for no cache.
        gate: the limits to use (default: the process's gate for this server and these limits).

    Raises:
        PolicyError: httpx is not installed, or the base URL is not an http(s) URL.
    """

    def __init__(self, model: str, settings: ServerSettings, *, store: Any = None,
                 gate: RequestGate | None = None) -> None:
        self.model = check_model_name(model, f"openai:{model}")
        try:
            import httpx  # noqa: F401
        except ImportError:
            raise PolicyError(f"policy 'openai:{model}' needs httpx: pip install 'emberbench[openai]'") from None
        from .transport import server_for

        try:
            self.server = server_for(settings.base_url, settings.api_key, settings.timeout)
        except ValueError as exc:
            raise PolicyError(f"policy 'openai:{model}': OPENAI_BASE_URL: {exc}") from None
        self.settings = settings
        self.gate = gate if gate is not None else gate_for(self.server.name, settings.concurrency,
                                                           settings.per_minute)
        self.cache = None if store is None else ResponseCache(store)

    def __call__(self) -> OpenAIChatPolicy:
        return OpenAIChatPolicy(self)


class OpenAIChatPolicy:
    """The policy of one episode: one request per step (or a cache hit); counts its usage."""

    def __init__(self, factory: OpenAIChatFactory) -> None:
        self._f = factory
        self._who = f"model {factory.model!r}"
        self._counts = dict.fromkeys(ModelUsage.__slots__, 0)  # type: ignore[arg-type]
        self._rng = random.Random()  # jitter only: timing, never content

    def usage(self) -> ModelUsage:
        """What this episode has cost so far (:class:`ModelUsage`)."""
        return ModelUsage(**self._counts)

    def close(self) -> None:
        """Nothing to release: the connection pool and the cache belong to the factory's server and store."""

    def __call__(self, observation: Observation) -> Any:
        f = self._f
        request = ChatRequest.build(f.model, render_messages(observation), PARAMETERS, PROMPT_VERSION)
        self._counts["steps"] += 1
        hit = f.cache.lookup(request) if f.cache is not None else None
        if hit is not None:
            self._counts["cache_hits"] += 1
            try:
                completion = parse_completion(hit.response_body)
            except EnvelopeError as exc:
                raise ModelCacheError(f"model cache entry {hit.entry_key}: its response is not a chat completion "
                                      f"({exc})") from None
        else:
            completion = self._ask(request, observation.step)
        return parse_action(completion, observation.step, self._who)

    def _ask(self, request: ChatRequest, step: int) -> Completion:
        """The server's answer to ``request`` (filed in the cache, if any); ModelError when there is none."""
        from .transport import Refused

        f = self._f
        body = request.body()
        headers = {"X-EMBERBench-Prompt-Version": PROMPT_VERSION}
        sent = 0

        def attempt() -> tuple[str, Completion]:
            nonlocal sent
            with f.gate.slot():
                sent += 1
                raw = f.server.post(body, headers)
            try:
                text = raw.decode("utf-8")
                return text, parse_completion(text)
            except (UnicodeDecodeError, EnvelopeError) as exc:
                cause = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else str(exc)
                raise Refused(f"HTTP 200 with a body that is not a chat completion: {cause}") from None

        start = time.monotonic()
        try:
            text, completion = call_with_retries(attempt, f.settings.retry, rng=self._rng)
        except GaveUp as exc:
            raise ModelError(f"{self._who} at {f.server.name}: no answer for step {step + 1}: {exc.why}; "
                             f"last failure: {exc.cause}", server=f.server.name, cause=exc.cause) from None
        except Refused as exc:
            raise ModelError(f"{self._who} at {f.server.name}: step {step + 1} failed: {exc.cause}",
                             server=f.server.name, cause=exc.cause) from None
        finally:
            self._count_requests(sent, time.monotonic() - start)
        self._counts["prompt_tokens"] += completion.prompt_tokens
        self._counts["completion_tokens"] += completion.completion_tokens
        if f.cache is not None:
            filed = f.cache.save(request, text, f.server.name)
            if filed.response_body != text:  # another writer filed its answer first: act on that one
                completion = parse_completion(filed.response_body)
        return completion

    def _count_requests(self, sent: int, seconds: float) -> None:
        counts = self._counts
        counts["requests"] += sent
        counts["retries"] += max(0, sent - 1)
        ms = round(seconds * 1000)
        counts["latency_ms"] += ms
        counts["max_latency_ms"] = max(counts["max_latency_ms"], ms)


def openai_factory(model: str, *, store: Any = None, environ: Mapping[str, str] | None = None) -> OpenAIChatFactory:
    """The factory for ``openai:MODEL``: settings from ``environ`` (default: the process's environment).

    Raises:
        PolicyError: a bad model name, environment value or base URL, or httpx missing.
    """
    check_model_name(model, f"openai:{model}")
    settings = ServerSettings.from_environment(os.environ if environ is None else environ)
    return OpenAIChatFactory(model, settings, store=store)


__all__ = ["DEFAULT_BASE_URL", "ENVIRONMENT", "OpenAIChatFactory", "OpenAIChatPolicy", "ServerSettings",
           "check_model_name", "openai_factory"]
