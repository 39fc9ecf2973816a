#!/usr/bin/env python3
"""How much the policy forms buy: a numpy network batched against one at a time, a slow policy concurrent.

Two measurements, side by side in one run, both in this process (one worker),
through the same drivers the runner uses (:func:`emberbench.evaluation.drive.play_tasks`):

1. **Batched neural policy.** The numpy MLP of docs/examples/policies/numpy_mlp.py
   plays the public suite under ``--seeds`` one episode at a time, then with
   its batch form at ``--batch-size`` (64) in lockstep. For each driver:
   the policy calls and the observations per call; seconds end to end
   (simulation, policy, records), wall and CPU; people-steps (one person
   inside for one step) per CPU second; and the CPU seconds spent inside
   the policy's calls, inside the network's arithmetic alone
   (``numpy_mlp.forward``: the three matrix products and activations) and
   outside the policy. The two runs' records are compared byte for byte.
   The closing lines give the ratios, and the most batching could give if
   the rest cost nothing: inside the policy, the per-episode policy's time
   over the batched network's arithmetic; end to end, the one-at-a-time
   total over the batched run's time outside the policy.
2. **Slow policy, concurrent.** A policy that waits 50 ms per step (then
   acts like ``greedy``) plays short episodes at ``--concurrency`` 1 and 64.
   Episodes per second (wall); records compared byte for byte.

BLAS runs on one thread (set before numpy loads), so the batched figure is
not a multi-core figure. CPU seconds are this process's (``time.process_time``);
on a shared machine they suffer less than wall seconds from other work.

Usage: .venv/bin/python scripts/bench_policies.py [--seeds 0 1 ... 9] [--batch-size 64]
       [--slow-episodes 16 128] [--concurrency 64]
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from emberbench.evaluation.drive import DriveOptions, play_tasks  # noqa: E402
from emberbench.policies.baselines import GreedyPolicy  # noqa: E402
from emberbench.policies.spec import FreshPolicies  # noqa: E402
from emberbench.results.manifest import EvaluationManifest, ManifestEntry, build_manifest  # noqa: E402
from emberbench.sim.suite import load_suite  # noqa: E402

SLOW_SCENARIO = "v1-pub-02-fire-at-near-exit"  # greedy ends it in 8 steps
STEP_SECONDS = 0.05


def _numpy_mlp() -> Any:
    path = ROOT / "docs" / "examples" / "policies" / "numpy_mlp.py"
    spec = importlib.util.spec_from_file_location("numpy_mlp", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["numpy_mlp"] = module
    spec.loader.exec_module(module)
    return module


class Clock:
    """CPU seconds spent inside policy calls and inside the network's forward pass, and the calls made."""

    policy = 0.0
    network = 0.0
    calls = 0
    observations = 0

    @classmethod
    def reset(cls) -> None:
        cls.policy = cls.network = 0.0
        cls.calls = cls.observations = 0


class TimedPolicy:
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __call__(self, obs: Any) -> Any:
        start = time.process_time()
        try:
            return self.inner(obs)
        finally:
            Clock.policy += time.process_time() - start
            Clock.calls += 1
            Clock.observations += 1


class TimedBatch:
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def act_batch(self, observations: Any, slots: Any) -> Any:
        start = time.process_time()
        try:
            return self.inner.act_batch(observations, slots)
        finally:
            Clock.policy += time.process_time() - start
            Clock.calls += 1
            Clock.observations += len(observations)


def _timed_forward(forward: Any) -> Any:
    def timed(weights: Any, x: Any) -> Any:
        start = time.process_time()
        try:
            return forward(weights, x)
        finally:
            Clock.network += time.process_time() - start

    return timed


def _people_steps(record_bytes: bytes) -> int:
    import json

    return sum(len(line) - line.count("-") for line in json.loads(record_bytes)["actions"])


def _play(suite: Any, manifest: EvaluationManifest, factory: Any, drive: DriveOptions,
          ) -> tuple[float, float, list[bytes]]:
    """Wall seconds, CPU seconds and the records of playing ``manifest``."""
    wall, cpu = time.perf_counter(), time.process_time()
    records = [record for _, record in play_tasks(suite, manifest.episodes, FreshPolicies(factory, "bench"), drive)]
    return time.perf_counter() - wall, time.process_time() - cpu, records


def bench_batched(suite: Any, seeds: list[int], batch: int) -> None:
    mlp = _numpy_mlp()
    mlp.forward = _timed_forward(mlp.forward)  # the policies look it up at each call
    weights = mlp.load_weights(None)

    def factory() -> Any:
        return TimedPolicy(mlp.MLPPolicy(weights))

    factory.batch_factory = lambda: TimedBatch(mlp.MLPBatch(weights))  # type: ignore[attr-defined]
    manifest = build_manifest(suite, seeds)
    rows = []
    outputs = []
    for name, drive in (("one at a time", DriveOptions()), (f"batched, B={batch}", DriveOptions(batch_size=batch))):
        Clock.reset()
        wall, cpu, records = _play(suite, manifest, factory, drive)
        outputs.append(records)
        steps = sum(map(_people_steps, records))
        rows.append((name, steps, wall, cpu, Clock.policy, Clock.network, Clock.calls, Clock.observations))
    same = outputs[0] == outputs[1]
    print(f"numpy MLP (docs/examples/policies/numpy_mlp.py), {len(manifest.episodes)} episodes "
          f"(public suite x seeds {_seed_text(seeds)}), {rows[0][1]:,} people-steps; records identical: {same}")
    print(f"  {'driver':<16} {'calls':>6} {'obs/call':>8} {'wall s':>7} {'cpu s':>6} {'people-steps/s':>14} "
          f"{'policy s':>8} {'in policy/s':>11} {'network s':>9} {'outside s':>9}")
    for name, steps, wall, cpu, policy, network, calls, observations in rows:
        print(f"  {name:<16} {calls:>6,} {observations / calls:8.1f} {wall:7.2f} {cpu:6.2f} {steps / cpu:14,.0f} "
              f"{policy:8.2f} {steps / policy:11,.0f} {network:9.2f} {cpu - policy:9.2f}")
    (_, _, w0, c0, p0, n0, _, _), (_, _, w1, c1, p1, n1, _, _) = rows
    print(f"  batched / one at a time: end to end {c0 / c1:.1f}x (wall {w0 / w1:.1f}x), inside the policy "
          f"{p0 / p1:.1f}x, the network's arithmetic alone {n0 / n1:.1f}x")
    print(f"  at most, if the rest cost nothing: inside the policy {p0 / n1:.1f}x (policy one at a time / "
          f"network batched), end to end {c0 / (c1 - p1):.1f}x (total one at a time / outside the policy batched)")


def _seed_text(seeds: list[int]) -> str:
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}-{seeds[-1]}"
    return " ".join(map(str, seeds))


class Slow:
    """Waits STEP_SECONDS per step, then acts like greedy."""

    def __init__(self) -> None:
        self.inner = GreedyPolicy()

    def __call__(self, obs: Any) -> Any:
        time.sleep(STEP_SECONDS)
        return self.inner(obs)


def bench_concurrent(suite: Any, counts: tuple[int, int], concurrency: int) -> None:
    scenario = suite.scenario(SLOW_SCENARIO)

    def manifest(n: int) -> EvaluationManifest:
        entries = tuple(ManifestEntry(i, scenario.id, scenario.content_hash, i) for i in range(n))
        return EvaluationManifest(suite.id, suite.version, suite.hash, entries)

    rows = []
    records = []
    for n, width in ((counts[0], 1), (counts[1], concurrency)):
        seconds, _, played = _play(suite, manifest(n), Slow, DriveOptions(concurrency=width))
        records.append(played)
        rows.append((width, n, seconds))
    same = records[0] == records[1][:counts[0]]
    print(f"policy waiting {STEP_SECONDS * 1000:.0f} ms per step ({SLOW_SCENARIO}, 8 steps an episode), one worker; "
          f"records identical: {same}")
    print(f"  {'concurrency':>11} {'episodes':>9} {'seconds':>8} {'episodes/s':>11}")
    for width, n, seconds in rows:
        print(f"  {width:>11} {n:>9} {seconds:8.2f} {n / seconds:11.2f}")
    (_, n0, t0), (_, n1, t1) = rows
    print(f"  concurrency {concurrency} / 1: {(n1 / t1) / (n0 / t0):.1f}x episodes/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(10)),
                        help="seeds of the public suite (default 0-9: 120 episodes, enough to keep 64 in lockstep)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--slow-episodes", type=int, nargs=2, default=[16, 128], metavar=("AT_1", "AT_N"))
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    suite = load_suite()
    bench_batched(suite, args.seeds, args.batch_size)
    print()
    bench_concurrent(suite, tuple(args.slow_episodes), args.concurrency)


if __name__ == "__main__":
    main()
