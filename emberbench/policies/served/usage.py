"""Execution accounting of a served model: requests, cache hits, tokens and time, per episode.

A served policy counts what its episode cost and reports it through
``policy.usage()`` (:func:`episode_usage` reads it from any policy). The
numbers describe the execution, not the episode: they vary with the cache,
the network and the server's load, so they go into the run's provenance and
report, never into a run record, whose bytes depend only on the actions.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True, slots=True)
class ModelUsage:
    """What one episode (or, summed, one run) asked of a served model.

    Attributes:
        steps: observations answered.
        cache_hits: steps answered from the response cache (no request sent).
        requests: HTTP requests sent, retries included.
        retries: requests that repeated an earlier failed one.
        prompt_tokens, completion_tokens: as the server reported them for the requests sent now
            (answers from the cache cost nothing and add nothing).
        latency_ms: milliseconds spent getting answers from the server, waits for limits and
            retries included (cache hits excluded).
        max_latency_ms: the longest of those answers.
    """

    steps: int = 0
    cache_hits: int = 0
    requests: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: int = 0
    max_latency_ms: int = 0

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{f.name} must be a non-negative integer, got {value!r}")

    def __add__(self, other: ModelUsage) -> ModelUsage:
        """The usage of two episodes together (``max_latency_ms`` is the larger one)."""
        if not isinstance(other, ModelUsage):
            return NotImplemented
        summed = {f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)}
        summed["max_latency_ms"] = max(self.max_latency_ms, other.max_latency_ms)
        return ModelUsage(**summed)

    def describe(self) -> str:
        """One line for people: ``120 steps: 80 from the cache, 40 requests (2 retries), 9000 + 400 tokens, 12.3 s``."""
        return (f"{self.steps} steps: {self.cache_hits} from the cache, {self.requests} requests "
                f"({self.retries} retries), {self.prompt_tokens} prompt + {self.completion_tokens} completion "
                f"tokens, {self.latency_ms / 1000:.1f} s waiting for the server (slowest step "
                f"{self.max_latency_ms / 1000:.1f} s)")

    def to_dict(self) -> dict[str, int]:
        """The counts as a JSON object (integers only)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Any) -> ModelUsage:
        """Parse :meth:`to_dict`; unknown or missing keys are refused (ValueError)."""
        names = {f.name for f in fields(cls)}
        if not isinstance(data, dict) or set(data) != names:
            raise ValueError(f"model usage must be an object with exactly the keys {sorted(names)}")
        return cls(**data)


def episode_usage(policy: Any) -> ModelUsage | None:
    """The usage a policy reports for its episode (``policy.usage()``), or None if it reports none.

    The runner calls this after the episode, before the policy is closed.
    """
    usage = getattr(policy, "usage", None)
    if not callable(usage):
        return None
    value = usage()
    return value if isinstance(value, ModelUsage) else None


__all__ = ["ModelUsage", "episode_usage"]
