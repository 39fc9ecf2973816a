#!/usr/bin/env python3
"""gc beside an active run: how long `store gc --grace 0 --apply` takes while a run writes, and that nothing is lost.

For each backend (a local folder, and the loopback S3 test server it starts,
moto's from the test extra), the script:

1. fills the store with finished runs (``--filler`` runs of the public suite's
   first scenarios) and some garbage objects, so gc has work to do;
2. starts ``emberbench run`` of ``--episodes`` greedy episodes into the same
   store, in another process;
3. while that run writes, runs gc with no grace period and ``apply`` from
   this process (its own store object, so its own leases), ``--repeat``
   times, timing each call;
4. times the same gc once the run has ended (nothing beside it);
5. checks that the run completed and that ``store fsck --connectivity`` and
   ``store audit`` pass: gc beside the run deleted nothing it needed.

It prints one line per backend: gc's median, fastest and slowest time beside
the run, its time alone, and what the gcs deleted and kept for the live writer.

Usage: .venv/bin/python scripts/bench_gc_beside_run.py [--episodes 240] [--repeat 5] [--filler 3]
                                                        [--backend local s3]
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


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "emberbench", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=1800)


def bench(locator: str, work: Path, episodes: int, repeat: int, filler: int, env: dict[str, str]) -> str:
    """One backend: fill, run beside gc, check; the result line."""
    from emberbench.results.manifest import build_manifest, write_manifest
    from emberbench.sim.suite import load_suite
    from emberbench.store import gc, open_store

    suite = load_suite()
    ids = sorted(s.id for s in suite.scenarios)
    for n in range(filler):
        manifest = build_manifest(suite, [100 + n], scenario_ids=ids[:4])
        write_manifest(manifest, work / f"filler{n}.json")
        done = _cli("run", "--manifest", str(work / f"filler{n}.json"), "--policy", "greedy", "--model-id",
                    f"filler-{n}", "--out", str(work / f"filler{n}.out.json"), "--executor", "local", "--store",
                    locator, env=env)
        assert done.returncode == 0, done.stderr
    store = open_store(locator)
    for n in range(50):
        store.put(f"garbage {n}".encode() * 100)
    store.close()
    seeds = list(range(max(1, episodes // len(ids) + 1)))
    manifest = build_manifest(suite, seeds)
    manifest = type(manifest)(manifest.suite_id, manifest.suite_version, manifest.suite_hash,
                              manifest.episodes[:episodes])
    write_manifest(manifest, work / "m.json")
    run = subprocess.Popen([sys.executable, "-m", "emberbench", "run", "--manifest", str(work / "m.json"),
                            "--policy", "greedy", "--model-id", "beside-gc", "--out", str(work / "out.json"),
                            "--executor", "local", "--store", locator], env=env, cwd=ROOT,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    collector = open_store(locator)
    from emberbench.store import journal_name

    name = journal_name(manifest.hash, "beside-gc")
    while run.poll() is None and not (name in collector.journal_names()
                                      and len(collector.read_journal(name).entries) >= 3):
        time.sleep(0.2)  # until the run is writing episodes
    beside: list[float] = []
    deleted = protected = 0
    try:
        while len(beside) < repeat and run.poll() is None:
            time.sleep(0.5)
            started = time.perf_counter()
            report = gc(collector, grace_seconds=0, apply=True)
            beside.append(time.perf_counter() - started)
            deleted += len(report.deleted)
            protected = max(protected, report.protected)
    finally:
        _, err = run.communicate(timeout=1800)
    assert run.returncode == 0, err
    started = time.perf_counter()
    alone = gc(collector, grace_seconds=0, apply=True)
    idle = time.perf_counter() - started
    check = _cli("store", "fsck", "--store", locator, "--connectivity", env=env)
    audit = _cli("store", "audit", "--store", locator, env=env)
    assert check.returncode == 0, check.stdout + check.stderr
    assert audit.returncode == 0, audit.stdout + audit.stderr
    if not beside:
        return f"{locator.split('?')[0]}: the run ended before gc could run beside it (use more --episodes)"
    return (f"{locator.split('?')[0]}: gc --grace 0 --apply beside a {episodes}-episode run: median "
            f"{statistics.median(beside):.2f} s (fastest {min(beside):.2f}, slowest {max(beside):.2f}, {len(beside)} "
            f"runs of gc; {alone.objects} objects at the end); alone afterwards {idle:.2f} s; beside the run gc "
            f"deleted {deleted} objects and kept up to {protected} for the live writer; fsck and audit pass")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=240)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--filler", type=int, default=3)
    parser.add_argument("--backend", nargs="+", choices=("local", "s3"), default=["local", "s3"])
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = None
    if "s3" in args.backend:
        from tests import s3server

        env.update({"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1",
                    "AWS_EC2_METADATA_DISABLED": "true"})
        for name in ("AWS_SESSION_TOKEN", "AWS_PROFILE"):
            env.pop(name, None)
        os.environ.update({k: env[k] for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION",
                                               "AWS_EC2_METADATA_DISABLED")})
        server = s3server.start()
    try:
        for backend in args.backend:
            with tempfile.TemporaryDirectory(prefix="emberbench-gc-bench-") as folder:
                work = Path(folder)
                locator = str(work / "store") if backend == "local" else \
                    f"s3://{s3server.BUCKET}/gc-bench-{os.getpid()}?endpoint={server.endpoint}"
                print(bench(locator, work, args.episodes, args.repeat, args.filler, env), flush=True)
    finally:
        if server is not None:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
