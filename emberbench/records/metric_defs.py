"""The twelve per-episode metrics: names, where they live, kind and direction.

This table is the single definition used by the metrics module (to build the
metrics object), by the statistics module (to order, label and compare
metrics) and by the docs. The order of :data:`METRICS` is the order of every
list of metrics in every artifact.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["outcome", "behaviour", "proxy", "descriptive"]
Direction = Literal["higher", "lower", "none"]


@dataclass(frozen=True, slots=True)
class MetricDef:
    """One metric: its name, metrics-object location, kind and direction.

    Attributes:
        name: the metric name (``evacuated_rate``...).
        group: the metrics group holding it (``safety``, ``time``...).
        kind: outcome, behaviour, proxy or descriptive.
        direction: ``higher`` or ``lower`` is better, or ``none``
            (descriptive metrics have no winner).
        definition: a one-line exact definition.
        undefined_when: when the metric is null (``never`` if always defined).
    """

    name: str
    group: str
    kind: Kind
    direction: Direction
    definition: str
    undefined_when: str

    @property
    def source(self) -> str:
        """The dotted source field, ``group.name``."""
        return f"{self.group}.{self.name}"


METRICS: tuple[MetricDef, ...] = (
    MetricDef("evacuated_rate", "safety", "outcome", "higher", "evacuated / population", "never"),
    MetricDef("casualty_rate", "safety", "outcome", "lower", "casualties / population", "never"),
    MetricDef("stranded_rate", "safety", "outcome", "lower", "stranded / population", "never"),
    MetricDef(
        "terminal_trapped_rate", "safety", "outcome", "lower",
        "terminal_trapped_count / population", "never",
    ),
    MetricDef(
        "mean_person_time_to_safety", "time", "outcome", "lower",
        "person_time_to_safety_total / population", "never",
    ),
    MetricDef(
        "blocked_rate", "movement", "behaviour", "lower",
        "blocked_moves / movement_attempts", "no movement attempts",
    ),
    MetricDef(
        "congestion_block_rate", "movement", "behaviour", "lower",
        "congestion_blocks / movement_attempts", "no movement attempts",
    ),
    MetricDef(
        "aggregate_path_efficiency", "path_efficiency", "proxy", "higher",
        "total_static_lower_bound / total_cells_moved", "no measured movement",
    ),
    MetricDef(
        "mean_exposure", "fire_exposure", "proxy", "lower",
        "(sum over d of count_d / d) / active_person_states", "never",
    ),
    MetricDef("exits_used", "exits", "descriptive", "none", "number of exits with n_e >= 1", "never"),
    MetricDef("max_exit_share", "exits", "descriptive", "none", "max_e n_e / E", "E = 0"),
    MetricDef(
        "exit_balance", "exits", "descriptive", "none",
        "(1 - sum_e (n_e / E)^2) / (1 - 1 / K)", "K = 1 or E = 0",
    ),
)

METRIC_NAMES: tuple[str, ...] = tuple(m.name for m in METRICS)
METRICS_BY_NAME: dict[str, MetricDef] = {m.name: m for m in METRICS}
GROUP_ORDER: tuple[str, ...] = (
    "safety", "time", "movement", "path_efficiency", "fire_exposure", "exits",
)
