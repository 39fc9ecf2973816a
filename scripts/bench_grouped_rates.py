#!/usr/bin/env python3
"""Measure how far the grouped-rates resampling modes go within the caps.

For each task count n it reports the draw rows each mode needs, whether that
fits ``max_draws`` and ``max_draw_cells``, and, for the modes that fit, the
wall time of a full report and the size of its rendered bytes. Inputs are
synthetic (every task gets a fixed, deterministic pattern of labels).

Usage: python3 scripts/bench_grouped_rates.py [--max-n 12] [--mc-tasks 20]
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from emberbench.grouped_rates import evaluate, render  # noqa: E402
from emberbench.grouped_rates.contract import MAX_DRAW_CELLS, MAX_DRAWS  # noqa: E402
from emberbench.grouped_rates.resampling import draw_count  # noqa: E402


def synthetic_input(n_tasks: int, resampling: dict) -> bytes:
    """Return input bytes for n_tasks tasks, 6 episodes per task and arm."""
    tasks = [f"T{i:03d}" for i in range(n_tasks)]
    episodes = []
    for t, task in enumerate(tasks):
        for a, arm in enumerate(("first", "second")):
            for k in range(6):
                label = "failure" if (t * 7 + a * 3 + k) % 5 < 2 + a else "success"
                episodes.append({"id": f"{task}/{arm}/{k}", "task": task, "arm": arm, "label": label})
    document = {
        "format": "emberbench.grouped-rates.input",
        "version": "1.0",
        "description": "synthetic benchmark input",
        "population": {"description": "synthetic tasks", "tasks": tasks},
        "dependence": "synthetic, no dependence modelled",
        "arms": ["first", "second"],
        "matching": {
            "shared": {"agent": "a", "environment": "e", "budget": "b", "outcome_rubric": "r"},
            "varied": {"condition": "intervention", "per_arm": {"first": "on", "second": "off"}},
        },
        "rubric": {"failure": "f", "success": "s", "unresolved": "u"},
        "resampling": resampling,
        "episodes": episodes,
    }
    return render(document)


def fits(mode: str, n: int, replicates: int | None = None) -> bool:
    rows = draw_count(mode, n, replicates)
    return rows <= MAX_DRAWS and rows * n <= MAX_DRAW_CELLS


def timed(data: bytes) -> tuple[float, int]:
    start = time.perf_counter()
    outcome = evaluate(data)
    return time.perf_counter() - start, len(outcome.data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-n", type=int, default=12)
    parser.add_argument("--mc-tasks", type=int, default=20)
    args = parser.parse_args()
    print(f"caps: max_draws={MAX_DRAWS} max_draw_cells={MAX_DRAW_CELLS}")
    print(f"{'n':>3} {'mode':<15} {'rows':>12} {'fits':>5} {'seconds':>8} {'report MB':>9}")
    for n in range(1, args.max_n + 1):
        for mode in ("exact", "exact-multiset"):
            rows = draw_count(mode, n)
            ok = fits(mode, n)
            seconds = size = None
            if ok:
                seconds, size = timed(synthetic_input(n, {"mode": mode}))
            shown = f"{seconds:8.2f} {size / 1e6:9.2f}" if ok else f"{'-':>8} {'-':>9}"
            print(f"{n:>3} {mode:<15} {rows:>12} {str(ok):>5} {shown}")
    n = args.mc_tasks
    replicates = min(MAX_DRAWS, MAX_DRAW_CELLS // n)
    spec = {"mode": "monte-carlo", "seed": 1, "replicates": replicates}
    seconds, size = timed(synthetic_input(n, spec))
    print(f"{n:>3} {'monte-carlo':<15} {replicates:>12} {'True':>5} {seconds:8.2f} {size / 1e6:9.2f}")


if __name__ == "__main__":
    main()
