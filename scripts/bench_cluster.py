#!/usr/bin/env python3
"""Ray executor and parallel verification against the in-process baseline, side by side.

One run, one manifest (the first ``--episodes`` episodes of the public suite
under seeds 0, 1, 2, ...: every scenario, in suite order), one policy, each
evaluation into a fresh store:

* ``in-process``: the in-process executor (the reference);
* ``ray, 1 worker`` and ``ray, 2 workers``: the Ray executor on an embedded
  Ray instance; Ray start-up and worker start-up are timed separately and
  excluded from the run time;
* ``verify, in process`` and ``verify, 2 workers``: loading the artifact with
  full replay authentication, in process and as ``emberbench verify
  --workers 2`` does it (parallel replay, started during the loader's serial
  checks), the latter after one warm-up pass that imports the code in the
  worker processes (that first pass is reported too); each is timed
  ``--repeat`` times, interleaved, and the best time of each side is kept.

Every artifact must be byte-identical to the in-process one. Targets: Ray
with 1 worker within 10 % of in process; 2 workers at least 1.7 x faster than
1; parallel verify on 2 workers at least 1.7 x faster than in process.

Usage: .venv/bin/python scripts/bench_cluster.py [--episodes 1000] [--policy fire-aware] [--repeat 3]
"""

from __future__ import annotations

import argparse
import math
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from emberbench.results.manifest import EvaluationManifest, build_manifest  # noqa: E402
from emberbench.results.artifact import load_result  # noqa: E402
from emberbench.evaluation.runner import run_evaluation  # noqa: E402
from emberbench.evaluation.store_runner import open_store  # noqa: E402
from emberbench.sim.suite import load_suite  # noqa: E402


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = action()
    return time.perf_counter() - start, value


def bench_manifest(suite: Any, episodes: int) -> EvaluationManifest:
    """The first ``episodes`` episodes of the suite under enough seeds."""
    seeds = list(range(math.ceil(episodes / len(suite.scenarios))))
    full = build_manifest(suite, seeds)
    return EvaluationManifest(suite_id=full.suite_id, suite_version=full.suite_version, suite_hash=full.suite_hash,
                              episodes=full.episodes[:episodes])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--policy", default="fire-aware")
    parser.add_argument("--dir", type=Path, default=None, help="scratch folder (default: a temp folder)")
    parser.add_argument("--repeat", type=int, default=3, help="timings of each verify, best one kept")
    args = parser.parse_args()

    suite = load_suite()
    manifest = bench_manifest(suite, args.episodes)
    n = len(manifest.episodes)
    base = Path(tempfile.mkdtemp(prefix="bench-cluster-", dir=args.dir))
    rows: list[tuple[str, float, str]] = []
    try:
        local_s, _ = timed(lambda: run_evaluation(manifest, suite, args.policy, "m", base / "local.json",
                                                  store=open_store(base / "st-local")))
        reference = (base / "local.json").read_bytes()
        rows.append(("in-process", local_s, ""))

        from emberbench.cluster import RayAuthenticator, RayExecutor, ray_session
        from emberbench.cluster.commands import load_on_ray

        session = ray_session(workers=2)
        init_s, _ = timed(session.__enter__)  # Ray start-up, reported apart
        try:
            by_workers: dict[int, float] = {}
            for workers in (1, 2):
                store = open_store(base / f"st-ray{workers}")
                ex = RayExecutor(suite, args.policy, workers=workers, store_root=store.locator)
                start_s, _ = timed(ex.start)
                try:
                    run_s, _ = timed(lambda w=workers, ex=ex, store=store: run_evaluation(
                        manifest, suite, args.policy, "m", base / f"ray{w}.json", executor=ex, store=store))
                finally:
                    ex.close()
                if (base / f"ray{workers}.json").read_bytes() != reference:
                    raise SystemExit(f"ray with {workers} workers wrote different bytes")
                by_workers[workers] = run_s
                rows.append((f"ray, {workers} worker{'s' if workers > 1 else ''}", run_s,
                             f"worker start-up {start_s:.2f} s, {ex.stats.calls} calls"))
            # Verify is short (seconds), so each side is timed --repeat times,
            # interleaved, and the best time of each is compared.
            local_times, ray_times = [], []
            with RayAuthenticator(2) as auth:
                first_s, _ = timed(lambda: load_on_ray(base / "local.json", suite, auth))
                for _ in range(args.repeat):
                    local_times.append(timed(lambda: load_result(base / "local.json", suite))[0])
                    ray_times.append(timed(lambda: load_on_ray(base / "local.json", suite, auth))[0])
            verify_local_s, verify_ray_s = min(local_times), min(ray_times)
            rows.append(("verify, in process", verify_local_s, f"best of {args.repeat}"))
            rows.append(("verify, 2 workers", verify_ray_s,
                         f"best of {args.repeat}; first pass (worker imports) {first_s:.2f} s"))
        finally:
            session.__exit__(None, None, None)
    finally:
        shutil.rmtree(base, ignore_errors=True)

    print(f"{n} episodes of {args.policy!r}; artifacts byte-identical across executors")
    print(f"{'':24}{'seconds':>9}{'ms/episode':>12}")
    for name, seconds, note in rows:
        print(f"{name:24}{seconds:9.2f}{1000 * seconds / n:12.2f}   {note}")
    overhead = (by_workers[1] - local_s) / n * 1000
    print(f"Ray start-up (embedded, 2 CPUs), excluded above: {init_s:.2f} s")
    print(f"ray 1 worker vs in process: {by_workers[1] / local_s:.3f} x time "
          f"({overhead:+.2f} ms per episode; target <= 1.10 x)")
    print(f"ray 2 workers vs 1 worker: {by_workers[1] / by_workers[2]:.2f} x faster (target >= 1.7)")
    print(f"verify 2 workers vs in process: {verify_local_s / verify_ray_s:.2f} x faster (target >= 1.7)")


if __name__ == "__main__":
    main()
