"""Small hand-built contexts and episodes for the statistics tests."""

from __future__ import annotations

from fractions import Fraction

from emberbench.records.metric_defs import METRIC_NAMES
from emberbench.statistics import EpisodeValues, StatisticsContext

DIGEST_A = "a" * 64
DIGEST_B = "b" * 64
MANIFEST = "e" * 64


def make_ctx(
    scenarios: tuple[tuple[str, int], ...] = (("s1", 6), ("s2", 3)),
    families: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("fam-both", ("s1", "s2")),
        ("fam-empty", ()),
        ("fam-s2", ("s2",)),
    ),
    scenario_order: tuple[str, ...] | None = None,
) -> StatisticsContext:
    """A context scheduling ``count`` episodes per scenario, interleaved by seed."""
    keys = []
    index = 0
    longest = max(count for _, count in scenarios)
    for seed in range(longest):
        for sid, count in scenarios:
            if seed < count:
                keys.append((index, sid, f"hash-{sid}", 100 + seed))
                index += 1
    order = scenario_order or tuple(sid for sid, _ in scenarios) + ("s-unscheduled",)
    return StatisticsContext(
        evaluation_manifest_hash=MANIFEST,
        suite_id="suite-x",
        suite_version="1.0.0",
        suite_hash="f" * 64,
        simulator_version="0.2.0",
        observation_version="1.0",
        metrics_version="1.0",
        scheduled=tuple(keys),
        scenario_order=order,
        families=families,
    )


def metric_values(index: int, shift: int = 0) -> dict[str, Fraction | None]:
    """Deterministic exact values for every metric of episode ``index``."""
    k = index + shift
    pop = 7 + index % 3
    evacuated = (k * 3) % (pop + 1)
    return {
        "evacuated_rate": Fraction(evacuated, pop),
        "casualty_rate": Fraction((k * 5) % (pop + 1), pop),
        "stranded_rate": Fraction(k % 2, pop),
        "terminal_trapped_rate": Fraction(0),
        "mean_person_time_to_safety": Fraction(50 + (k * 37) % 101, pop),
        "blocked_rate": None if index % 4 == 0 else Fraction(k % 9, 11 + index),
        "congestion_block_rate": None if index % 4 == 0 else Fraction(k % 5, 11 + index),
        "aggregate_path_efficiency": Fraction(30, 30 + k % 13),
        "mean_exposure": Fraction(1, 1 + k % 6) + Fraction(k % 4, 7),
        "exits_used": Fraction(1 + k % 3),
        "max_exit_share": Fraction(1 + k % 5, 6),
        "exit_balance": None if index % 3 == 0 else Fraction(k % 10, 10),
    }


def make_episode(ctx: StatisticsContext, index: int, shift: int = 0, **overrides: object) -> EpisodeValues:
    """The episode at ``index`` of ``ctx`` with :func:`metric_values` and counts."""
    scenario_id = next(key[1] for key in ctx.scheduled if key[0] == index)
    values = metric_values(index, shift)
    fields: dict[str, object] = {
        "index": index,
        "scenario_id": scenario_id,
        "termination": "max_steps" if index % 3 == 1 else "all_resolved",
        "evacuated": 0 if index % 5 == 2 else 4,
        "casualties": index % 2,
        "stranded": 1 if index % 3 == 1 else 0,
        "values": values,
    }
    fields.update(overrides)
    return EpisodeValues(**fields)  # type: ignore[arg-type]


def all_episodes(ctx: StatisticsContext, shift: int = 0, skip: tuple[int, ...] = ()) -> list[EpisodeValues]:
    """Every scheduled episode of ``ctx`` except the indices in ``skip``."""
    return [make_episode(ctx, key[0], shift) for key in ctx.scheduled if key[0] not in skip]


assert tuple(metric_values(0)) == METRIC_NAMES
