"""For an auditor: the requests a served model was asked in an episode, and their cache entries.

A record holds the actions, not the prompts; but the prompts are a function
of the observations, which the record's replay reproduces. So
:func:`episode_requests` rebuilds every step's request from a record, and
:func:`episode_exchanges` looks each one up in the store's response cache,
giving exactly what the model was asked and what the server answered, step
by step. It sits with the records, above the served-model adapter
(:mod:`emberbench.policies.served`), because it replays them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..policies.served.cache import ResponseCache, ref_name
from ..policies.served.prompt import PARAMETERS, PROMPT_VERSION, render_messages
from ..policies.served.request import ChatRequest
from ..sim.scenario import Scenario
from ..sim.simulator import Simulation
from .episode import replay
from .record import RunRecord


def episode_requests(scenario: Scenario, record: RunRecord, model: str) -> list[ChatRequest]:
    """The request of every step of ``record`` for ``model`` (at this prompt version), in step order.

    Raises:
        RecordAuthenticationError: the record does not replay on ``scenario``.
    """
    observations = [Simulation(scenario, record.seed).observation()]

    def keep(sim: Simulation) -> None:
        if not sim.done:
            observations.append(sim.observation())

    replay(scenario, record, observer=keep)
    return [ChatRequest.build(model, render_messages(obs), PARAMETERS, PROMPT_VERSION) for obs in observations]


@dataclass(frozen=True, slots=True)
class Exchange:
    """One step: the request, its cache ref, and the answer filed for it (None when the cache has none)."""

    step: int
    request: ChatRequest
    ref: str
    response_body: str | None


def episode_exchanges(store: Any, scenario: Scenario, record: RunRecord, model: str) -> Iterator[Exchange]:
    """Every step's request with the answer the store's cache holds for it.

    Raises:
        ModelCacheError: an entry is damaged or filed under another request.
    """
    cache = ResponseCache(store)
    for step, request in enumerate(episode_requests(scenario, record, model), start=1):
        answer = cache.lookup(request)
        yield Exchange(step, request, ref_name(request.digest), None if answer is None else answer.response_body)


__all__ = ["Exchange", "episode_exchanges", "episode_requests"]
