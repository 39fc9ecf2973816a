"""How a worker drives its policy over a list of episodes: one at a time, in lockstep batches, or concurrently.

The runner chooses; the records never depend on the choice
(docs/model-interface.md, "Policy forms"):

* **one at a time** (the default): a fresh policy per episode, each episode
  played to its end before the next starts;
* **batched** (``--batch-size B``): the factory's batch form
  (:mod:`emberbench.policies.forms`) acts for up to B episodes in lockstep,
  one call per step (:func:`emberbench.records.lockstep.play_lockstep`);
* **concurrent** (``--concurrency N``): a fresh policy per episode, up to N
  episodes in flight at once, for policies that mostly wait (a served model,
  an external agent, an asynchronous policy). Synchronous policies play on
  threads, asynchronous ones (``async def __call__``) on one event loop.

Every driver yields ``(outcome, record bytes)`` in the order of the tasks and
stops as a one-at-a-time run does: when an episode fails, the episodes
before it are yielded and the error is raised; later ones are given up.
Asynchronous policies work in every driver but the batched one; without
concurrency they are awaited one at a time.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import PolicyError
from ..io.canonical import canonical_bytes, sha256_hex
from ..policies.forms import batch_factory_of, is_async_policy
from ..policies.served.usage import episode_usage
from ..policies.spec import closing
from ..records.episode import play_episode, play_episode_async
from ..records.lockstep import StepAll, play_lockstep
from ..records.metrics import EpisodeMetrics
from ..records.record import RunRecord
from ..results.manifest import ManifestEntry
from ..sim.suite import Suite
from .outcome import EpisodeOutcome

MAX_WIDTH = 4096
"""Largest ``--batch-size`` and ``--concurrency``."""


@dataclass(frozen=True, slots=True)
class DriveOptions:
    """How to drive a policy (see the module docstring).

    Attributes:
        batch_size: None for the per-episode form; B (>= 1) for the batch form, B episodes in lockstep.
        concurrency: episodes in flight at once with the per-episode form (1: one at a time).

    Raises:
        PolicyError: a value out of range, or both a batch size and a concurrency above 1.
    """

    batch_size: int | None = None
    concurrency: int = 1

    def __post_init__(self) -> None:
        for name, value in (("batch size", self.batch_size), ("concurrency", self.concurrency)):
            if value is None and name == "batch size":
                continue
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_WIDTH:
                raise PolicyError(f"the {name} must be an integer from 1 to {MAX_WIDTH}, got {value!r}")
        if self.batch_size is not None and self.concurrency > 1:
            raise PolicyError("give either a batch size (the batch form, in lockstep) or a concurrency above 1 "
                              "(the per-episode form, episodes in flight at once), not both")

    @property
    def width(self) -> int:
        """Episodes a worker plays at once: the batch size or the concurrency."""
        return self.batch_size if self.batch_size is not None else self.concurrency


ONE_AT_A_TIME = DriveOptions()


def play_tasks(suite: Suite, tasks: Sequence[ManifestEntry], factory: Callable[[], Any],
               options: DriveOptions = ONE_AT_A_TIME, *, step_all: StepAll | None = None,
               ) -> Iterator[tuple[EpisodeOutcome, bytes]]:
    """Play ``tasks`` with policies from ``factory``, driven as ``options`` says; yield in task order.

    Args:
        suite: resolves the scenarios.
        tasks: the episodes to play.
        factory: the policy factory (a :class:`~emberbench.policies.spec.FreshPolicies`
            in a run); its ``batch_factory`` is used with a batch size.
        options: the driver.
        step_all: a step of many simulations for the batched driver (None: the batch stepper,
            :class:`~emberbench.sim.batch_seam.LockstepEpisodes`).

    Yields:
        ``(outcome, record bytes)`` per task, in task order.

    Raises:
        PolicyError: a batch size for a factory without a batch form.
        Exception: the first episode's failure, after the episodes before it.
    """
    if options.batch_size is not None:
        return _batched(suite, tasks, factory, options.batch_size, step_all)
    if options.concurrency > 1:
        return _concurrent(suite, tasks, factory, options.concurrency)
    return _one_at_a_time(suite, tasks, factory)


def outcome_of(entry: ManifestEntry, record: RunRecord, metrics: EpisodeMetrics,
               usage: Any = None) -> tuple[EpisodeOutcome, bytes]:
    """The outcome of a played episode, and its record's canonical bytes."""
    record_bytes = record.canonical_bytes()
    outcome = EpisodeOutcome(index=entry.index, record_digest=sha256_hex(record_bytes), record_bytes=record_bytes,
                             metrics_bytes=canonical_bytes(metrics.to_dict()), usage=usage)
    return outcome, record_bytes


def _scenario(suite: Suite, entry: ManifestEntry) -> Any:
    return suite.resolve(entry.scenario_id, entry.scenario_hash)


def _batched(suite: Suite, tasks: Sequence[ManifestEntry], factory: Any, width: int,
             step_all: StepAll | None) -> Iterator[tuple[EpisodeOutcome, bytes]]:
    make = batch_factory_of(factory)
    if make is None:
        raise PolicyError("a batch size needs a policy whose factory declares a batch form (batch_factory, "
                          "docs/model-interface.md); run it without a batch size, or with a concurrency if it waits")

    def played() -> Iterator[tuple[EpisodeOutcome, bytes]]:
        if not tasks:
            return
        with closing(make()) as policy:
            episodes = ((_scenario(suite, entry), entry.seed) for entry in tasks)
            for entry, (record, metrics) in zip(tasks, play_lockstep(episodes, policy, width, step_all=step_all)):
                yield outcome_of(entry, record, metrics)

    return played()


class _Owned:
    """The policy of one episode, closed exactly once (by its episode, or by a driver that gave it up)."""

    __slots__ = ("closed", "policy")

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.closed = False

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            with closing(self.policy):
                pass


def _play_owned(scenario: Any, entry: ManifestEntry, owned: _Owned) -> tuple[EpisodeOutcome, bytes]:
    """Play one episode with its own policy, read its usage, close it."""
    try:
        record, metrics = play_episode(scenario, entry.seed, owned.policy)
        return outcome_of(entry, record, metrics, episode_usage(owned.policy))
    finally:
        owned.close()


async def _play_owned_async(scenario: Any, entry: ManifestEntry, owned: _Owned) -> tuple[EpisodeOutcome, bytes]:
    try:
        record, metrics = await play_episode_async(scenario, entry.seed, owned.policy)
        return outcome_of(entry, record, metrics, episode_usage(owned.policy))
    finally:
        owned.close()


async def _drain() -> None:
    """Wait for every other task of the running loop to end."""
    others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    await asyncio.gather(*others, return_exceptions=True)


class EventLoopThread:
    """One asyncio event loop on a thread of its own, for the asynchronous policies of one run.

    Every asynchronous episode of a driver runs on this one loop, so a client
    its factory shares (an ``httpx.AsyncClient``) stays on one loop.
    """

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="emberbench-policy-loop", daemon=True)
        self._thread.start()

    def submit(self, coroutine: Coroutine[Any, Any, Any]) -> concurrent.futures.Future[Any]:
        """Run ``coroutine`` on the loop; its future."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    def close(self) -> None:
        """Wait for every episode still on the loop (cancelled ones unwind), then stop it and join its thread."""
        asyncio.run_coroutine_threadsafe(_drain(), self.loop).result()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


def _one_at_a_time(suite: Suite, tasks: Sequence[ManifestEntry], factory: Any,
                   ) -> Iterator[tuple[EpisodeOutcome, bytes]]:
    loop: EventLoopThread | None = None
    try:
        for entry in tasks:
            scenario = _scenario(suite, entry)
            owned = _Owned(factory())
            if is_async_policy(owned.policy):
                loop = loop or EventLoopThread()
                yield loop.submit(_play_owned_async(scenario, entry, owned)).result()
            else:
                yield _play_owned(scenario, entry, owned)
    finally:
        if loop is not None:
            loop.close()


def _concurrent(suite: Suite, tasks: Sequence[ManifestEntry], factory: Any, concurrency: int,
                ) -> Iterator[tuple[EpisodeOutcome, bytes]]:
    """Up to ``concurrency`` episodes in flight; results in task order; the first failure stops it."""
    loop: EventLoopThread | None = None
    pending: collections.deque[tuple[concurrent.futures.Future[Any], _Owned]] = collections.deque()
    upcoming = iter(tasks)
    with concurrent.futures.ThreadPoolExecutor(max_workers=concurrency,
                                               thread_name_prefix="emberbench-episode") as pool:
        try:
            while True:
                while len(pending) < concurrency:
                    entry = next(upcoming, None)
                    if entry is None:
                        break
                    scenario = _scenario(suite, entry)
                    owned = _Owned(factory())  # in this thread, in task order: factories need not be thread-safe
                    if is_async_policy(owned.policy):
                        loop = loop or EventLoopThread()
                        pending.append((loop.submit(_play_owned_async(scenario, entry, owned)), owned))
                    else:
                        pending.append((pool.submit(_play_owned, scenario, entry, owned), owned))
                if not pending:
                    return
                future, _ = pending.popleft()
                yield future.result()
        finally:  # given up (a failure, or the consumer stopped): cancel what waits, wait for what runs
            for future, _ in pending:
                future.cancel()
            concurrent.futures.wait([future for future, _ in pending])
            if loop is not None:
                loop.close()  # after the cancelled episodes have unwound
            for _, owned in pending:
                owned.close()  # an episode cancelled before it started still closes its policy


__all__ = ["MAX_WIDTH", "ONE_AT_A_TIME", "DriveOptions", "EventLoopThread", "outcome_of", "play_tasks"]
