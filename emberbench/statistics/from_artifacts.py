"""Statistics straight from result artifact files: verified while they stream, each record replayed once.

These are what the ``stats`` and ``compare`` commands call. The artifact is
verified completely (:func:`emberbench.results.stream.verify_artifact`) while
each verified episode's metric values go into a compact
:class:`~.columns.EpisodeTable`; nothing else of the episode is kept. The
statistics are computed only after the whole file has passed, so a failure
anywhere yields no statistics. The artifacts are byte-identical to those of
:func:`~.verified.aggregate_statistics` and
:func:`~.verified.paired_statistics` on the loaded results.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..results.stream import StreamedEpisode, verify_artifact
from ..sim.suite import Suite
from .aggregate import AggregateStatistics, Mapper, aggregate_from_table
from .columns import TableBuilder
from .paired import PairedStatistics, paired_from_tables
from .verified import DEFAULT_RESAMPLES, context_of


def _collector(builder: TableBuilder) -> Any:
    def add(e: StreamedEpisode) -> None:
        builder.add_metrics(e.entry.index, e.entry.scenario_id, e.metrics)

    return add


def aggregate_artifact(path: str | Path, suite: Suite, resamples: int = DEFAULT_RESAMPLES, *, replayer: Any = None,
                       mapper: Mapper | None = None) -> AggregateStatistics:
    """Aggregate statistics of the artifact at ``path``, verified (one replay per record) as it is read.

    Args:
        replayer: where records are replayed (see :mod:`emberbench.records.replay`).
        mapper: where the (group, metric) jobs run (see :data:`~.aggregate.Mapper`).

    Raises:
        ResultError: the artifact fails a check.
        StatisticsInputError: an invalid ``resamples``.
    """
    from .inputs import check_resamples

    check_resamples(resamples)
    builder = TableBuilder()
    done = verify_artifact(path, suite, sink=_collector(builder), replayer=replayer)
    table = builder.build()
    del builder
    return aggregate_from_table(context_of(done.manifest, suite), done.model_id, done.digest, table, resamples,
                                mapper=mapper)


def paired_artifacts(path_a: str | Path, path_b: str | Path, suite: Suite, resamples: int = DEFAULT_RESAMPLES, *,
                     replayer: Any = None, mapper: Mapper | None = None) -> PairedStatistics:
    """Paired A - B statistics of two artifacts: manifests compared from the headers first, then both verified.

    Raises:
        ResultError: an artifact fails a check.
        PairingError: the manifests differ (refused before either file is read in full).
        StatisticsInputError: an invalid ``resamples``.
    """
    from ..results.pairing import verify_pair
    from .inputs import check_resamples

    check_resamples(resamples)
    builder_a, builder_b = TableBuilder(), TableBuilder()
    done_a, done_b = verify_pair(path_a, path_b, suite, sink_a=_collector(builder_a),
                                 sink_b=_collector(builder_b), replayer=replayer)
    table_a, table_b = builder_a.build("result A"), builder_b.build("result B")
    del builder_a, builder_b
    return paired_from_tables(context_of(done_a.manifest, suite), done_a.model_id, done_b.model_id, done_a.digest,
                              done_b.digest, table_a, table_b, resamples, mapper=mapper)


__all__ = ["aggregate_artifact", "paired_artifacts"]
