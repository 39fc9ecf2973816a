"""Playing many episodes in lockstep with one batch policy: one ``act_batch`` call per step for all of them.

:func:`play_lockstep` keeps up to ``width`` episodes running. At every step it
asks each running episode for its observation, calls the batch policy once
with all of them, checks each action against its own episode exactly as
:func:`~emberbench.records.episode.play_episode` does, and advances every
episode by one step through one call of ``step_all``. An episode that
finishes leaves its slot (``end_slot``) and the next episode starts in a new
one, so episodes of different lengths keep the batch full.

**Same records as one at a time.** Each simulation sees only its own
actions, and a record is built from its own simulation, so a record is the
one the per-episode form gives, whatever shared the batch. Results are
yielded in input order (a finished episode waits for the ones before it, at
most :data:`WINDOW_PER_SLOT` times ``width`` episodes started ahead of the
oldest unfinished one), so a consumer sees the sequence a one-at-a-time run
would give.

**Failures, as one at a time.** An invalid action ends its own episode: the
episodes before it in input order play on to their end and are yielded,
those after it are given up (their slots ended), then the error is raised,
so what was yielded is exactly what a one-at-a-time run keeps. An exception
from ``act_batch`` itself belongs to no single episode: every episode still
running is given up, the finished ones before the earliest of them are
yielded, and the exception is raised.

**The simulator seam.** ``new_episode(scenario, seed)`` makes an episode's
state and ``step_all(episodes, codes)`` advances a list of them by one step.
By default both come from :class:`~emberbench.sim.batch_seam.LockstepEpisodes`,
which steps all running episodes in one vectorized call of the batch
stepper, reads all their observations at once, and leaves each exactly as
its own step would
(docs/simulation-contract.md); given ``step_all`` alone, episodes are
:class:`~emberbench.sim.simulator.Simulation` objects (:func:`step_each`
steps each in turn).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..policies.forms import check_batch_actions
from ..sim.actions import encode_action
from ..sim.batch_seam import LockstepEpisodes
from ..sim.observation import Observation
from ..sim.scenario import Scenario
from ..sim.simulator import Simulation
from .metrics import EpisodeMetrics, metrics_from_outcome
from .record import RunRecord, record_from_outcome

WINDOW_PER_SLOT = 4
"""Episodes may start at most ``WINDOW_PER_SLOT * width`` ahead of the oldest one not yet yielded."""

StepAll = Callable[[Sequence[Any], Sequence[np.ndarray]], None]
NewEpisode = Callable[[Scenario, int], Any]
ObserveAll = Callable[[Sequence[Any]], tuple[Sequence[Observation], Sequence[Sequence[str]]]]


def _observe_each(episodes: Sequence[Any]) -> tuple[list[Observation], list[list[str]]]:
    """Each episode's observation and people inside, asked of each in turn (any simulator seam)."""
    return [sim.observation() for sim in episodes], [sim.inside_ids() for sim in episodes]


def step_each(episodes: Sequence[Simulation], codes: Sequence[np.ndarray]) -> None:
    """Advance each simulation by one step with its move codes (the default ``step_all``)."""
    for sim, moves in zip(episodes, codes, strict=True):
        sim.step(moves)


@dataclass(slots=True)
class _Running:
    position: int
    slot: int
    scenario: Scenario
    seed: int
    sim: Any


def play_lockstep(episodes: Iterable[tuple[Scenario, int]], policy: Any, width: int, *,
                  new_episode: NewEpisode | None = None, step_all: StepAll | None = None,
                  ) -> Iterator[tuple[RunRecord, EpisodeMetrics]]:
    """Play ``(scenario, seed)`` episodes with one batch policy, ``width`` at a time; yield records in input order.

    Args:
        episodes: what to play, in order.
        policy: a batch policy (``act_batch(observations, slots)``, optional
            ``end_slot(slot)``); it is not closed here.
        width: most episodes running at once (the batch size), at least 1.
        new_episode, step_all: the simulator seam (module docstring); both None for the batch stepper.

    Yields:
        ``(record, metrics)`` of each episode, in the order of ``episodes``.

    Raises:
        InvalidActionError: an action is invalid, after every episode before it was yielded.
        PolicyError: ``act_batch`` did not return one action per observation.
        Exception: whatever ``act_batch`` raised, after the finished episodes before the running ones.
    """
    if width < 1:
        raise ValueError(f"width must be at least 1, got {width}")
    observe_all: ObserveAll = _observe_each
    if new_episode is None and step_all is None:
        lanes = LockstepEpisodes(width)
        new_episode, step_all, observe_all = lanes.new_episode, lanes.step_all, lanes.observe_all
    elif new_episode is None:
        new_episode = Simulation
    elif step_all is None:
        step_all = step_each
    source = iter(episodes)
    end_slot = getattr(policy, "end_slot", None)
    running: list[_Running] = []
    finished: dict[int, tuple[RunRecord, EpisodeMetrics]] = {}
    started = emitted = 0
    exhausted = False
    failure: tuple[int, BaseException] | None = None

    def give_up(gone: Sequence[_Running]) -> None:
        for ep in gone:
            running.remove(ep)
            if callable(end_slot):
                end_slot(ep.slot)

    while True:
        while (failure is None and not exhausted and len(running) < width
               and started - emitted < WINDOW_PER_SLOT * width):
            try:
                scenario, seed = next(source)
            except StopIteration:
                exhausted = True
                break
            running.append(_Running(started, started, scenario, seed, new_episode(scenario, seed)))
            started += 1
        done = [ep for ep in running if ep.sim.done]
        for ep in done:
            outcome = ep.sim.outcome()
            finished[ep.position] = (record_from_outcome(ep.scenario, ep.seed, outcome),
                                     metrics_from_outcome(ep.scenario, outcome))
        give_up(done)
        while emitted in finished:
            yield finished.pop(emitted)
            emitted += 1
        if failure is not None and emitted >= failure[0]:
            raise failure[1]
        if not running:
            if exhausted:
                return
            continue
        observations, inside = observe_all([ep.sim for ep in running])
        try:
            actions = check_batch_actions(policy.act_batch(observations, [ep.slot for ep in running]),
                                          len(running), "batch policy")
        except Exception as exc:  # noqa: BLE001 - raised once the episodes before the running ones are out
            failure = (running[0].position, exc)
            give_up(list(running))
            continue
        codes: list[np.ndarray] = []
        for k, (ep, action) in enumerate(zip(running, actions)):
            try:
                codes.append(np.asarray(encode_action(action, inside[k], ep.sim.t), dtype=np.int64))
            except Exception as exc:  # noqa: BLE001 - this episode fails; the ones before it play on
                failure = (ep.position, exc)
                give_up(running[k:])
                break
        step_all([ep.sim for ep in running], codes)


__all__ = ["WINDOW_PER_SLOT", "play_lockstep", "step_each"]
