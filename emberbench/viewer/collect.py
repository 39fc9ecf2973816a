"""One pass over a result: everything the report and the plots need, kept small.

:func:`collect_result` reads a result's authenticated episodes once, in
manifest order, and keeps per episode only its exact metric values (for the
statistics) and one picker row (for the viewer page); per scenario it adds
up the evacuations of every step (egress curves) and the cells where
casualties died (heat maps). Memory grows with the number of episodes by
those small summaries only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..results.manifest import EvaluationManifest
from ..records.metrics import metric_fractions
from ..statistics import EpisodeValues
from ..sim.suite import Suite
from .frames import casualty_cells
from .page import DEFAULT_EMBED, ResultPageBuilder
from .source import AuthenticatedEpisode, stream_result


@dataclass(slots=True)
class ScenarioTally:
    """Sums over the episodes of one scenario in one result.

    Attributes:
        episodes: episodes counted.
        population: people over those episodes.
        evacuated_at: evacuations at each step ``0..max_steps`` (index 0 is always 0).
        casualties_at: casualties per map cell (row-major).
    """

    episodes: int
    population: int
    evacuated_at: np.ndarray
    casualties_at: np.ndarray

    def egress(self) -> list[float]:
        """Share of all people of these episodes evacuated by the end of each step ``0..max_steps``."""
        if self.population == 0:
            return [0.0] * len(self.evacuated_at)
        return (np.cumsum(self.evacuated_at) / self.population).tolist()


@dataclass(slots=True)
class ResultCollection:
    """What one pass over a result keeps.

    Attributes:
        path: the artifact.
        model_id, manifest, digest: the result's identity.
        values: exact metric values of every episode, manifest order.
        tallies: per scenario id, its :class:`ScenarioTally`.
        page: the viewer page builder fed with every episode.
    """

    path: Path
    model_id: str
    manifest: EvaluationManifest
    digest: str
    values: list[EpisodeValues]
    tallies: dict[str, ScenarioTally]
    page: ResultPageBuilder = field(repr=False)


def episode_values_of(episode: AuthenticatedEpisode) -> EpisodeValues:
    """The statistics input of one authenticated episode of a result."""
    m = episode.metrics
    return EpisodeValues(
        index=int(episode.index or 0), scenario_id=episode.record.scenario_id, termination=m.termination,
        evacuated=m.count("evacuated"), casualties=m.count("casualties"), stranded=m.count("stranded"),
        values=metric_fractions(m),
    )


def _tally(tallies: dict[str, ScenarioTally], episode: AuthenticatedEpisode) -> None:
    sc, rec = episode.scenario, episode.record
    t = tallies.get(sc.id)
    if t is None:
        t = tallies[sc.id] = ScenarioTally(0, 0, np.zeros(sc.max_steps + 1, dtype=np.int64),
                                           np.zeros(sc.height * sc.width, dtype=np.int64))
    t.episodes += 1
    t.population += sc.population
    if rec.evacuations:
        steps = np.fromiter((e[0] for e in rec.evacuations), dtype=np.int64, count=len(rec.evacuations))
        t.evacuated_at += np.bincount(steps, minlength=sc.max_steps + 1)[: sc.max_steps + 1]
    for r, c in casualty_cells(sc, rec):
        t.casualties_at[r * sc.width + c] += 1


def collect_result(path: str | Path, suite: Suite, *, source_name: str | None = None,
                   embed: int = DEFAULT_EMBED) -> ResultCollection:
    """Read and verify a result once and keep what the report needs.

    Raises:
        ResultError: the artifact fails verification.
    """
    p = Path(path)
    stream = stream_result(p, suite)
    page = ResultPageBuilder(suite, source_name=source_name or p.name, embed=embed)
    values: list[EpisodeValues] = []
    tallies: dict[str, ScenarioTally] = {}
    for episode in stream:
        values.append(episode_values_of(episode))
        _tally(tallies, episode)
        page.add(episode)
    return ResultCollection(path=p, model_id=stream.model_id, manifest=stream.manifest, digest=stream.digest,
                            values=values, tallies=tallies, page=page)
