"""The batch stepper as a lockstep driver's simulator seam (``new_episode``, ``step_all``, ``observe_all``).

:func:`emberbench.records.lockstep.play_lockstep` asks for each episode's
state with ``new_episode(scenario, seed)``, reads it as it would a
:class:`~emberbench.sim.simulator.Simulation`, and advances the running
episodes with ``step_all(episodes, codes)``. :class:`LockstepEpisodes`
answers both over one :class:`~emberbench.sim.batch.SimulationBatch`, so a
lockstep step of the driver is one vectorized step of the simulator;
``observe_all(episodes)`` reads every episode's observation and people
inside from the batch's arrays at once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .batch import SimulationBatch
from .observation import Observation
from .scenario import Scenario
from .simulator import Outcome


class LockstepEpisodes:
    """A lockstep driver's simulator seam over one :class:`SimulationBatch`: ``new_episode`` and ``step_all``.

    :func:`emberbench.records.lockstep.play_lockstep` makes each episode with
    ``new_episode(scenario, seed)`` and reads it as it would a
    :class:`Simulation` (``done``, ``t``, ``observation()``, ``inside_ids()``,
    ``outcome()``); ``step_all(episodes, codes)`` advances the episodes it
    lists by one step, all in one :meth:`SimulationBatch.step`. A running
    episode that the driver no longer lists was given up: it is abandoned.
    A slot is free again once its episode's outcome was read, or once it
    was given up.

    Args:
        width: the most episodes the driver keeps at once (the batch size).
    """

    def __init__(self, width: int) -> None:
        self.batch = SimulationBatch(width)
        self._episodes: list[BatchEpisode | None] = [None] * width

    def new_episode(self, scenario: Scenario, seed: int) -> BatchEpisode:
        """Start (scenario, seed) in a free slot.

        Raises:
            RuntimeError: every slot holds an episode that is running or whose outcome was not read.
        """
        for slot, held in enumerate(self._episodes):
            if held is None or held.released:
                self.batch.start(slot, scenario, seed)
                episode = BatchEpisode(self.batch, slot)
                self._episodes[slot] = episode
                return episode
        raise RuntimeError(f"all {self.batch.size} slots are in use: read the outcome of a finished episode first")

    def observe_all(self, episodes: Sequence[BatchEpisode]) -> tuple[list[Observation], list[list[str]]]:
        """Each episode's observation for its coming step and the ids of its people inside, read in one go.

        The same as ``observation()`` and ``inside_ids()`` of each episode
        (:meth:`SimulationBatch.observations`).

        Raises:
            ValueError: an episode is not the one its slot holds.
        """
        for episode in episodes:
            if self._episodes[episode.slot] is not episode:
                raise ValueError(f"episode in slot {episode.slot} is not an episode of this batch")
        return self.batch.observations([episode.slot for episode in episodes])

    def step_all(self, episodes: Sequence[BatchEpisode], codes: Sequence[np.ndarray]) -> None:
        """Advance ``episodes`` (each running) by one step with their move codes; abandon running episodes not listed.

        Raises:
            ValueError: an episode is not running in this batch, or is listed twice.
        """
        given: dict[int, np.ndarray] = {}
        for episode, moves in zip(episodes, codes, strict=True):
            if self._episodes[episode.slot] is not episode or episode.slot in given:
                raise ValueError(f"episode in slot {episode.slot} is not a running episode of this batch")
            given[episode.slot] = moves
        live = self.batch.live
        if not set(given) <= set(live):
            raise ValueError("every episode to step must be running")
        for slot in live:
            if slot not in given:
                self.batch.abandon(slot)
                self._episodes[slot].released = True  # type: ignore[union-attr]
        self.batch.step([given[slot] for slot in self.batch.live])


class BatchEpisode:
    """One episode of a :class:`LockstepEpisodes`, read like a :class:`Simulation`."""

    __slots__ = ("batch", "released", "slot")

    def __init__(self, batch: SimulationBatch, slot: int) -> None:
        self.batch = batch
        self.slot = slot
        self.released = False

    @property
    def done(self) -> bool:
        """True when the episode has ended."""
        return self.batch.done(self.slot)

    @property
    def t(self) -> int:
        """Steps played."""
        return self.batch.steps(self.slot)

    def observation(self) -> Observation:
        """The observation for the coming step."""
        return self.batch.observation(self.slot)

    def inside_ids(self) -> list[str]:
        """Ids of the people inside, in scenario order."""
        return self.batch.inside_ids(self.slot)

    def outcome(self) -> Outcome:
        """The finished episode's outcome; its slot is free afterwards."""
        outcome = self.batch.outcome(self.slot)
        self.released = True
        return outcome
