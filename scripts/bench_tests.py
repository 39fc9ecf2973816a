#!/usr/bin/env python3
"""Time the test suite: the quick loop, the full suite and its 20 slowest tests, with the machine's load.

Usage, from the repository root (after ``scripts/test.sh`` has made ./.venv)::

    python3 scripts/bench_tests.py                       # this tree, as scripts/test.sh runs it
    python3 scripts/bench_tests.py --baseline OLD_TREE   # also a checkout of an older commit, run as it was

Each measurement runs ``scripts/test.sh --quick`` (``--quick-runs`` times,
once by default: wall time, and pytest's own time from its closing line),
then the full suite once (``scripts/test.sh --durations=20``: wall time,
pytest's time, and the 20 slowest tests). ``--ci`` sets ``CI=true`` for
every run, as .ci/run has it: Hypothesis at full strength, the browser and
docs tests required. The multi-host tests are left out unless ``--multihost`` is
given: they build network namespaces, and the machine allows one rig at a
time. The load average is printed before and after each run, since on a
shared machine wall times say more about the neighbours than about the suite;
the CPU time (user and system, of the run and every process it waited for:
workers, servers, Ray, children) moves much less with the load. Processes that
outlive their parent without being waited for (Ray's daemons) are not counted.

``--baseline OLD_TREE`` measures a worktree of an older commit (with its own
./.venv, made by its scripts/test.sh) the way that commit ran its tests:
plain ``pytest`` with no workers. Its "quick" run takes the tests this
tree's quick loop selects that exist there too (their node ids, collected
in both trees), so the two quick figures compare the same tests.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLOSING = re.compile(r"^=*\s*(?P<counts>\d+ \w+.*) in (?P<seconds>[\d.]+)s")
DURATIONS = re.compile(r"^=+ slowest (\d+ )?durations =+$")


def load() -> str:
    """The 1, 5 and 15 minute load averages."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def git_head(tree: Path) -> str:
    done = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True, check=False)
    dirty = subprocess.run(["git", "-C", str(tree), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True, check=False).stdout.strip()
    return done.stdout.strip() + (" (with uncommitted changes)" if dirty else "")


def run(label: str, cmd: list[str], cwd: Path, log_dir: Path, env: dict[str, str]) -> dict[str, object]:
    """Run ``cmd``, keep its output in ``log_dir``, return its times, closing line and slowest tests."""
    log = log_dir / f"{label}.log"
    print(f"\n== {label}: {' '.join(cmd)}", flush=True)
    print(f"   load average before: {load()}", flush=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    with log.open("w") as out:
        status = subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env, check=False).returncode
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = log.read_text(errors="replace").splitlines()
    closing = next((m for line in reversed(lines) if (m := CLOSING.match(line.strip("= ")))), None)
    slowest: list[str] = []
    for i, line in enumerate(lines):
        if DURATIONS.match(line):
            slowest = [entry for entry in lines[i + 1:i + 23] if re.match(r"^\d+\.\d+s ", entry)]
            break
    result = {"label": label, "status": status, "wall": wall, "cpu": cpu, "pytest": float(closing["seconds"]) if closing else None,
              "counts": closing["counts"] if closing else "(no closing line)", "slowest": slowest,
              "load_after": load(), "log": str(log)}
    print(f"   exit {status}; wall {wall:.1f} s; CPU {cpu:.1f} s; pytest {result['pytest']} s; {result['counts']}", flush=True)
    print(f"   load average after: {result['load_after']}; output in {log}", flush=True)
    return result


def node_ids(tree: Path, *select: str) -> list[str]:
    """The node ids pytest collects in ``tree`` (with its own ./.venv) under the arguments ``select``."""
    done = subprocess.run([str(tree / ".venv/bin/python"), "-m", "pytest", "-p", "no:cacheprovider", "--collect-only",
                           "-q", *select], cwd=tree, capture_output=True, text=True, check=False)
    return [line for line in done.stdout.splitlines() if "::" in line and not line.startswith(" ")]


def quick_node_ids(base: Path, log_dir: Path) -> Path:
    """The node ids of this tree's quick selection that ``base`` has too, in a pytest argument file."""
    expression = subprocess.run([str(ROOT / ".venv/bin/python"), "-c",
                                 "from tests.markers import quick_expression as q; print(q())"],
                                cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    ours = node_ids(ROOT, "-m", expression)
    theirs = set(node_ids(base))
    ids = [i for i in ours if i in theirs]
    path = log_dir / "quick-node-ids.txt"
    path.write_text("\n".join(ids) + "\n")
    print(f"   quick selection of this tree: {len(ours)} tests, {len(ids)} of them in the baseline ({path})", flush=True)
    return path


def report(results: list[dict[str, object]]) -> None:
    print("\n== summary")
    for r in results:
        print(f"{r['label']:>16}: wall {r['wall']:7.1f} s  CPU {r['cpu']:7.1f} s  pytest {r['pytest'] or float('nan'):7.1f} s  "
              f"exit {r['status']}  load after {r['load_after']}  ({r['counts']})")
    for r in results:
        if r["slowest"]:
            print(f"\n-- {r['label']}: slowest 20")
            for line in r["slowest"]:
                print("   " + line)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="a worktree of an older commit to measure as it ran")
    parser.add_argument("--skip-quick", action="store_true")
    parser.add_argument("--skip-full", action="store_true")
    parser.add_argument("--quick-runs", type=int, default=1, help="how many times to run the quick loop")
    parser.add_argument("--ci", action="store_true", help="run with CI=true, as .ci/run does")
    parser.add_argument("--multihost", action="store_true", help="include the multi-host tests (builds the rig)")
    parser.add_argument("--logs", type=Path, help="where the runs' output goes (default: a new folder under /tmp)")
    args = parser.parse_args(argv)
    log_dir = args.logs or Path(tempfile.mkdtemp(prefix="emberbench-bench-tests-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    select = [] if args.multihost else ["-m", "not multihost"]
    env = dict(os.environ)
    if args.ci:
        env["CI"] = "true"
    print(f"machine: {os.cpu_count()} CPUs, {platform.python_implementation()} {platform.python_version()}; "
          f"load average {load()}")
    print(f"this tree: {ROOT} at {git_head(ROOT)}")
    print(f"PYTHONDONTWRITEBYTECODE={env.get('PYTHONDONTWRITEBYTECODE', '')!r} CI={env.get('CI', '')!r}")
    results = []
    common = ["-q", "-p", "no:cacheprovider"]
    if args.baseline is not None:
        base = args.baseline.resolve()
        print(f"baseline: {base} at {git_head(base)}")
        python = str(base / ".venv/bin/python")
        if not args.skip_quick:
            ids = quick_node_ids(base, log_dir)
            for n in range(1, args.quick_runs + 1):
                results.append(run(f"baseline-quick-{n}", [python, "-m", "pytest", *common, "--durations=20", f"@{ids}"],
                                   base, log_dir, env))
        if not args.skip_full:
            results.append(run("baseline-full", [python, "-m", "pytest", *common, "--durations=20", *select], base,
                               log_dir, env))
    test_sh = ["bash", str(ROOT / "scripts/test.sh")]
    if not args.skip_quick:
        for n in range(1, args.quick_runs + 1):
            results.append(run(f"quick-{n}", [*test_sh, "--quick", *common, "--durations=20"], ROOT, log_dir, env))
    if not args.skip_full:
        results.append(run("full", [*test_sh, *common, "--durations=20", *select], ROOT, log_dir, env))
    report(results)
    return 0 if all(r["status"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
