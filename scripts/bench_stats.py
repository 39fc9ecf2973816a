#!/usr/bin/env python
"""Benchmark the exact statistics against scipy and against the SHAKE floor.

Usage:
    .venv/bin/python scripts/bench_stats.py [--n 10000] [--resamples 2000]
        [--episodes 10000] [--skip-aggregate] [--tracemalloc]

Measures, in one run and on the same machine:

(a) our exact bootstrap interval against ``scipy.stats.bootstrap(
    method="percentile")`` on the same values (target: at most 8x scipy);
(b) our exact bootstrap against drawing its SHAKE index stream alone, the
    floor the spec imposes (target: at most 1.5x); also against generating
    the raw SHAKE words only;
(c) the whole aggregate statistics computation on synthetic episodes
    (verification and replay excluded: they are the caller's), with its peak
    memory.

(a) and (b) run on two data sets of ``n`` values: denominators drawn from a
few population sizes (one common denominator fits ``int64``) and denominators
spread over 1..5000 (the float-filter route with exact re-checks). Every
timing is the best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import math
import random
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from emberbench.records.metric_defs import METRIC_NAMES  # noqa: E402
from emberbench.statistics import EpisodeValues, StatisticsContext, aggregate_from_values  # noqa: E402
from emberbench.statistics.bootstrap import BATCH_INDICES, bootstrap_interval  # noqa: E402
from emberbench.statistics.exact import ExactVector  # noqa: E402
from emberbench.statistics.stream import IndexStream, block_words, bootstrap_seed  # noqa: E402

POPULATIONS = (20, 24, 30, 36, 40, 48, 50, 60, 72, 80, 96, 100)


def best_of(repeat: int, func: Callable[[], object]) -> float:
    """Return the smallest wall time of ``repeat`` calls of ``func``."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def dataset(kind: str, n: int, rng: random.Random) -> list[Fraction]:
    """Return ``n`` rate-like fractions with population-like or wide denominators."""
    values = []
    for _ in range(n):
        den = rng.choice(POPULATIONS) if kind == "populations" else rng.randint(1, 5000)
        values.append(Fraction(rng.randint(0, den), den))
    return values


def bench_interval(kind: str, n: int, resamples: int, repeat: int) -> None:
    """Print (a) and (b) for one data set."""
    from scipy import stats

    values = dataset(kind, n, random.Random(7))
    vector = ExactVector.build(values)
    floats = vector.floats.copy()
    seed = bootstrap_seed(
        purpose="aggregate_mean", evaluation_manifest_hash="bench", result_digests=["0" * 64],
        group_kind="overall", group_name="overall", metric="evacuated_rate", resamples=resamples,
    )
    per_batch = max(1, BATCH_INDICES // n)

    def ours() -> object:
        return bootstrap_interval(vector, seed=seed, resamples=resamples, statistic="mean")

    def scipy_run() -> object:
        return stats.bootstrap(
            (floats,), np.mean, method="percentile", n_resamples=resamples,
            confidence_level=0.95, random_state=np.random.default_rng(0), vectorized=True,
        )

    def index_stream() -> None:
        stream = IndexStream(seed, n)
        for start in range(0, resamples, per_batch):
            stream.take(min(per_batch, resamples - start) * n)

    def raw_words() -> None:
        blocks = math.ceil(resamples * n / 512)
        step = max(1, BATCH_INDICES // 512)
        for first in range(0, blocks, step):
            block_words(seed, first, min(step, blocks - first))

    t_ours = best_of(repeat, ours)
    t_scipy = best_of(repeat, scipy_run)
    t_stream = best_of(repeat, index_stream)
    t_words = best_of(repeat, raw_words)
    interval = ours()
    print(f"\n[{kind}] n={n} R={resamples} route={vector.path}"
          f"{' (int64 sums)' if vector.scaled is not None else ' (float filter + exact re-check)'}")
    print(f"  interval = [{float(interval.lower):.6f}, {float(interval.upper):.6f}]")  # type: ignore[union-attr]
    print(f"  ours (exact)              {t_ours:8.3f} s")
    print(f"  scipy percentile          {t_scipy:8.3f} s   ratio ours/scipy  = {t_ours / t_scipy:5.2f}  (target <= 8)")
    print(f"  SHAKE index stream alone  {t_stream:8.3f} s   ratio ours/stream = {t_ours / t_stream:5.2f}  (target <= 1.5)")
    print(f"  SHAKE raw words alone     {t_words:8.3f} s   ratio ours/words  = {t_ours / t_words:5.2f}")


def synthetic_episodes(count: int, rng: random.Random) -> tuple[StatisticsContext, list[EpisodeValues]]:
    """Return a context and ``count`` synthetic episodes (20 scenarios, 4 families)."""
    scenario_ids = tuple(f"scenario-{k:02d}" for k in range(20))
    population = {sid: rng.choice(POPULATIONS) for sid in scenario_ids}
    scheduled = tuple(
        (i, scenario_ids[i % 20], f"{i % 20:064x}", 1000 + i) for i in range(count)
    )
    families = (
        ("corridors", scenario_ids[0:8]),
        ("offices", scenario_ids[6:14]),
        ("halls", scenario_ids[12:20]),
        ("all-large", tuple(s for s in scenario_ids if population[s] >= 60)),
    )
    ctx = StatisticsContext(
        evaluation_manifest_hash="a" * 64, suite_id="bench", suite_version="1.0.0",
        suite_hash="b" * 64, simulator_version="0.2.0", observation_version="1.0",
        metrics_version="1.0", scheduled=scheduled, scenario_order=scenario_ids, families=families,
    )
    episodes = []
    for index, sid, _, _ in scheduled:
        if index % 97 == 5:
            continue  # a few missing episodes
        pop = population[sid]
        casualties = rng.randint(0, pop // 10)
        stranded = rng.randint(0, pop // 10)
        evacuated = pop - casualties - stranded
        attempts = rng.randint(0, 4000)
        moved = rng.randint(0, 3000)
        exits = rng.randint(0, 3)
        values: dict[str, Fraction | None] = {
            "evacuated_rate": Fraction(evacuated, pop),
            "casualty_rate": Fraction(casualties, pop),
            "stranded_rate": Fraction(stranded, pop),
            "terminal_trapped_rate": Fraction(rng.randint(0, stranded), pop),
            "mean_person_time_to_safety": Fraction(rng.randint(pop * 10, pop * 400), pop),
            "blocked_rate": Fraction(rng.randint(0, attempts), attempts) if attempts else None,
            "congestion_block_rate": Fraction(rng.randint(0, attempts), attempts) if attempts else None,
            "aggregate_path_efficiency": Fraction(rng.randint(1, moved), moved) if moved else None,
            "mean_exposure": sum(
                (Fraction(rng.randint(0, 20), d) for d in range(1, 12)), Fraction(0)
            ) / rng.randint(1, 50_000),
            "exits_used": Fraction(exits),
            "max_exit_share": Fraction(rng.randint(1, evacuated), evacuated) if evacuated else None,
            "exit_balance": Fraction(rng.randint(0, 100), 100) if exits > 1 else None,
        }
        assert tuple(values) == METRIC_NAMES
        termination = "all_resolved" if stranded == 0 else "max_steps"
        episodes.append(EpisodeValues(index, sid, termination, evacuated, casualties, stranded, values))
    return ctx, episodes


def bench_aggregate(count: int, resamples: int, use_tracemalloc: bool) -> None:
    """Print (c): the whole aggregate computation and its peak memory."""
    ctx, episodes = synthetic_episodes(count, random.Random(11))
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if use_tracemalloc:
        tracemalloc.start()
    start = time.perf_counter()
    result = aggregate_from_values(ctx, "bench-model", "c" * 64, episodes, resamples=resamples)
    text = result.to_json_bytes()
    elapsed = time.perf_counter() - start
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    peak = None
    if use_tracemalloc:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    groups = (result.overall, *result.scenarios, *result.families)
    blocks = sum(
        math.ceil(m.statistics.n * resamples / 512)
        for g in groups for m in g.metrics if m.mean_ci is not None
    )
    sample = 20_000
    start = time.perf_counter()
    for first in range(0, sample, 2048):
        block_words(b"\x00" * 32, first, min(2048, sample - first))
    floor = blocks * (time.perf_counter() - start) / sample
    print(f"\n[aggregate] {count} scheduled episodes, {len(episodes)} observed, {len(groups)} groups, "
          f"{len(METRIC_NAMES)} metrics, R={resamples}")
    print(f"  whole aggregate + canonical JSON  {elapsed:8.2f} s  ({len(text) / 1e6:.2f} MB of JSON)")
    print(f"  its SHAKE floor ({blocks} blocks)   {floor:8.2f} s   ratio = {elapsed / floor:5.2f}")
    print(f"  peak RSS of the process           {rss_after / 1024:8.1f} MiB "
          f"(after imports and building the episodes: {rss_before / 1024:.1f} MiB)")
    if peak is not None:
        print(f"  tracemalloc peak                  {peak / 2**20:8.1f} MiB (timing above includes tracing)")


def main() -> None:
    """Parse options and run the benchmarks."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-aggregate", action="store_true")
    parser.add_argument("--tracemalloc", action="store_true")
    args = parser.parse_args()
    # The aggregate runs first so that the process's peak RSS is its own.
    if not args.skip_aggregate:
        bench_aggregate(args.episodes, args.resamples, args.tracemalloc)
    for kind in ("populations", "wide"):
        bench_interval(kind, args.n, args.resamples, args.repeat)


if __name__ == "__main__":
    main()
