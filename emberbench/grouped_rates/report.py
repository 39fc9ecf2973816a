"""Assemble ``report.json`` from the exact input bytes.

:func:`build_report` is the whole calculation: parse and validate the input,
count labels per task and arm, compute both estimands and contrasts, the
missing-label bounds, every resampling draw and every interval, and bind the
input, contract and reader digests. It is a pure function of the input bytes
and the reader's source files: no clock, no OS randomness, and every mapping
is emitted with sorted keys or in declared order.
"""

from __future__ import annotations

from typing import Any

from ..errors import GroupedRatesError
from .binding import contract_binding, input_binding, reader_binding
from .contract import (
    FEW_CLUSTERS_BELOW,
    NOMINAL_LEVEL,
    P_LOWER,
    P_UPPER,
    REPORT_FORMAT,
    REPORT_VERSION,
    SAMPLER_ID,
)
from .documents import parse_json
from .estimands import STATISTICS, ArmCounts, Evaluator, TaskTable, contrast_bounds, tabulate
from .exact import exact_cell, exact_value, rational_text
from .inputs import GroupedInput, parse_input
from .intervals import Interval, interval
from .resampling import Distribution, resample


def _counts(counts: ArmCounts) -> dict[str, Any]:
    return {
        "failure": counts.failure,
        "success": counts.success,
        "unresolved": counts.unresolved,
        "resolved": counts.resolved,
        "attempted": counts.attempted,
        "rate": exact_value(counts.rate),
    }


def _bounds(pair: tuple[Any, Any] | None) -> dict[str, Any] | None:
    if pair is None:
        return None
    return {"lower": exact_value(pair[0]), "upper": exact_value(pair[1])}


def column_name(estimand: str, quantity: str, arm: str | None) -> str:
    """Name of a statistic's draw column, e.g. ``equal_task.rate.attack``."""
    return f"{estimand}.{quantity}" + ("" if arm is None else f".{arm}")


def _estimates(table: TaskTable, point: tuple[Any, ...]) -> dict[str, Any]:
    arms = table.arms
    pooled_blocked = [
        {"task": None, "arm": arms[a]} for a in (0, 1) if table.totals(a).resolved == 0
    ]
    equal_blocked = [{"task": task, "arm": arm} for task, arm in table.null_task_arms()]
    out = {}
    for offset, estimand, blocked in (
        (0, "episode_weighted", pooled_blocked),
        (3, "equal_task", equal_blocked),
    ):
        out[estimand] = {
            "status": "blocked" if blocked else "ok",
            "blocked_by": blocked,
            "rates": {arms[0]: exact_value(point[offset]), arms[1]: exact_value(point[offset + 1])},
            "contrast": exact_value(point[offset + 2]),
        }
    return out


def _interval_entry(
    stat: tuple[str, str, int | None], arms: tuple[str, str], point: Any, found: Interval
) -> dict[str, Any]:
    estimand, quantity, position = stat
    return {
        "estimand": estimand,
        "quantity": quantity,
        "arm": None if position is None else arms[position],
        "point": exact_value(point),
        "status": found.status,
        "lower": exact_value(found.lower),
        "upper": exact_value(found.upper),
        "missing_rows": list(found.missing_rows),
        "missing_weight": found.missing_weight,
    }


def _warnings(
    data: GroupedInput, table: TaskTable, estimates: dict[str, Any], found: list[Interval]
) -> list[str]:
    n = len(table.tasks)
    out = []
    if n < FEW_CLUSTERS_BELOW:
        out.append(
            f"only {n} task clusters (fewer than {FEW_CLUSTERS_BELOW}): percentile intervals "
            "from so few resampled clusters can be badly calibrated; they describe this "
            "resampling distribution, not population coverage"
        )
    unresolved = [table.totals(a).unresolved for a in (0, 1)]
    if any(unresolved):
        out.append(
            f"unresolved labels ({table.arms[0]}: {unresolved[0]}, {table.arms[1]}: "
            f"{unresolved[1]}) are excluded from the resolved-rate denominators; see "
            "missing_label_bounds"
        )
    for estimand in ("episode_weighted", "equal_task"):
        blocked = estimates[estimand]["blocked_by"]
        if blocked:
            out.append(f"{estimand} is blocked by {len(blocked)} null task arm(s); see blocked_by")
    n_blocked = sum(1 for item in found if item.status == "blocked")
    if n_blocked:
        out.append(f"{n_blocked} of {len(found)} intervals are blocked by missing draw values")
    if data.resampling.mode == "monte-carlo":
        out.append("monte-carlo draws approximate the exact distribution and add Monte Carlo error")
    return out


def _resampling(data: GroupedInput, distribution: Distribution) -> dict[str, Any]:
    is_mc = data.resampling.mode == "monte-carlo"
    return {
        "mode": data.resampling.mode,
        "unit": "paired task cluster",
        "sampler": SAMPLER_ID if is_mc else None,
        "seed": data.resampling.seed,
        "replicates": data.resampling.replicates,
        "rows": len(distribution.draws),
        "total_weight": distribution.total_weight,
    }


def build_report(input_bytes: bytes, *, where: str = "input") -> dict[str, Any]:
    """Compute the complete report for the exact ``input_bytes``.

    Args:
        input_bytes: the input file's bytes (their digest is bound as-is).
        where: names the input in error messages.

    Raises:
        GroupedRatesError: if the input is invalid or exceeds a cap.
    """
    try:
        data = parse_input(parse_json(input_bytes, where=where))
    except GroupedRatesError as exc:  # name the file, not just "input", when there is one
        text = str(exc)
        if where != "input" and text.startswith("input: "):
            raise GroupedRatesError(f"{where}: {text[len('input: '):]}") from None
        raise
    table = tabulate(data)
    point = Evaluator(table).point()
    distribution = resample(table, data.resampling)
    found = [interval(distribution, column) for column in range(len(STATISTICS))]
    estimates = _estimates(table, point)
    arms = data.arms
    columns = ["tasks", "weight"] + [
        column_name(e, q, None if a is None else arms[a]) for e, q, a in STATISTICS
    ]
    rows = [
        [list(draw.tasks), draw.weight] + [exact_cell(v) for v in draw.values]
        for draw in distribution.draws
    ]
    return {
        "format": REPORT_FORMAT,
        "version": REPORT_VERSION,
        "binding": {
            "input": input_binding(input_bytes),
            "contract": contract_binding(),
            "reader": reader_binding(),
        },
        "description": data.description,
        "population": {"description": data.population, "tasks": list(data.tasks)},
        "task_clusters": len(data.tasks),
        "dependence": data.dependence,
        "arms": list(arms),
        "contrast": f"{arms[0]} - {arms[1]}",
        "matching": {
            "shared": dict(data.shared),
            "varied": {"condition": data.varied_condition, "per_arm": dict(data.varied)},
            "verified": False,
        },
        "rubric": dict(data.rubric),
        "counts": {
            "tasks": [
                {"task": task, "arms": {arms[0]: _counts(row[0]), arms[1]: _counts(row[1])}}
                for task, row in zip(table.tasks, table.counts, strict=True)
            ],
            "totals": {arms[a]: _counts(table.totals(a)) for a in (0, 1)},
        },
        "estimates": estimates,
        "missing_label_bounds": {
            "rates": {arms[a]: _bounds(table.totals(a).bounds()) for a in (0, 1)},
            "contrast": _bounds(contrast_bounds(table)),
        },
        "resampling": _resampling(data, distribution),
        "intervals": {
            "nominal_level": rational_text(NOMINAL_LEVEL),
            "p_lower": rational_text(P_LOWER),
            "p_upper": rational_text(P_UPPER),
            "lower_rank": found[0].lower_rank,
            "upper_rank": found[0].upper_rank,
            "statistics": [
                _interval_entry(stat, arms, point[i], found[i]) for i, stat in enumerate(STATISTICS)
            ],
        },
        "draws": {"columns": columns, "rows": rows},
        "warnings": _warnings(data, table, estimates, found),
    }
