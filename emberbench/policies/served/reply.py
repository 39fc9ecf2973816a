"""From a server's answer to an action: the chat-completion envelope, then the model's text.

Two layers, two kinds of failure:

* :func:`parse_completion` reads the HTTP body of a successful response (the
  envelope: ``choices[0].message.content``, ``finish_reason``, ``usage``).
  A body that is not such a JSON object is the *server's* fault and raises
  :class:`EnvelopeError`, which the adapter turns into a
  :class:`~emberbench.errors.ModelError`.
* :func:`parse_action` reads the *model's* text. The reply format is one JSON
  object mapping person ids to moves, with nothing around it but whitespace,
  or that object alone inside one Markdown code fence (```` ```json ````).
  Anything else is an invalid action under the contract of
  docs/model-interface.md: :class:`~emberbench.errors.InvalidActionError`,
  naming the step, which ends the episode and stops the run like any invalid
  action. The object itself is then validated by
  :func:`emberbench.sim.actions.encode_action`, exactly as for every policy.

Both parse strictly under the input policy (:mod:`emberbench.io.input_policy`):
no duplicate keys, no NaN, capped size and depth.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ...errors import CanonicalFormError, InvalidActionError
from ...io.input_policy import AGENT_REPLY, parse_json

MAX_BODY_BYTES = 8 * 1024 * 1024
"""The largest response body read from a server (a reply holds at most AGENT_REPLY's 4 MiB of text)."""
MAX_BODY_VALUES = 400_000
_FENCE_RE = re.compile(r"```(?:json)?[ \t]*\r?\n(.*?)\r?\n[ \t]*```", re.S)
_EXCERPT = 120


class EnvelopeError(ValueError):
    """A response body that is not a chat completion (the message says why)."""


@dataclass(frozen=True, slots=True)
class Completion:
    """The parts of a chat completion the adapter uses.

    Attributes:
        content: ``choices[0].message.content`` (None when the model gave no text).
        finish_reason: ``choices[0].finish_reason`` (``"length"``: cut at the token limit).
        prompt_tokens, completion_tokens: from ``usage`` (0 when the server reports none).
    """

    content: str | None
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int


def _count(usage: Any, name: str) -> int:
    value = usage.get(name) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def parse_completion(body: bytes | str) -> Completion:
    """Read a chat-completion response body.

    Raises:
        EnvelopeError: not strict JSON, not an object, or no ``choices[0].message``.
    """
    if len(body) > MAX_BODY_BYTES:
        raise EnvelopeError(f"a response body larger than {MAX_BODY_BYTES} bytes")
    try:
        data = parse_json(body, where="response body", max_values=MAX_BODY_VALUES)
    except CanonicalFormError as exc:
        raise EnvelopeError(f"malformed JSON ({exc})") from None
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise EnvelopeError("a JSON body without choices[0]")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise EnvelopeError("a JSON body without choices[0].message")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise EnvelopeError(f"choices[0].message.content is a {type(content).__name__}, not a string")
    finish = choices[0].get("finish_reason")
    usage = data.get("usage")
    return Completion(content, finish if isinstance(finish, str) else None,
                      _count(usage, "prompt_tokens"), _count(usage, "completion_tokens"))


def excerpt(text: str) -> str:
    """At most 120 characters of ``text`` on one line (control characters shown as ``?``)."""
    short = text if len(text) <= _EXCERPT else text[:_EXCERPT - 3] + "..."
    return "".join("?" if ord(ch) < 32 or 127 <= ord(ch) < 160 else ch for ch in short)


def parse_action(completion: Completion, step: int, who: str) -> dict[str, Any]:
    """The action in the model's text, as a JSON object (not yet checked against the people inside).

    Args:
        completion: the parsed response.
        step: the observation's step (0-based; messages say ``step + 1`` as every action error does).
        who: names the model in messages (``model 'x'``).

    Raises:
        InvalidActionError: the text is missing, is not one JSON object (optionally in one code
            fence), breaks the input policy, or was cut at the token limit before it was complete.
    """
    where = f"action for step {step + 1}"
    text = completion.content
    if text is None:
        raise InvalidActionError(f"{where}: {who} replied with no text content")
    body = text.strip()
    fenced = _FENCE_RE.fullmatch(body)
    if fenced is not None:
        body = fenced.group(1).strip()
    cut = " (cut at the token limit)" if completion.finish_reason == "length" else ""
    if len(body.encode("utf-8", "surrogatepass")) > AGENT_REPLY.max_bytes:
        raise InvalidActionError(f"{where}: {who} replied with more than {AGENT_REPLY.max_bytes} bytes{cut}")
    try:
        action = parse_json(body, where="reply", max_values=AGENT_REPLY.max_values)
    except CanonicalFormError as exc:
        raise InvalidActionError(f"{where}: {who} replied with text that is not one JSON object{cut}: "
                                 f"{excerpt(text)!r} ({excerpt(str(exc))})") from None
    if not isinstance(action, dict):
        raise InvalidActionError(f"{where}: {who} replied with a JSON {type(action).__name__}, not an object{cut}: "
                                 f"{excerpt(text)!r}")
    return action


__all__ = ["MAX_BODY_BYTES", "Completion", "EnvelopeError", "excerpt", "parse_action", "parse_completion"]
