"""Served models: policies answered by a model behind an HTTP API (docs/served-models.md).

``openai:MODEL`` talks to any OpenAI-compatible chat-completions server
(vLLM, llama.cpp's server, a provider's API). The pieces, one module each:

* :mod:`.prompt`: the versioned prompt (fixed instructions and the observation's JSON);
* :mod:`.request`: the canonical request, its cache key and the HTTP body;
* :mod:`.reply`: the strict reading of the server's answer and the model's text;
* :mod:`.retry`: the one retry policy (backoff with jitter, Retry-After, caps);
* :mod:`.limits`: requests in flight and requests per minute, per server;
* :mod:`.transport`: one HTTP exchange (httpx);
* :mod:`.cache`: the response cache in the content-addressed store;
* :mod:`.usage`: requests, tokens and time per episode;
* :mod:`.openai_chat`: the factory and the per-episode policy.

Nothing here is imported by the core until a spec names ``openai:``.
"""

from __future__ import annotations

from .prompt import PROMPT_VERSION
from .usage import ModelUsage, episode_usage

__all__ = ["PROMPT_VERSION", "ModelUsage", "episode_usage"]
