"""Per-episode rows of results: the manifest's columns (scenario, seed, families) beside each episode's metrics.

One row per episode of a verified result, in manifest order:
:data:`EPISODE_COLUMNS` are the model id, the manifest index, the scenario
id, the seed, the scenario's families (comma-separated, in the suite's
declaration order), the termination, every integer count of the episode
(docs/metrics.md) and the twelve metrics, each the value stored in the
artifact (a float, ``exits_used`` an integer, None where undefined). The
column set is version :data:`EPISODE_TABLE_VERSION`; it changes only with a
new version.

The rows come from results that have been verified: from an
:class:`~emberbench.results.artifact.EvaluationResult` (verified when it was
loaded) or streamed from an artifact file by the library's streaming
verifier (:class:`~emberbench.results.stream.ArtifactStream`), which raises
if any episode fails; a writer that streams them to a file therefore makes
the file visible only after the whole artifact has passed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from ..records.metric_defs import METRICS
from ..records.metrics import COUNT_KEYS, EpisodeMetrics
from ..sim.suite import Suite
from ..tables.table import Column, Table, columns
from .manifest import EvaluationManifest, ManifestEntry

EPISODE_TABLE_VERSION = "1.0"
"""Version of the column set of :data:`EPISODE_COLUMNS` (kept in a Parquet file's metadata)."""
EPISODE_COLUMNS: tuple[Column, ...] = columns(
    "model_id", ("index", "int"), "scenario_id", ("seed", "uint64"), "families", "termination",
    *((name, "int") for name in COUNT_KEYS),
    *((m.name, "int" if m.name == "exits_used" else "float") for m in METRICS),
)
SHOWN_COLUMNS = ("index", "scenario_id", "seed", "evacuated_rate", "casualty_rate", "mean_exposure")
"""The columns a result shows in a notebook or terminal (``to_pandas()`` has them all)."""


def families_by_scenario(suite: Suite | None, manifest: EvaluationManifest) -> dict[str, str | None]:
    """Each scheduled scenario's families, comma-separated (None for every scenario when no suite is known).

    Without ``suite``, the suite shipped under the manifest's suite id and
    hash is used when there is one.
    """
    if suite is None:
        from ..sim.suite import SHIPPED_SUITES, load_suite

        shipped = load_suite(manifest.suite_id) if manifest.suite_id in SHIPPED_SUITES else None
        suite = shipped if shipped is not None and shipped.hash == manifest.suite_hash else None
    ids = {e.scenario_id for e in manifest.episodes}
    if suite is None:
        return dict.fromkeys(ids)
    return {sid: ",".join(suite.families_of(sid)) for sid in ids}


def episode_row(model_id: str, entry: ManifestEntry, metrics: EpisodeMetrics, families: str | None) -> tuple[Any, ...]:
    """The row of one episode (values as stored in the artifact)."""
    form = metrics.to_dict()
    return (model_id, entry.index, entry.scenario_id, entry.seed, families, metrics.termination,
            *(form["counts"][name] for name in COUNT_KEYS), *(form[m.group][m.name] for m in METRICS))


def result_table(result: Any, suite: Suite | None = None) -> Table:
    """The rows of an :class:`~emberbench.results.artifact.EvaluationResult` held in memory."""
    families = families_by_scenario(suite, result.manifest)
    rows = tuple(episode_row(result.model_id, e.entry, e.metrics, families[e.entry.scenario_id])
                 for e in result.episodes)
    title = (f"{result.model_id}: {len(result.episodes)}/{len(result.manifest.episodes)} episodes, manifest "
             f"{result.manifest.hash[:12]}, result {result.digest[:12]}")
    return Table(EPISODE_COLUMNS, rows, title=title, note="one row per episode; to_pandas() has every count and metric")


def artifact_rows(path: str | os.PathLike[str], suite: Suite, *, replayer: Any = None) -> Iterator[tuple[Any, ...]]:
    """The rows of the artifact at ``path``, one at a time, as the streaming verifier passes each episode.

    The iteration raises (ResultError...) if the artifact fails any check,
    also after rows were yielded: a consumer must discard what it made of
    them then (an atomic writer does).
    """
    from .stream import ArtifactStream

    stream = ArtifactStream(path, suite, replayer=replayer)
    families = families_by_scenario(suite, stream.manifest)
    for e in stream:
        yield episode_row(stream.model_id, e.entry, e.metrics, families[e.entry.scenario_id])


__all__ = ["EPISODE_COLUMNS", "EPISODE_TABLE_VERSION", "SHOWN_COLUMNS", "artifact_rows", "episode_row",
           "families_by_scenario", "result_table"]
