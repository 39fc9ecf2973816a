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

With ``--batch B`` it measures lockstep stepping instead, side by side: every
public scenario under seeds 0..K-1 with the moves a policy chose (``--policy``,
default ``greedy``; recorded
first, so no policy and no observation is timed), played once episode by
episode through ``Simulation.step`` and once through ``SimulationBatch.step``
with B slots refilled as episodes end. Fire timelines are computed before
the clock starts (they are the same work in both), and every batched record
is checked byte for byte against its single-episode twin. Times are the
process's CPU time (time.process_time), so other load on a shared machine
disturbs them less than wall time.

Usage: python scripts/bench_sim.py [--repeat N] [--seeds K]
       python scripts/bench_sim.py --batch 64 [--repeat N] [--seeds K] [--policy NAME]
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
from emberbench.records.record import record_from_outcome  # noqa: E402
from emberbench.sim import simulator  # noqa: E402
from emberbench.sim.batch import SimulationBatch  # noqa: E402
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
    ap.add_argument("--batch", type=int, default=0, metavar="B",
                    help="measure lockstep stepping of B episodes at once against single stepping")
    ap.add_argument("--policy", default="greedy", choices=sorted(BUILTIN_POLICIES),
                    help="with --batch: the built-in policy whose moves are replayed")
    args = ap.parse_args()
    suite = load_suite()
    if args.batch:
        lockstep(suite, args.batch, args.seeds, args.repeat, args.policy)
        return
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


def _codes(record) -> list[np.ndarray]:
    """The move codes of each step of a record (people inside only, scenario order)."""
    return [np.array([_CODE[c] for c in line if c != "-"], dtype=np.int64) for line in record.actions]


def _single(episodes, codes) -> tuple[float, list[bytes]]:
    t0 = time.process_time()
    outcomes = []
    for (scenario, seed), steps in zip(episodes, codes):
        sim = Simulation(scenario, seed)
        for c in steps:
            sim.step(c)
        outcomes.append(sim.outcome())
    elapsed = time.process_time() - t0
    return elapsed, [record_from_outcome(s, seed, o).canonical_bytes() for (s, seed), o in zip(episodes, outcomes)]


def _batched(episodes, codes, size: int) -> tuple[float, list[bytes]]:
    t0 = time.process_time()
    batch = SimulationBatch(size)
    queue = iter(range(len(episodes)))
    owner: dict[int, int] = {}
    outcomes: dict[int, object] = {}
    for slot, k in zip(range(size), queue):
        batch.start(slot, *episodes[k])
        owner[slot] = k
    while batch.live:
        live = batch.live
        batch.step([codes[owner[s]][batch.steps(s)] for s in live])
        for s in live:
            if batch.done(s):
                outcomes[owner[s]] = batch.outcome(s)
                k = next(queue, None)
                if k is not None:
                    batch.start(s, *episodes[k])
                    owner[s] = k
    elapsed = time.process_time() - t0
    return elapsed, [record_from_outcome(s, seed, outcomes[k]).canonical_bytes()
                     for k, (s, seed) in enumerate(episodes)]


def lockstep(suite, size: int, seeds: int, repeat: int, policy: str) -> None:
    """Single stepping against lockstep stepping of ``size`` episodes, on the same moves."""
    episodes = [(scenario, seed) for seed in range(seeds) for scenario in suite.scenarios]
    factory = BUILTIN_POLICIES[policy]
    records = [play_episode(s, seed, factory())[0] for s, seed in episodes]
    codes = [_codes(r) for r in records]
    people_steps = sum(int(c.size) for steps in codes for c in steps)
    # Keep every timeline in memory: both paths then read the same precomputed fire.
    simulator._FIRE_CACHE_SIZE = len(episodes) + 1
    for s, seed in episodes:
        simulator.cached_fire(s, seed)
    print(f"{len(episodes)} episodes (every public scenario x seeds 0..{seeds - 1}), {policy}'s moves, "
          f"{people_steps:,} people-steps; median of {repeat}")
    single_t, batch_t = [], []
    for _ in range(repeat):
        elapsed, single = _single(episodes, codes)
        single_t.append(elapsed)
        elapsed, batched = _batched(episodes, codes, size)
        batch_t.append(elapsed)
        if batched != single or single != [r.canonical_bytes() for r in records]:
            raise SystemExit("lockstep records differ from single-episode records")
    one, many = statistics.median(single_t), statistics.median(batch_t)
    print(f"  single stepping       {people_steps / one:>12,.0f} people-steps/s  ({one * 1e3:.0f} ms)")
    print(f"  lockstep, B={size:<9} {people_steps / many:>12,.0f} people-steps/s  ({many * 1e3:.0f} ms)")
    print(f"  speed-up              {one / many:>12.2f}x  (records byte-identical)")


if __name__ == "__main__":
    main()
