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
  wall time, median of ``--repeat``, beside the same process answering
  ``runs ls --help`` (start-up and imports alone, nothing read); and in
  process, the library calls alone
  (index checked against the ref log, tail applied, rows selected and laid
  out), with the S3 requests counted;
* ``runs ls --scan`` (every run read, two GETs each) for sizes up to
  ``--scan-up-to``, to show what the index saves.

Usage: .venv/bin/python scripts/bench_catalog.py [--sizes 100 1000 10000] [--repeat 3] [--scan-up-to 1000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

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


def time_cli(locator: str, repeat: int, *extra: str) -> float:
    """Median wall seconds of ``python -m emberbench runs ls`` in a new process."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "emberbench", "runs", "ls", *extra]
                              + ([] if "--help" in extra else ["--store", locator]),
                              capture_output=True, text=True, timeout=3600)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise SystemExit(f"runs ls failed: {done.stderr.strip()}")
    return statistics.median(times)


def time_library(locator: str) -> tuple[float, int, int]:
    """Seconds of the listing's library calls alone, the S3 requests they made, and the rows listed."""
    from emberbench.runs.catalog import Query, format_row, select, short_id_length
    from emberbench.runs.index import query_index
    from emberbench.store import open_store

    st = open_store(locator)
    calls = [0]
    st.backend.client.meta.events.register("before-call.s3", lambda **_: calls.__setitem__(0, calls[0] + 1))
    start = time.perf_counter()
    answer = query_index(st)
    assert answer.rows is not None, answer.reason
    rows = select(answer.rows, Query())
    width = short_id_length([r.run for r in answer.rows])
    lines = [format_row(r, width) for r in rows]
    seconds = time.perf_counter() - start
    st.close()
    return seconds, calls[0], len(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scan-up-to", type=int, default=1000)
    args = parser.parse_args()
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    from tests import s3server

    server = s3server.start()
    try:
        print(f"{'runs':>6} {'fill s':>7} {'start-up s':>11} {'ls (CLI) s':>11} {'ls (library) s':>15} "
              f"{'requests':>9} {'ls --scan (CLI) s':>18}")
        for n in args.sizes:
            locator = f"s3://{s3server.BUCKET}/bench-{n}?endpoint={server.endpoint}"
            start = time.perf_counter()
            fill(locator, n)
            filled = time.perf_counter() - start
            startup = time_cli(locator, args.repeat, "--help")
            cli = time_cli(locator, args.repeat)
            lib, requests, listed = time_library(locator)
            assert listed == n, listed
            scan = f"{time_cli(locator, 1, '--scan'):18.2f}" if n <= args.scan_up_to else f"{'-':>18}"
            print(f"{n:>6} {filled:7.1f} {startup:11.2f} {cli:11.2f} {lib:15.3f} {requests:>9} {scan}", flush=True)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
