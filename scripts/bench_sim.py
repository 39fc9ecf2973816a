#!/usr/bin/env python3
"""Simulator speed on the large public scenario (one core, numbers side by side).

Measures, for ``greedy`` and ``stay`` on v1-pub-11-large-campus:
  * the simulation alone: stepping with the recorded actions, no policy, no
    observations (fire timeline computed cold, i.e. included);
  * a whole episode with the policy (observations, validation included) and
    the share of that time spent inside the policy;
  * authentication (replay + metrics) against playing, as a ratio;
  * bytes per record (canonical JSON).
People-steps are the person-step pairs inside at the start of each step.

Usage: python scripts/bench_sim.py [--repeat N] [--seeds K]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from emberbench.records.episode import authenticate, play_episode  # noqa: E402
from emberbench.policies import BUILTIN_POLICIES  # noqa: E402
from emberbench.sim.simulator import Simulation, clear_fire_cache  # noqa: E402
from emberbench.sim.suite import load_suite  # noqa: E402

LARGE = "v1-pub-11-large-campus"
_CODE = {c: i for i, c in enumerate(".NESW")}


def timed_policy(policy, clock):
    def call(obs):
        t0 = time.perf_counter()
        try:
            return policy(obs)
        finally:
            clock[0] += time.perf_counter() - t0
    return call


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5, help="repetitions per seed (median reported)")
    ap.add_argument("--seeds", type=int, default=3, help="seeds 0..K-1")
    args = ap.parse_args()
    suite = load_suite()
    scenario = suite.scenario(LARGE)
    print(f"scenario {LARGE}: {scenario.height}x{scenario.width}, {scenario.population} people, "
          f"max_steps {scenario.max_steps}")
    for name in ("greedy", "stay"):
        sim_t, play_t, pol_t, auth_t, ps_total, size = [], [], [], [], 0, 0
        for seed in range(args.seeds):
            for _ in range(args.repeat):
                clear_fire_cache()
                clock = [0.0]
                t0 = time.perf_counter()
                record, metrics = play_episode(scenario, seed, timed_policy(BUILTIN_POLICIES[name](), clock))
                play_t.append(time.perf_counter() - t0)
                pol_t.append(clock[0])
                ps = metrics.count("active_person_states")
                codes = []
                for line in record.actions:
                    codes.append(np.array([_CODE[c] for c in line if c != "-"], dtype=np.int64))
                clear_fire_cache()
                t0 = time.perf_counter()
                sim = Simulation(scenario, seed)
                for c, line in zip(codes, record.actions):
                    sim.step(c, line)
                sim.outcome()
                sim_t.append(time.perf_counter() - t0)
                clear_fire_cache()
                t0 = time.perf_counter()
                authenticate(record, suite)
                auth_t.append(time.perf_counter() - t0)
            ps_total = ps
            size = len(record.canonical_bytes())
        med = statistics.median
        print(f"\npolicy {name} (last seed: {ps_total} people-steps, {record.steps} steps, record {size:,} bytes)")
        print(f"  simulation alone      {ps_total / med(sim_t):>12,.0f} people-steps/s  "
              f"({record.steps / med(sim_t):,.0f} steps/s)")
        print(f"  whole episode         {ps_total / med(play_t):>12,.0f} people-steps/s  "
              f"(policy share {med(pol_t) / med(play_t):.0%})")
        print(f"  authenticate / play   {med(auth_t) / med(play_t):.2f}  "
              f"(authenticate {med(auth_t) * 1e3:.1f} ms, play {med(play_t) * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
