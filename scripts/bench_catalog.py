#!/usr/bin/env python3
"""Measure `emberbench runs ls` at 10^2, 10^3 and 10^4 runs on the loopback S3 test server.

For each size a fresh store prefix is filled fast with synthetic runs: each
run-info object is put through the store (in parallel), its ``runs/`` ref is
written straight to the bucket (no ref log entry, which is what makes the
filling fast), and the catalog index is built from the known run-infos and
saved as ``runs reindex`` would. A few ordinary updates then go through the
store (logged), so the listing also applies a ref log tail, as it does on a
store in use. Then:

* ``runs ls`` as a user runs it: a new process (``python -m emberbench``),
  wall and CPU time, median of ``--repeat``, beside the same process
  answering ``runs ls --help`` (start-up and imports alone, nothing read);
  and, in a new process too, the library calls alone (index checked against
  the ref log, tail applied, rows selected and laid out), with the S3
  requests counted;
* with ``--before TREE``, the same for the code of another checkout (its
  ``.venv/bin/python``, run in TREE, which is only read), round by round
  beside this one on the same stores, so that a change of the machine's load
  hits both alike;
* ``runs ls --scan`` (every run read, a ref and a run-info each) for sizes
  up to ``--scan-up-to``, to show what the index saves.

The load average is printed at the start and the end: the figures mean
little without it on a shared machine.

Usage: .venv/bin/python scripts/bench_catalog.py [--sizes 100 1000 10000] [--repeat 3] [--scan-up-to 1000]
       [--before TREE]

Last run (``--sizes 100 1000 10000 --repeat 3 --scan-up-to 0 --before`` a
checkout of 51fac64; load average 1.1 at the start, 2.4 at the end)::

      runs   code  fill s  start-up s  ls (CLI) s  CPU s  ls (library) s  requests  ls --scan (CLI) s
       100 before     2.3        0.79        1.68   1.71           0.232        35                  -
       100   this                0.25        0.76   0.69           0.154        24                  -
      1000 before    13.3        0.77        1.60   1.64           0.225        35                  -
      1000   this                0.37        1.09   1.02           0.199        24                  -
     10000 before   125.5        0.71        1.89   1.88           0.608        35                  -
     10000   this                0.27        1.12   1.01           0.419        24                  -

docs/store.md (the catalog index) says where the time goes.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TAIL_UPDATES = 10


def synthetic_info(i: int):  # noqa: ANN201
    """Run-info number ``i``: 37 models, two policies, four users, tags, states and dates spread."""
    from emberbench.evaluation.run_info import RunInfo
    from emberbench.store import journal_name

    model = f"model-{i % 37:02d}-{i}"
    return RunInfo(run=journal_name("ab" * 32, model), model_id=model, policy=("greedy", "fire-aware")[i % 2],
                   manifest_hash="ab" * 32, suite_id="emberbench-v1-public", suite_version="1.0.0",
                   suite_hash="cd" * 32, emberbench_version="0.2.0", python_version="3.11.7", ray_version="2.40.0",
                   host=f"node-{i % 9}", user=f"user{i % 4}", started=f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T12:00:00Z",
                   ended=f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T13:00:00Z", episodes_done=240,
                   episodes_scheduled=240, state="complete", result="ef" * 32, tags=(f"batch-{i % 10}",))


def fill(locator: str, n: int) -> None:
    """A store with ``n`` synthetic runs, a catalog index over them, and a short ref log tail."""
    from emberbench.evaluation.run_info import run_info_ref, write_run_info
    from emberbench.runs.catalog import CatalogRow
    from emberbench.runs.index import CatalogIndex, IndexedRun, save_index
    from emberbench.store import open_store

    st = open_store(locator, create=True)
    client, bucket, prefix = st.backend.client, st.backend.bucket, st.backend.prefix
    infos = [synthetic_info(i) for i in range(n)]

    def one(info):  # noqa: ANN001, ANN202
        key = st.put(info.to_bytes())
        client.put_object(Bucket=bucket, Key=f"{prefix}refs/{run_info_ref(info.run)}", Body=(key + "\n").encode())
        return info.run, IndexedRun(key, CatalogRow(info.run, info, None))

    with ThreadPoolExecutor(16) as pool:
        runs = dict(pool.map(one, infos))
    save_index(st, None, CatalogIndex(-1, None, runs))
    for info in infos[:TAIL_UPDATES]:
        write_run_info(st, info.replace(episodes_done=info.episodes_done - 1))
    st.close()


@dataclass(frozen=True)
class Code:
    """The EMBERBench whose `runs ls` is timed: its Python (with EMBERBench installed) and its source tree."""

    label: str
    python: str
    tree: Path

    def env(self) -> dict[str, str]:
        # Another tree is only read: no bytecode is written into it.
        return dict(os.environ, PYTHONDONTWRITEBYTECODE="1") if self.tree != ROOT else dict(os.environ)


def cli_once(code: Code, locator: str, *extra: str) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one ``python -m emberbench runs ls`` in a new process."""
    command = [code.python, "-m", "emberbench", "runs", "ls", *extra] + ([] if "--help" in extra else
                                                                          ["--store", locator])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=code.tree, env=code.env(), capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"runs ls ({code.label}) failed: {done.stderr.strip()}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


LIBRARY = """
import sys, time
from emberbench.runs.catalog import Query, format_row, select, short_id_length
from emberbench.runs.index import query_index
from emberbench.store import open_store

st = open_store(sys.argv[1])
calls = [0]
st.backend.client.meta.events.register("before-call.s3", lambda **_: calls.__setitem__(0, calls[0] + 1))
start = time.perf_counter()
answer = query_index(st)
assert answer.rows is not None, answer.reason
rows = select(answer.rows, Query())
width = short_id_length([r.run for r in answer.rows])
lines = [format_row(r, width) for r in rows]
print(time.perf_counter() - start, calls[0], len(lines))
"""
"""The listing's library calls alone (index checked against the ref log, tail applied, rows selected and laid
out), timed in a new process of the code measured; prints seconds, S3 requests and rows listed."""


def library_once(code: Code, locator: str) -> tuple[float, int, int]:
    done = subprocess.run([code.python, "-c", LIBRARY, locator], cwd=code.tree, env=code.env(),
                          capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"the library calls ({code.label}) failed: {done.stderr.strip()}")
    seconds, requests, rows = done.stdout.split()
    return float(seconds), int(requests), int(rows)


def measure(codes: list[Code], locator: str, repeat: int) -> dict[str, dict[str, float]]:
    """Medians of ``repeat`` rounds, each timing every code in turn (so that a change of load hits all alike)."""
    samples: dict[str, dict[str, list[float]]] = {c.label: {} for c in codes}
    for _ in range(repeat):
        for code in codes:
            got = samples[code.label]
            got.setdefault("startup", []).append(cli_once(code, locator, "--help")[0])
            wall, cpu = cli_once(code, locator)
            got.setdefault("cli", []).append(wall)
            got.setdefault("cpu", []).append(cpu)
            seconds, requests, rows = library_once(code, locator)
            got.setdefault("library", []).append(seconds)
            got.setdefault("requests", []).append(requests)
            got.setdefault("rows", []).append(rows)
    return {label: {k: statistics.median(v) for k, v in got.items()} for label, got in samples.items()}


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scan-up-to", type=int, default=1000)
    parser.add_argument("--before", type=Path, metavar="TREE",
                        help="Also time the code of another checkout (its .venv/bin/python, run in TREE) on the "
                             "same stores, round by round beside this one; TREE is only read.")
    args = parser.parse_args()
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    codes = [Code("this", sys.executable, ROOT)]
    if args.before is not None:
        tree = args.before.resolve()
        codes.insert(0, Code("before", str(tree / ".venv" / "bin" / "python"), tree))
    from tests import s3server

    server = s3server.start()
    print(f"load average (1/5/15 min) at the start: {load()}")
    try:
        print(f"{'runs':>6} {'code':>6} {'fill s':>7} {'start-up s':>11} {'ls (CLI) s':>11} {'CPU s':>6} "
              f"{'ls (library) s':>15} {'requests':>9} {'ls --scan (CLI) s':>18}")
        for n in args.sizes:
            locator = f"s3://{s3server.BUCKET}/bench-{n}?endpoint={server.endpoint}"
            start = time.perf_counter()
            fill(locator, n)
            filled = f"{time.perf_counter() - start:7.1f}"
            for row, (code, got) in enumerate(measure(codes, locator, args.repeat).items()):
                assert got["rows"] == n, got
                scan = (f"{cli_once(codes[-1], locator, '--scan')[0]:18.2f}" if code == "this"
                        and n <= args.scan_up_to else f"{'-':>18}")
                print(f"{n:>6} {code:>6} {filled if row == 0 else '':>7} {got['startup']:11.2f} {got['cli']:11.2f} "
                      f"{got['cpu']:6.2f} {got['library']:15.3f} {got['requests']:>9.0f} {scan}", flush=True)
    finally:
        server.stop()
    print(f"load average (1/5/15 min) at the end: {load()}")


if __name__ == "__main__":
    main()
