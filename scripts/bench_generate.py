#!/usr/bin/env python3
"""Scenario generation speed per recipe, and calibration throughput in process vs on Ray.

Part 1, generation (one core, in this process): generate the first N
scenarios of each shipped recipe (seed 1) and report scenarios per second,
by wall clock and by CPU time. Target: the standard recipe at 50 per second
or more.

Part 2, calibration: generate ``--calibration-scenarios`` scenarios of the
standard recipe, then calibrate them (stay, greedy and fire-aware under seeds
0, 1, 2) in process and on an embedded Ray instance with 2 workers. Ray
start-up and one warm-up pass (which imports the code in the worker
processes) are excluded and reported apart; each side is timed ``--repeat``
times in back-to-back pairs (the first side alternating), and the script
reports the best of each side and every pair's ratio with their median. Both calibrations must be byte-identical.
Target: 2 workers at least 1.7 x faster than in process. Wall-clock figures
need two idle cores; on a shared machine the script also reports the CPU
seconds each Ray worker process spent (the busier one bounds the Ray run
from below), which shows how evenly the work was split whatever the load.

Usage: .venv/bin/python scripts/bench_generate.py [--dev 500] [--standard 500] [--large 60]
       [--calibration-scenarios 60] [--repeat 2] [--no-ray]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from emberbench.io.canonical import canonical_bytes  # noqa: E402
from emberbench.generate import calibrate_suite, generate_scenario, generate_suite, load_recipe  # noqa: E402
from emberbench.generate import write_suite  # noqa: E402
from emberbench.sim.suite import load_suite  # noqa: E402


def bench_recipe(name: str, count: int) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, draws) for the first ``count`` scenarios of recipe ``name``."""
    recipe = load_recipe(name)
    wall, cpu = time.perf_counter(), time.process_time()
    draws = sum(generate_scenario(recipe, 1, i).attempts for i in range(count))
    return time.perf_counter() - wall, time.process_time() - cpu, draws


def timed_calibration(job: tuple) -> tuple:
    """One calibration job (play_baselines) plus the CPU seconds it took and the process that ran it."""
    from emberbench.generate.calibrate import play_baselines

    start = time.process_time()
    result = play_baselines(job)
    return result, time.process_time() - start, os.getpid()


def cpu_split(suite: object, mapper: object) -> tuple[float, list[float]]:
    """CPU seconds of the whole calibration and per worker process, through ``mapper``."""
    from emberbench.generate.calibrate import DEFAULT_SEEDS, in_process

    jobs = [(s, seed) for s in suite.scenarios for seed in DEFAULT_SEEDS]
    runs = (mapper or in_process)(timed_calibration, jobs)
    per_pid: dict[int, float] = {}
    for _, seconds, pid in runs:
        per_pid[pid] = per_pid.get(pid, 0.0) + seconds
    return sum(per_pid.values()), sorted(per_pid.values(), reverse=True)


def bench_calibration(scenarios: int, repeat: int) -> None:
    base = Path(tempfile.mkdtemp(prefix="bench-generate-"))
    try:
        write_suite(generate_suite(load_recipe("standard"), scenarios, 1, suite_id="bench"), base / "suite")
        suite = load_suite(base / "suite")
        from emberbench.cluster import ray_mapper

        start = time.perf_counter()
        with ray_mapper(workers=2) as mapper:
            started = time.perf_counter() - start
            warm_start = time.perf_counter()
            reference = canonical_bytes(calibrate_suite(suite, mapper=mapper).to_dict())
            warm = time.perf_counter() - warm_start
            local_times, ray_times = [], []
            for i in range(repeat):
                # One pair per repeat, back to back, the first side alternating:
                # this machine's speed drifts by 10-20 % over minutes.
                for side in (("local", "ray") if i % 2 == 0 else ("ray", "local")):
                    t = time.perf_counter()
                    if side == "local":
                        local = canonical_bytes(calibrate_suite(suite).to_dict())
                        local_times.append(time.perf_counter() - t)
                    else:
                        remote = canonical_bytes(calibrate_suite(suite, mapper=mapper).to_dict())
                        ray_times.append(time.perf_counter() - t)
                if local != reference or remote != reference:
                    raise SystemExit("calibrations differ between in process and Ray")
            total, workers = cpu_split(suite, mapper)
        best_local, best_ray = min(local_times), min(ray_times)
        episodes = scenarios * 3 * 3
        print(f"\ncalibration of {scenarios} standard scenarios ({episodes} episodes), best of {repeat}; "
              "byte-identical")
        print(f"  in process         {best_local:7.2f} s  {scenarios / best_local:6.1f} scenarios/s")
        print(f"  ray, 2 workers     {best_ray:7.2f} s  {scenarios / best_ray:6.1f} scenarios/s  "
              f"(Ray start-up {started:.1f} s, warm-up pass {warm:.1f} s, excluded)")
        pairs = sorted(a / b for a, b in zip(local_times, ray_times))
        print(f"  speed-up           {best_local / best_ray:7.2f} x  best against best (target >= 1.7 x); "
              f"pairs {', '.join(f'{r:.2f}' for r in pairs)}, median {statistics.median(pairs):.2f} x")
        print(f"  CPU split on Ray   {total:7.2f} CPU s in all; per worker process "
              + ", ".join(f"{w:.2f}" for w in workers)
              + f"; bound on the speed-up with two free cores {total / workers[0]:.2f} x")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dev", type=int, default=500)
    parser.add_argument("--standard", type=int, default=500)
    parser.add_argument("--large", type=int, default=60)
    parser.add_argument("--calibration-scenarios", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--no-ray", action="store_true", help="skip the calibration part")
    args = parser.parse_args()

    print(f"{'recipe':<10}{'scenarios':>10}{'draws':>7}{'wall s':>9}{'per s':>8}{'cpu s':>8}{'per cpu s':>11}")
    for name, count in (("dev", args.dev), ("standard", args.standard), ("large", args.large)):
        wall, cpu, draws = bench_recipe(name, count)
        print(f"{name:<10}{count:>10}{draws:>7}{wall:>9.2f}{count / wall:>8.1f}{cpu:>8.2f}{count / cpu:>11.1f}")
    print("target: standard >= 50 scenarios per second on one core")
    if not args.no_ray:
        bench_calibration(args.calibration_scenarios, args.repeat)


if __name__ == "__main__":
    main()
