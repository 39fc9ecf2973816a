"""The forms a policy can take: one episode at a time, a batch of episodes in lockstep, or asynchronous.

Every policy starts from a *factory* (docs/model-interface.md). What the
factory returns when called decides how one episode is driven:

* **per episode** (the usual form): a callable ``policy(observation) -> action``,
  new for every episode;
* **asynchronous**: the same, but ``policy(observation)`` is a coroutine
  (``async def __call__``); the runner awaits it, so many episodes can wait
  on a model at once (``--concurrency``).

A factory may also *declare* a **batch form**: an attribute ``batch_factory``,
a callable with no arguments that returns a new :class:`BatchPolicy`. A batch
policy acts for many episodes at once, one call per lockstep step
(``--batch-size``)::

    class MyBatchPolicy:
        def act_batch(self, observations, slots):   # one call per step, all episodes at once
            return [decide(obs) for obs in observations]

        def end_slot(self, slot):                    # optional: the episode in ``slot`` is over
            ...

        def close(self):                             # optional: the batch is over
            ...

**Slots keep episodes apart.** ``slots[k]`` names the episode of
``observations[k]`` for as long as that episode lasts. Within one batch
policy object a slot is given to exactly one episode, and never again once
it ended (``end_slot``); slot numbers grow from 0 in the order episodes
start. A batch policy that keeps anything about an episode (a plan, a
recurrent state) keys it by slot and forgets it in ``end_slot``; what it
shares between slots must be read-only (weights, a routing table of the map),
or records would depend on which episodes happened to share a batch. This is
the batch form of the fresh-policy-per-episode rule: a per-episode policy
is a new object per episode; a batch policy is a new object per batch (a
runner's or a Ray worker call's group of episodes) with a fresh slot per
episode.

:class:`SlotPolicies` turns any per-episode factory into a batch policy by
keeping one fresh per-episode policy per slot; the built-in baselines declare
their batch form with it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ..errors import PolicyError
from ..sim.observation import Observation

BATCH_ATTRIBUTE = "batch_factory"
"""The attribute by which a policy factory declares its batch form."""


@runtime_checkable
class BatchPolicy(Protocol):
    """A policy that acts for several episodes at once (one call per lockstep step).

    ``act_batch(observations, slots)`` returns one action per observation, in
    the same order; ``slots[k]`` identifies the episode of ``observations[k]``
    within this object's life (see the module docstring). Optional methods:
    ``end_slot(slot)``, called once an episode is over (finished, or given
    up after another episode's failure), and ``close()``, called once the
    batch is over.
    """

    def act_batch(self, observations: Sequence[Observation], slots: Sequence[int]) -> Sequence[Any]: ...


BatchFactory = Callable[[], BatchPolicy]


def batch_factory_of(factory: Any) -> BatchFactory | None:
    """The batch form a policy factory declares (its ``batch_factory`` attribute), or None.

    Raises:
        PolicyError: the attribute exists but is not callable.
    """
    declared = getattr(factory, BATCH_ATTRIBUTE, None)
    if declared is None:
        return None
    if not callable(declared):
        raise PolicyError(f"the policy factory's {BATCH_ATTRIBUTE!r} must be a callable with no arguments that "
                          f"returns a batch policy, got {type(declared).__name__}")
    return declared


def check_batch_policy(policy: Any, where: str) -> BatchPolicy:
    """``policy`` if it has a callable ``act_batch``; PolicyError naming ``where`` otherwise."""
    if not callable(getattr(policy, "act_batch", None)):
        raise PolicyError(f"{where}: the batch factory returned {type(policy).__name__}, which has no act_batch "
                          "method (docs/model-interface.md, batch policies)")
    return policy


def check_batch_actions(actions: Any, count: int, where: str) -> Sequence[Any]:
    """The actions ``act_batch`` returned, if they are a sequence of exactly ``count``; PolicyError otherwise."""
    if isinstance(actions, (str, bytes, Mapping)) or not isinstance(actions, Sequence):
        raise PolicyError(f"{where}: act_batch must return a sequence of actions (one per observation), "
                          f"got {type(actions).__name__}")
    if len(actions) != count:
        raise PolicyError(f"{where}: act_batch returned {len(actions)} actions for {count} observations")
    return actions


def is_async_policy(policy: Any) -> bool:
    """Whether calling ``policy`` gives a coroutine to await (an ``async def`` function or ``__call__``)."""
    if inspect.iscoroutinefunction(policy):
        return True
    call = getattr(type(policy), "__call__", None)
    return call is not None and inspect.iscoroutinefunction(call)


class SlotPolicies:
    """A batch policy made of one fresh per-episode policy per slot (the batch form of any factory).

    The policy of a slot is built by ``factory`` when the slot first acts and
    closed (``close()``, if it has one) when the slot ends, so every episode
    still has a policy of its own: records are exactly those of the
    per-episode form. Only synchronous per-episode policies fit.

    Args:
        factory: the per-episode factory (called once per slot).
    """

    def __init__(self, factory: Callable[[], Callable[[Observation], Any]]) -> None:
        self._factory = factory
        self._policies: dict[int, Any] = {}

    def act_batch(self, observations: Sequence[Observation], slots: Sequence[int]) -> list[Any]:
        """One action per observation, each from the policy of its slot."""
        policies = self._policies
        out = []
        for obs, slot in zip(observations, slots, strict=True):
            policy = policies.get(slot)
            if policy is None:
                policy = policies[slot] = self._factory()
            out.append(policy(obs))
        return out

    def end_slot(self, slot: int) -> None:
        """Close and forget the policy of ``slot``."""
        policy = self._policies.pop(slot, None)
        close = getattr(policy, "close", None)
        if callable(close):
            close()

    def close(self) -> None:
        """End every slot still open."""
        for slot in sorted(self._policies):
            self.end_slot(slot)


__all__ = ["BATCH_ATTRIBUTE", "BatchFactory", "BatchPolicy", "SlotPolicies", "batch_factory_of",
           "check_batch_actions", "check_batch_policy", "is_async_policy"]
