"""One chat-completion request: its canonical form, its cache key and the HTTP body sent.

The canonical request is the canonical JSON of ``{"model", "messages",
"parameters", "prompt_version"}``; its SHA-256 is the request's key in the
response cache. The HTTP body is the OpenAI chat-completions body built from
the same values (``model``, ``messages`` and each parameter at the top
level), also as canonical JSON, so the bytes sent are a function of the
canonical request alone. The prompt version travels in the instructions'
first line and in a header, not as a body field (strict servers refuse
unknown fields).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...io.canonical import canonical_bytes, sha256_hex


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """What one step asks the model.

    Attributes:
        model: the model name the server is asked for.
        messages: the chat messages (:func:`.prompt.render_messages`).
        parameters: sampling parameters (:data:`.prompt.PARAMETERS`).
        prompt_version: :data:`.prompt.PROMPT_VERSION`.
    """

    model: str
    messages: tuple[tuple[str, str], ...]
    parameters: tuple[tuple[str, Any], ...]
    prompt_version: str

    @classmethod
    def build(cls, model: str, messages: list[dict[str, str]], parameters: dict[str, Any],
              prompt_version: str) -> ChatRequest:
        """A request from plain messages (``{"role", "content"}``) and parameters."""
        return cls(model, tuple((m["role"], m["content"]) for m in messages), tuple(sorted(parameters.items())),
                   prompt_version)

    def to_dict(self) -> dict[str, Any]:
        """The canonical request: what the cache key hashes and what a cache entry shows."""
        return {"model": self.model, "messages": [{"role": r, "content": c} for r, c in self.messages],
                "parameters": dict(self.parameters), "prompt_version": self.prompt_version}

    def canonical_bytes(self) -> bytes:
        """Canonical JSON of :meth:`to_dict`."""
        return canonical_bytes(self.to_dict())

    @property
    def digest(self) -> str:
        """SHA-256 of the canonical request: the request's key in the response cache."""
        return sha256_hex(self.canonical_bytes())

    def body(self) -> bytes:
        """The HTTP body for ``POST {base}/chat/completions`` (canonical JSON)."""
        body: dict[str, Any] = {"model": self.model, "messages": self.to_dict()["messages"]}
        body.update(self.parameters)
        return canonical_bytes(body)


__all__ = ["ChatRequest"]
