"""Aggregate and paired per-metric statistics (statistics version 1.0).

Everything is exact (``Fraction``) until the output dictionary, deterministic
(the bootstrap draws from a SHAKE-256 stream seeded by the inputs), and
strictly per metric: nothing here combines metrics, ranks models or names a
winner. The caller verifies result artifacts by replay and passes plain
values (:class:`EpisodeValues`, :class:`StatisticsContext`).

Public surface:

* :func:`aggregate_artifact` / :func:`paired_artifacts`: statistics of
  result artifact files, verified (one replay per record) while they stream;
* :func:`aggregate_statistics` / :func:`paired_statistics`: the fail-closed
  entry points over results in memory (re-verified by replay first);
* :func:`aggregate_from_table` / :func:`paired_from_tables` over compact
  :class:`EpisodeTable` columns;
* :func:`write_artifact`: save an artifact without building its whole text;
* :func:`aggregate_from_values` -> :class:`AggregateStatistics`
* :func:`paired_from_values` -> :class:`PairedStatistics`
* :func:`render_artifact` / :func:`artifact_tables` for the terminal.
"""

from __future__ import annotations

from .aggregate import (
    AggregateGroup,
    AggregateStatistics,
    MetricSummary,
    Robustness,
    aggregate_from_table,
    aggregate_from_values,
)
from .artifact import write_artifact
from .bootstrap import BootstrapInterval, bootstrap_interval
from .columns import EpisodeTable, TableBuilder
from .from_artifacts import aggregate_artifact, paired_artifacts
from .descriptive import QUANTILE_LEVELS, Descriptive, describe, type7_quantile
from .inputs import EpisodeKey, EpisodeValues, StatisticsContext
from .paired import DeltaColumn, PairedGroup, PairedMetric, PairedStatistics, paired_from_tables, paired_from_values
from .stream import bootstrap_seed
from .table import artifact_tables, render_artifact
from .verified import aggregate_statistics, paired_statistics

__all__ = [
    "QUANTILE_LEVELS",
    "AggregateGroup",
    "AggregateStatistics",
    "BootstrapInterval",
    "DeltaColumn",
    "Descriptive",
    "EpisodeTable",
    "EpisodeKey",
    "EpisodeValues",
    "MetricSummary",
    "PairedGroup",
    "PairedMetric",
    "PairedStatistics",
    "Robustness",
    "TableBuilder",
    "StatisticsContext",
    "aggregate_artifact",
    "aggregate_from_table",
    "aggregate_from_values",
    "aggregate_statistics",
    "artifact_tables",
    "bootstrap_interval",
    "bootstrap_seed",
    "describe",
    "paired_artifacts",
    "paired_from_tables",
    "paired_from_values",
    "paired_statistics",
    "render_artifact",
    "type7_quantile",
    "write_artifact",
]
