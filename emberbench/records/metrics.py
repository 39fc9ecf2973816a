"""Episode metrics v1.0: integer counts, and the twelve metrics derived from them.

Every metric is an exact :class:`Fraction` (or ``None`` where undefined)
computed from the integer counts by :func:`metric_fraction`; the stored value
is its correctly rounded ``float``, except ``exits_used``, which is stored as
an integer. docs/metrics.md defines each count and metric.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..errors import RecordAuthenticationError
from ..sim.grid import compile_grid
from .metric_defs import GROUP_ORDER, METRICS, METRICS_BY_NAME
from ..sim.scenario import Scenario
from ..sim.simulator import Outcome
from ..io.versions import METRICS_VERSION

COUNT_KEYS = (
    "population", "evacuated", "casualties", "stranded", "terminal_trapped_count",
    "person_time_to_safety_total", "movement_attempts", "blocked_moves", "congestion_blocks",
    "total_static_lower_bound", "total_cells_moved", "active_person_states", "steps", "max_steps",
)
_TOP_KEYS = frozenset({"metrics_version", "termination", "counts", "exposure_histogram", "exit_counts", *GROUP_ORDER})


@dataclass(frozen=True, slots=True)
class EpisodeMetrics:
    """The integer counts of one episode (metrics are derived, never stored apart).

    Attributes:
        counts: the integer counts, keyed as in :data:`COUNT_KEYS`.
        termination: ``all_resolved`` or ``max_steps``.
        exposure_histogram: (d, count) pairs with d >= 1 and count >= 1, ascending d.
        exit_counts: (exit id, evacuees) for every exit, in scenario order.
    """

    counts: tuple[tuple[str, int], ...]
    termination: str
    exposure_histogram: tuple[tuple[int, int], ...]
    exit_counts: tuple[tuple[str, int], ...]

    def count(self, name: str) -> int:
        """One integer count by name."""
        for key, value in self.counts:
            if key == name:
                return value
        raise KeyError(name)

    def counts_dict(self) -> dict[str, int]:
        """The counts as a dict."""
        return dict(self.counts)

    def to_dict(self) -> dict[str, Any]:
        """The metrics JSON object (floats only for the rate-like metrics)."""
        out: dict[str, Any] = {
            "metrics_version": METRICS_VERSION,
            "termination": self.termination,
            "counts": self.counts_dict(),
            "exposure_histogram": [list(p) for p in self.exposure_histogram],
            "exit_counts": [list(p) for p in self.exit_counts],
        }
        for group in GROUP_ORDER:
            out[group] = {}
        values = metric_fractions(self)
        for m in METRICS:
            value = values[m.name]
            if value is None:
                stored: Any = None
            elif m.name == "exits_used":
                stored = int(value)
            else:
                stored = float(value)
            out[m.group][m.name] = stored
        return out


def metric_fraction(metrics: EpisodeMetrics, name: str) -> Fraction | None:
    """The exact value of metric ``name`` for one episode, or None where undefined."""
    if name not in METRICS_BY_NAME:
        raise KeyError(f"unknown metric {name!r}")
    return metric_fractions(metrics)[name]


def metric_fractions(metrics: EpisodeMetrics) -> dict[str, Fraction | None]:
    """Every metric's exact value (or None where undefined), keyed by metric name."""
    c = dict(metrics.counts)
    pop = c["population"]
    attempts = c["movement_attempts"]
    moved = c["total_cells_moved"]
    # sum over d of count_d / d, over the common denominator lcm(d): exact, no Fraction additions
    lcm = math.lcm(*(d for d, _ in metrics.exposure_histogram)) if metrics.exposure_histogram else 1
    exposure = sum(n * (lcm // d) for d, n in metrics.exposure_histogram)
    counts = [n for _, n in metrics.exit_counts]
    used = [n for n in counts if n > 0]
    evacuated = sum(counts)
    k = len(counts)
    return {
        "evacuated_rate": Fraction(c["evacuated"], pop),
        "casualty_rate": Fraction(c["casualties"], pop),
        "stranded_rate": Fraction(c["stranded"], pop),
        "terminal_trapped_rate": Fraction(c["terminal_trapped_count"], pop),
        "mean_person_time_to_safety": Fraction(c["person_time_to_safety_total"], pop),
        "blocked_rate": Fraction(c["blocked_moves"], attempts) if attempts else None,
        "congestion_block_rate": Fraction(c["congestion_blocks"], attempts) if attempts else None,
        "aggregate_path_efficiency": Fraction(c["total_static_lower_bound"], moved) if moved else None,
        "mean_exposure": Fraction(exposure, lcm * c["active_person_states"]),
        "exits_used": Fraction(len(used)),
        "max_exit_share": Fraction(max(used), evacuated) if evacuated else None,
        "exit_balance": (
            (1 - Fraction(sum(n * n for n in used), evacuated * evacuated)) / (1 - Fraction(1, k))
            if evacuated and k > 1 else None
        ),
    }


def metrics_from_outcome(scenario: Scenario, outcome: Outcome) -> EpisodeMetrics:
    """Compute the counts of a finished episode of ``scenario``."""
    g = compile_grid(scenario)
    pop = scenario.population
    evac_people = np.array([p for _, p, _ in outcome.evacuations], dtype=np.int64)
    evac_steps = sum(s for s, _, _ in outcome.evacuations)
    lower = int(g.static_dist[g.starts[evac_people]].sum()) if evac_people.size else 0
    moved = np.asarray(outcome.cells_moved, dtype=np.int64)
    per_exit = [0] * len(scenario.exits)
    for _, _, e in outcome.evacuations:
        per_exit[e] += 1
    counts = (
        ("population", pop),
        ("evacuated", len(outcome.evacuations)),
        ("casualties", len(outcome.casualties)),
        ("stranded", len(outcome.stranded)),
        ("terminal_trapped_count", outcome.terminal_trapped),
        ("person_time_to_safety_total", evac_steps + scenario.max_steps * (pop - len(outcome.evacuations))),
        ("movement_attempts", outcome.movement_attempts),
        ("blocked_moves", outcome.blocked_moves),
        ("congestion_blocks", outcome.congestion_blocks),
        ("total_static_lower_bound", lower),
        ("total_cells_moved", int(moved[evac_people].sum()) if evac_people.size else 0),
        ("active_person_states", outcome.active_person_states),
        ("steps", outcome.steps),
        ("max_steps", scenario.max_steps),
    )
    hist = tuple((d, n) for d, n in enumerate(outcome.exposure) if d >= 1 and n > 0)
    exits = tuple((e.id, per_exit[i]) for i, e in enumerate(scenario.exits))
    return EpisodeMetrics(counts=counts, termination=outcome.termination, exposure_histogram=hist, exit_counts=exits)


def metrics_from_dict(data: object, *, where: str = "metrics") -> EpisodeMetrics:
    """Parse a stored metrics object; every stored value must equal the recomputed one.

    Raises:
        RecordAuthenticationError: on any structural difference or value mismatch.
    """
    def fail(msg: str) -> RecordAuthenticationError:
        return RecordAuthenticationError(f"{where}: {msg}", field=where)

    if not isinstance(data, dict) or set(data) != _TOP_KEYS:
        raise fail("must be an object with exactly the metrics v1.0 keys")
    if data["metrics_version"] != METRICS_VERSION:
        raise fail(f"unsupported metrics_version {data['metrics_version']!r}")
    counts = data["counts"]
    if not isinstance(counts, dict) or set(counts) != set(COUNT_KEYS) or not all(
        type(counts[k]) is int and counts[k] >= 0 for k in COUNT_KEYS
    ):
        raise fail("counts must hold exactly the v1.0 non-negative integer counts")
    if counts["population"] < 1 or counts["active_person_states"] < 1:
        raise fail("population and active_person_states must be positive")
    hist, exits = data["exposure_histogram"], data["exit_counts"]
    if not isinstance(hist, list) or not all(
        isinstance(p, list) and len(p) == 2 and type(p[0]) is int and type(p[1]) is int and p[0] >= 1 and p[1] >= 1
        for p in hist
    ) or [p[0] for p in hist] != sorted({p[0] for p in hist}):
        raise fail("exposure_histogram must be ascending [d >= 1, count >= 1] pairs")
    if not isinstance(exits, list) or not exits or not all(
        isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) and type(p[1]) is int and p[1] >= 0
        for p in exits
    ):
        raise fail("exit_counts must be a non-empty list of [exit id, count]")
    m = EpisodeMetrics(
        counts=tuple((k, counts[k]) for k in COUNT_KEYS),
        termination=data["termination"],
        exposure_histogram=tuple((p[0], p[1]) for p in hist),
        exit_counts=tuple((p[0], p[1]) for p in exits),
    )
    expected = m.to_dict()
    for group in GROUP_ORDER:
        got = data[group]
        if not isinstance(got, dict) or set(got) != set(expected[group]):
            raise fail(f"{group} must hold exactly {sorted(expected[group])}")
        for name, value in expected[group].items():
            if type(got[name]) is not type(value) or got[name] != value:
                raise fail(f"{group}.{name} is {got[name]!r}, but the counts give {value!r}")
    if data["termination"] not in ("all_resolved", "max_steps"):
        raise fail("termination must be all_resolved or max_steps")
    return m
