#!/usr/bin/env python3
"""Scale of every command that reads a whole evaluation: peak memory and time at 10^3, 10^4 and 10^5 episodes.

For each size N, on a small, fast suite written by this script (four rooms of a
few cells, one to three people, a spreading fire; ``greedy`` plays an episode
in about a millisecond, so 10^5 episodes fit in a run):

1. ``emberbench run`` (``--executor local``, a fresh store) writes artifact A
   (``greedy``) and fills the store;
2. artifact B (``stay``) is written by the faster route: the same episodes
   played in this process and assembled with ``artifact_chunks`` straight to
   the file (no journal, no fsync); it is an ordinary, authenticatable
   artifact;
3. each command runs as its own process: ``verify A``, ``stats A
   --resamples 200``, ``compare A B --resamples 200``, ``store audit``,
   ``store fsck`` (and ``run`` from step 1). Its peak RSS and CPU time come
   from ``wait4``.

The statistics' own work (the bootstrap and descriptive statistics, no
replay) is timed in this process on the same values, for the CPU targets:
``stats`` at most 1.2 x (verify + its statistics), ``compare`` at most 1.2 x
(two verifies + its statistics). The two verifies are those of A and of B
(B, played by ``stay``, runs every episode to its step limit and costs more
to replay than A), so whenever ``compare`` is measured B is verified too.

Printed: a table per command with peak RSS and CPU seconds at each N, the
memory slope in bytes per episode (between the two largest N) and the fixed
part (the intercept), the growth exponents of time and memory between the
two largest N, and the extrapolation to 10^6 episodes.

Usage: .venv/bin/python scripts/bench_scale.py [--sizes 1000 10000 100000]
       [--commands run verify stats compare audit fsck] [--workdir DIR] [--keep]
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from emberbench.io.canonical import canonical_bytes  # noqa: E402
from emberbench.results.manifest import EvaluationManifest, ManifestEntry, build_manifest, write_manifest  # noqa: E402
from emberbench.sim.scenario import scenario_from_dict  # noqa: E402

COMMANDS = ("run", "verify", "stats", "compare", "audit", "fsck")
RESAMPLES = 200
ROOMS = (
    # (id, picture, spread): '#' wall, '.' floor, 'E' exit, 'P' person, '*' fire.
    ("bench-a", ["#####", "#P..E", "#.P.#", "###*#"], (1, 2)),
    ("bench-b", ["######", "E.P..#", "#..P.E", "#*####"], (1, 3)),
    ("bench-c", ["#####", "#P.*#", "#...E", "#####"], (2, 3)),
    ("bench-d", ["######", "#..P.E", "#P.PP#", "#*####"], (1, 2)),
)


def write_suite(folder: Path) -> Path:
    """The bench suite: four small rooms (deterministic; same bytes every time)."""
    (folder / "scenarios").mkdir(parents=True, exist_ok=True)
    entries = []
    for sid, picture, (num, den) in ROOMS:
        exits, people, fire = [], [], []
        for r, row in enumerate(picture):
            for c, ch in enumerate(row):
                {"E": exits, "P": people, "*": fire}.get(ch, []).append((r, c))
        data = {
            "scenario_format": "1.0", "id": sid, "description": "a small room for the scale benchmark",
            "map": ["".join("#" if ch == "#" else "." for ch in row) for row in picture],
            "exits": [{"id": f"x{k}", "row": r, "col": c} for k, (r, c) in enumerate(exits)],
            "people": [{"id": f"p{k}", "row": r, "col": c} for k, (r, c) in enumerate(people)],
            "fire": [[r, c] for r, c in fire], "spread": {"numerator": num, "denominator": den},
            "max_steps": 12, "seed": 0, "allow_unreachable": True,
        }
        scenario = scenario_from_dict(data)
        (folder / "scenarios" / f"{sid}.json").write_bytes(canonical_bytes(data) + b"\n")
        entries.append({"id": sid, "file": f"scenarios/{sid}.json", "scenario_hash": scenario.content_hash})
    suite = {"suite_format": "1.0", "suite_id": "bench-scale", "suite_version": "1.0.0",
             "description": "rooms for scripts/bench_scale.py", "scenarios": entries,
             "families": [{"id": "all-rooms", "description": "every room", "scenarios": [e["id"] for e in entries]},
                          {"id": "two-rooms", "description": "two rooms", "scenarios": ["bench-a", "bench-d"]}]}
    (folder / "suite.json").write_bytes(canonical_bytes(suite) + b"\n")
    return folder


def manifest_of(suite, n: int) -> EvaluationManifest:  # noqa: ANN001
    full = build_manifest(suite, list(range(-(-n // len(suite.scenarios)))))
    entries = tuple(ManifestEntry(e.index, e.scenario_id, e.scenario_hash, e.seed) for e in full.episodes[:n])
    return EvaluationManifest(full.suite_id, full.suite_version, full.suite_hash, entries)


def write_played(manifest: EvaluationManifest, suite, policy: str, model_id: str, out: Path) -> None:  # noqa: ANN001
    """The faster route to an artifact: play every episode here and stream the artifact to ``out``."""
    from emberbench.io.atomic import atomic_write_bytes
    from emberbench.policies.spec import resolve_policy
    from emberbench.results.artifact import artifact_chunks, episode_chunk
    from emberbench.evaluation.runner import play_to_outcome

    factory = resolve_policy(policy)

    def chunks():  # noqa: ANN202
        for entry in manifest.episodes:
            outcome, record = play_to_outcome(suite, entry, factory)
            yield episode_chunk(entry, record, outcome.record_digest, outcome.metrics_bytes)

    atomic_write_bytes(out, artifact_chunks(manifest, model_id, chunks()))


def measure(argv: list[str], cwd: Path) -> tuple[float, float, int]:
    """Run one command to completion: (wall seconds, CPU seconds, peak RSS bytes)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", "from emberbench.cli.main import main; main()", *argv],
                            cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode() if proc.stderr else ""
    proc.stderr.close() if proc.stderr else None
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{' '.join(argv)} exited {code}: {err.strip()}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def statistics_seconds(suite, a: Path, b: Path) -> tuple[float, float]:  # noqa: ANN001
    """CPU seconds of the statistics alone (aggregate of A, paired A-B), on the stored values (no replay)."""
    from emberbench.records.metrics import metrics_from_dict
    from emberbench.results.stream import read_header
    from emberbench.results.text import ArtifactWalker
    from emberbench.statistics import aggregate_from_table, paired_from_tables
    from emberbench.statistics.columns import TableBuilder
    from emberbench.statistics.verified import context_of

    def table(path: Path):  # noqa: ANN202
        builder = TableBuilder()
        with path.open("rb") as handle:
            walker = ArtifactWalker(handle, str(path))
            for _, e, _ in walker.episodes():
                builder.add_metrics(e["index"], e["scenario_id"], metrics_from_dict(e["metrics"]))
        return builder.build(), walker.digest

    head = read_header(a)
    ctx = context_of(head.manifest, suite)
    (ta, da), (tb, db) = table(a), table(b)
    t0 = time.process_time()
    aggregate_from_table(ctx, "a", da, ta, RESAMPLES)
    t1 = time.process_time()
    paired_from_tables(ctx, "a", "b", da, db, ta, tb, RESAMPLES)
    return t1 - t0, time.process_time() - t1


def mib(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"


def report(sizes: list[int], results: dict[str, dict[int, tuple[float, float, int]]],
           stats_cpu: dict[int, tuple[float, float]], verify_b: dict[int, float]) -> None:
    lo, hi = sizes[-2], sizes[-1]
    print()
    head = " | ".join(f"RSS at {n:,}" for n in sizes)
    print(f"| command | {head} | bytes/episode | fixed | CPU s at {hi:,} | time exp. | memory exp. | "
          "RSS at 10^6 | CPU s at 10^6 | 24 GiB reached at |")
    print("|" + "---|" * (len(sizes) + 9))
    for command, rows in results.items():
        if hi not in rows or lo not in rows:
            continue
        (_, c_lo, m_lo), (_, c_hi, m_hi) = rows[lo], rows[hi]
        slope = (m_hi - m_lo) / (hi - lo)
        fixed = m_hi - slope * hi
        t_exp = math.log(c_hi / c_lo) / math.log(hi / lo) if c_lo > 0 else float("nan")
        m_exp = math.log(m_hi / m_lo) / math.log(hi / lo)
        at_million = fixed + slope * 1e6
        cpu_million = c_hi * (1e6 / hi) ** max(t_exp, 1.0)
        cells = " | ".join(mib(rows[n][2]) if n in rows else "-" for n in sizes)
        limit = f"{(24 * 2**30 - fixed) / slope:.1e} episodes" if slope > 0 else "never"
        print(f"| {command} | {cells} | {slope:,.0f} | {mib(fixed)} | {c_hi:,.1f} | {t_exp:.3f} | {m_exp:.3f} | "
              f"{mib(at_million)} | {cpu_million:,.0f} | {limit} |")
    print()
    for n in sizes:
        if n not in stats_cpu or n not in verify_b or \
                not {"verify", "stats", "compare"} <= {c for c in results if n in results[c]}:
            continue
        verify, stats, compare = results["verify"][n][1], results["stats"][n][1], results["compare"][n][1]
        agg, par = stats_cpu[n]
        print(f"N={n:,}: stats {stats:.1f} s CPU = {stats / (verify + agg):.3f} x (verify {verify:.1f} + statistics "
              f"{agg:.1f}); compare {compare:.1f} s = {compare / (verify + verify_b[n] + par):.3f} x (verify A "
              f"{verify:.1f} + verify B {verify_b[n]:.1f} + statistics {par:.1f})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--commands", nargs="+", choices=COMMANDS, default=list(COMMANDS))
    ap.add_argument("--workdir", type=Path, default=None, help="keep inputs and outputs here (default: a temp dir)")
    ap.add_argument("--keep", action="store_true", help="do not delete the work folder")
    args = ap.parse_args()
    sizes = sorted(args.sizes)
    if len(sizes) < 2:
        ap.error("give at least two sizes (the slope needs two)")
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    from emberbench.sim.suite import load_suite

    suite_dir = write_suite(work / "suite")
    suite = load_suite(suite_dir)
    results: dict[str, dict[int, tuple[float, float, int]]] = {c: {} for c in args.commands}
    stats_cpu: dict[int, tuple[float, float]] = {}
    verify_b: dict[int, float] = {}
    try:
        for n in sizes:
            folder = work / f"n{n}"
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            manifest = manifest_of(suite, n)
            write_manifest(manifest, folder / "m.json")
            common = ["--suite", str(suite_dir)]
            a, b, store = folder / "A.json", folder / "B.json", folder / "store"
            run_argv = ["run", "--manifest", "m.json", "--policy", "greedy", "--model-id", "greedy", "--out", "A.json",
                        "--store", "store", "--executor", "local", *common]
            steps = {
                "run": run_argv,
                "verify": ["verify", "A.json", *common],
                "stats": ["stats", "A.json", "--resamples", str(RESAMPLES), "--out", "A.stats.json", *common],
                "compare": ["compare", "A.json", "B.json", "--resamples", str(RESAMPLES), "--out", "AB.json",
                            *common],
                "audit": ["store", "audit", "--store", "store", *common],
                "fsck": ["store", "fsck", "--store", "store"],
            }
            print(f"N={n:,}: run", flush=True)
            results.setdefault("run", {})[n] = measure(run_argv, folder)
            write_played(manifest, suite, "stay", "stay", b)
            print(f"N={n:,}: A {a.stat().st_size:,} bytes, B {b.stat().st_size:,} bytes, store {store}", flush=True)
            for command in args.commands:
                if command == "run":
                    continue
                results[command][n] = measure(steps[command], folder)
                wall, cpu, rss = results[command][n]
                print(f"  {command:<8} {wall:8.1f} s wall {cpu:8.1f} s CPU  {mib(rss):>10}", flush=True)
            if "compare" in args.commands:
                wall, cpu, rss = measure(["verify", "B.json", *common], folder)
                verify_b[n] = cpu
                print(f"  {'verify B':<8} {wall:8.1f} s wall {cpu:8.1f} s CPU  {mib(rss):>10}", flush=True)
            stats_cpu[n] = statistics_seconds(suite, a, b)
        if "run" not in args.commands:
            results.pop("run", None)
        report(sizes, results, stats_cpu, verify_b)
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
