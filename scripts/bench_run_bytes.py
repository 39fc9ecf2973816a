#!/usr/bin/env python3
"""Bytes written, peak memory and resume authentication of a store-backed run, with default options.

For each size given (``--episodes 1000 20000``), on a manifest of the public
suite under enough seeds to reach it, with ``greedy`` and the in-process
executor, each step in a fresh child process (so /proc/self/io and the peak
RSS count that step alone):

1. **run**: ``run_evaluation`` with a fresh store and every other option at
   its default (the CLI's defaults: checkpoints every 60 s within their
   budget). Reported: the bytes the process handed to write() (``wchar``:
   record objects, journal, checkpoints, the final artifact and its stored
   copy, run-info objects, the sidecar, and the record spool's temp file)
   divided by the final artifact's size (target <= 2.5 at every size, not
   growing with n), and of those the spool's own share (its compressed
   copies past the in-memory bound, :mod:`emberbench.evaluation.record_spool`) and its
   copies held in memory at the end; the peak RSS.
2. **resume**: the same run again into a new ``--out``: every journaled
   episode is read back from the store, checked and replayed before the
   artifact is written. Reported: the time of that authentication (wall and
   CPU) against the time of *playing* the same episodes
   (``play_to_outcome`` with the policy, no store, in a fresh process),
   target <= 1.0; and the whole resume (authentication, then writing the
   artifact and checking the stored result) against play.

The peak RSS at two sizes gives the memory slope per episode and an
extrapolation to 10^5 episodes (target <= 1 GiB, slope <= about 2 KiB).
The rewrite-after-every-episode runner (no store) is not run: its total is
quadratic (``--rewrite`` prints the computed total for comparison).

Usage: .venv/bin/python scripts/bench_run_bytes.py [--episodes 1000 20000] [--dir /tmp] [--skip-play]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def wchar() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise RuntimeError("no wchar in /proc/self/io")


def manifest_of(suite, episodes: int):  # noqa: ANN001, ANN201
    from emberbench.results.manifest import EvaluationManifest, ManifestEntry, build_manifest

    seeds = list(range(-(-episodes // len(suite.scenarios))))
    full = build_manifest(suite, seeds)
    entries = tuple(ManifestEntry(e.index, e.scenario_id, e.scenario_hash, e.seed) for e in full.episodes[:episodes])
    return EvaluationManifest(full.suite_id, full.suite_version, full.suite_hash, entries)


def child(step: str, episodes: int, folder: Path) -> dict[str, float]:
    """One measured step, in this (child) process; the manifest is read from its file, as the CLI does."""
    from emberbench.results.manifest import load_manifest
    from emberbench.evaluation.runner import play_to_outcome, run_evaluation
    from emberbench.evaluation.store_runner import open_store
    from emberbench.sim.suite import load_suite

    suite = load_suite()
    manifest = load_manifest(folder / "manifest.json", suite)
    assert len(manifest.episodes) == episodes
    timed = _time_authentication()
    spooled = _count_spool()
    w0, t0, c0 = wchar(), time.perf_counter(), time.process_time()
    if step == "play":
        from emberbench.policies.spec import resolve_policy

        factory = resolve_policy("greedy")
        for entry in manifest.episodes:
            play_to_outcome(suite, entry, factory)
    else:
        out = folder / ("run.json" if step == "run" else "resumed.json")
        summary = run_evaluation(manifest, suite, "greedy", "bench", out, store=open_store(folder / "store"))
        assert summary.completed == episodes and (step == "run" or summary.from_journal == episodes)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out = {"step": step, "episodes": episodes, "seconds": seconds, "cpu": cpu, "written": wchar() - w0,
           "peak_rss": peak, "auth_seconds": timed[0], "auth_cpu": timed[1], "spool_disk": spooled[0],
           "spool_memory": spooled[1]}
    with open(folder.parent / "bench-run-bytes.jsonl", "a") as log:  # every step's figures, kept after cleanup
        log.write(json.dumps(out) + "\n")
    return out


def _count_spool() -> list[int]:
    """Wrap the run's record spool: [bytes written to its temp file, bytes it held in memory], taken at close."""
    import emberbench.evaluation.store_runner as runner
    from emberbench.evaluation.record_spool import RecordSpool

    counted = [0, 0]

    class Counted(RecordSpool):
        def close(self) -> None:
            if self._offsets:  # the first close only
                counted[0] += self.disk_bytes
                counted[1] = max(counted[1], self.memory_bytes)
            super().close()

    runner.RecordSpool = Counted
    return counted


def _time_authentication() -> list[float]:
    """Wrap the resume's authentication of journaled episodes to time it alone: [wall, cpu] seconds."""
    import emberbench.evaluation.store_adopt as adopt
    import emberbench.evaluation.store_runner as runner

    timed = [0.0, 0.0]
    real = adopt.verify_journaled

    def verify_journaled(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            return real(*args, **kwargs)
        finally:
            timed[0] += time.perf_counter() - t0
            timed[1] += time.process_time() - c0

    runner.verify_journaled = verify_journaled
    return timed


def measure(step: str, episodes: int, folder: Path) -> dict[str, float]:
    done = subprocess.run([sys.executable, __file__, "--child", step, str(episodes), str(folder)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{step} at {episodes} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--episodes", type=int, nargs="+", default=[1000, 20000])
    ap.add_argument("--dir", type=Path, default=None, help="where the temporary store and artifacts go")
    ap.add_argument("--skip-play", action="store_true", help="do not time plain play (no auth/play ratio)")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        step, episodes, folder = args.child
        print(json.dumps(child(step, int(episodes), Path(folder))))
        return 0
    from emberbench.results.manifest import write_manifest
    from emberbench.sim.suite import load_suite

    suite = load_suite()
    rows = []
    for n in args.episodes:
        with tempfile.TemporaryDirectory(dir=args.dir, prefix="bench-run-bytes-") as tmp:
            folder = Path(tmp)
            write_manifest(manifest_of(suite, n), folder / "manifest.json")
            run = measure("run", n, folder)
            size = (folder / "run.json").stat().st_size
            resume = measure("resume", n, folder)
            play = None if args.skip_play else measure("play", n, folder)
        rows.append((n, size, run, resume, play))
        ratio = run["written"] / size
        line = (f"{n:>7,} episodes: artifact {size:>13,} B, run wrote {run['written']:>14,} B = {ratio:5.2f} x "
                f"artifact (target <= 2.5), run {run['seconds']:7.1f} s, peak RSS {run['peak_rss'] / 2**20:7.1f} MiB")
        print(line)
        print(f"{'':>7}           of which the record spool's temp file {run['spool_disk']:,} B "
              f"({run['spool_disk'] / size:.2f} x artifact); its copies in memory at the end "
              f"{run['spool_memory'] / 2**20:.1f} MiB")
        resume_line = (f"{'':>7}           resume: authenticating {n:,} journaled episodes took {resume['auth_seconds']:.1f} s "
                       f"({resume['auth_cpu']:.1f} s CPU), the whole resume {resume['seconds']:.1f} s "
                       f"(peak RSS {resume['peak_rss'] / 2**20:.1f} MiB)")
        if play is not None:
            resume_line += (f"; playing them takes {play['seconds']:.1f} s ({play['cpu']:.1f} s CPU): authentication / "
                            f"play = {resume['auth_seconds'] / play['seconds']:.2f} wall, "
                            f"{resume['auth_cpu'] / play['cpu']:.2f} CPU (target <= 1.0); whole resume / play = "
                            f"{resume['seconds'] / play['seconds']:.2f}")
        print(resume_line, flush=True)
    if len(rows) >= 2:
        (n1, _, r1, _, _), (n2, _, r2, _, _) = rows[0], rows[-1]
        slope = (r2["peak_rss"] - r1["peak_rss"]) / (n2 - n1)
        fixed = r1["peak_rss"] - slope * n1
        print(f"run peak RSS: {slope / 1024:.2f} KiB per episode + {fixed / 2**20:.0f} MiB fixed; "
              f"extrapolated to 100,000 episodes: {(fixed + slope * 1e5) / 2**30:.2f} GiB (target <= 1 GiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
