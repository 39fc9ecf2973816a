#!/usr/bin/env python3
"""Evaluation speed on the development manifest (the public suite under seeds 0, 1, 2).

Side by side in one run, with ``greedy`` and the in-process executor:
  * episodes per second of a run without a store (the artifact rewritten
    after every episode) and with a store (journal + one final artifact);
  * the time to load and fully authenticate the resulting artifact (every
    record replayed), and its ratio to the run;
  * the same two through the command line (``emberbench run --executor local``
    and ``emberbench verify``), wall time including interpreter start-up.

Usage: .venv/bin/python scripts/bench_eval.py [--repeat 3] [--seeds 0 1 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from emberbench.results.manifest import build_manifest, write_manifest  # noqa: E402
from emberbench.results.artifact import load_result  # noqa: E402
from emberbench.evaluation.runner import run_evaluation  # noqa: E402
from emberbench.sim.simulator import clear_fire_cache  # noqa: E402
from emberbench.evaluation.store_runner import open_store  # noqa: E402
from emberbench.sim.suite import load_suite  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = ap.parse_args()
    suite = load_suite()
    manifest = build_manifest(suite, args.seeds)
    n = len(manifest.episodes)
    plain, stored, load = [], [], []
    with tempfile.TemporaryDirectory(prefix="bench-eval-") as tmp:
        tmp_path = Path(tmp)
        for k in range(args.repeat):
            clear_fire_cache()
            out = tmp_path / f"plain-{k}.json"
            t0 = time.perf_counter()
            run_evaluation(manifest, suite, "greedy", "greedy", out)
            plain.append(time.perf_counter() - t0)
            clear_fire_cache()
            t0 = time.perf_counter()
            run_evaluation(manifest, suite, "greedy", "greedy", tmp_path / f"stored-{k}.json",
                           store=open_store(tmp_path / f"store-{k}"))
            stored.append(time.perf_counter() - t0)
            clear_fire_cache()
            t0 = time.perf_counter()
            load_result(out, suite)
            load.append(time.perf_counter() - t0)
        med = statistics.median
        size = (tmp_path / "plain-0.json").stat().st_size
        print(f"dev manifest: {n} episodes, artifact {size:,} bytes, median of {args.repeat}")
        print(f"run, no store         {n / med(plain):8.1f} episodes/s  ({med(plain):.3f} s)")
        print(f"run, with store       {n / med(stored):8.1f} episodes/s  ({med(stored):.3f} s)")
        print(f"load + authenticate   {n / med(load):8.1f} episodes/s  ({med(load):.3f} s, "
              f"{med(load) / med(plain):.2f} x the run)")
        mpath = tmp_path / "m.json"
        write_manifest(manifest, mpath)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        cli = [sys.executable, "-c", "from emberbench.cli.main import main; main()"]
        t0 = time.perf_counter()
        subprocess.run(cli + ["run", "--manifest", str(mpath), "--policy", "greedy", "--model-id", "greedy",
                              "--out", str(tmp_path / "cli.json"), "--store", str(tmp_path / "cli-store"),
                              *local_flag(cli, env)], check=True, env=env, stdout=subprocess.DEVNULL)
        run_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        subprocess.run(cli + ["verify", str(tmp_path / "cli.json")], check=True, env=env, stdout=subprocess.DEVNULL)
        verify_s = time.perf_counter() - t0
        print(f"CLI emberbench run    {n / run_s:8.1f} episodes/s  ({run_s:.2f} s wall, start-up included)")
        print(f"CLI emberbench verify {n / verify_s:8.1f} episodes/s  ({verify_s:.2f} s wall)")
    return 0


def local_flag(cli: list[str], env: dict[str, str]) -> list[str]:
    """``--executor local`` when this version of the CLI has executors."""
    helptext = subprocess.run(cli + ["run", "--help"], capture_output=True, text=True, env=env).stdout
    return ["--executor", "local"] if "--executor" in helptext else []


if __name__ == "__main__":
    raise SystemExit(main())
