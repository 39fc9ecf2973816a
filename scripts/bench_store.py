#!/usr/bin/env python3
"""Throughput of the content-addressed store against plain SHA-256 hashing.

Measures, for each codec (none, zlib level 1), on synthetic JSON records of
10-200 KB shaped like run records (an action log plus per-step numbers):

* ``sha256``: hashlib.sha256 of the same bytes, the reference speed;
* ``put``: fresh objects, including every fsync (temp file and folder);
* ``re-put``: putting objects that already exist (verify + mtime refresh);
* ``get``: read + frame + blake3 checksum (+ decompression), every read;
* ``get --verify-data``: the same plus re-hashing the content with SHA-256;
* ``get, all kept``: get with every result kept alive in a list. Slower only
  because each new buffer is fresh memory the kernel must fault in (glibc
  serves blocks above 128 KB with mmap); streaming use reuses memory.

Speeds are MB/s of raw (uncompressed) bytes, best of ``--repeat`` passes for
the read-only measurements. The target is get >= 0.5 x sha256.

Usage: .venv/bin/python scripts/bench_store.py [--records 300] [--dir PATH]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from emberbench.store import Codec, Store  # noqa: E402


def make_records(count: int, seed: int) -> list[bytes]:
    """Canonical-JSON-like records between ~10 and ~200 KB."""
    rng = random.Random(seed)
    records = []
    for n in range(count):
        steps = []
        target = rng.randrange(10_000, 200_000)
        size = 0
        step = 0
        while size < target:
            item = {
                "step": step,
                "actions": [
                    {"agent": rng.randrange(64), "move": rng.choice("NESWX"), "exit": rng.randrange(4)}
                    for _ in range(rng.randrange(1, 5))
                ],
                "alive": rng.randrange(200),
                "fire_cells": rng.randrange(1000),
                "smoke": round(rng.random(), 6),
            }
            steps.append(item)
            size += 40 + 45 * len(item["actions"])
            step += 1
        doc = {"record_version": "1.0", "episode": n, "seed": rng.getrandbits(63), "steps": steps}
        records.append(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode())
    return records


def timed(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _stream(st: Store, keys: list[str], verify_data: bool) -> int:
    # Like assembling an artifact: each object is read, used, and dropped.
    total = 0
    for key in keys:
        total += len(st.get(key, verify_data=verify_data))
    return total


def bench(records: list[bytes], codec: Codec, folder: Path, repeat: int) -> dict[str, float]:
    total = sum(map(len, records))
    root = folder / f"store-{codec.name.lower()}"
    shutil.rmtree(root, ignore_errors=True)
    st = Store.open(root, create=True, codec=codec)
    start = time.perf_counter()
    keys = [st.put(r) for r in records]
    put_s = time.perf_counter() - start
    reput_s = timed(lambda: [st.put(r) for r in records], 1)
    get_s = timed(lambda: _stream(st, keys, False), repeat)
    verify_s = timed(lambda: _stream(st, keys, True), repeat)
    kept_s = timed(lambda: [st.get(k) for k in keys], repeat)
    stored = sum(st.layout.object_path(k).stat().st_size for k in keys)
    shutil.rmtree(root, ignore_errors=True)
    mb = total / 1e6
    return {
        "put": mb / put_s,
        "re-put": mb / reput_s,
        "get": mb / get_s,
        "get --verify-data": mb / verify_s,
        "get, all kept": mb / kept_s,
        "stored/raw": stored / total,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None, help="where to put the scratch stores")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    records = make_records(args.records, args.seed)
    total = sum(map(len, records))
    sha = (total / 1e6) / timed(lambda: [hashlib.sha256(r).digest() for r in records], args.repeat)
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="bench-store-") as tmp:
        results = {codec.name.lower(): bench(records, codec, Path(tmp), args.repeat) for codec in Codec}
    summary = {
        "records": len(records),
        "raw_mb": total / 1e6,
        "mean_kb": total / len(records) / 1e3,
        "sha256_mb_s": sha,
        "codecs": results,
    }
    if args.json:
        print(json.dumps(summary, indent=2, sort_keys=True))
        return 0
    print(f"{len(records)} records, {total / 1e6:.1f} MB raw, mean {total / len(records) / 1e3:.0f} KB")
    print(f"sha256 alone: {sha:8.0f} MB/s")
    for name, row in results.items():
        verdict = "meets" if row["get"] >= 0.5 * sha else "MISSES"
        print(
            f"codec {name:5s} put {row['put']:6.0f}  re-put {row['re-put']:6.0f}  get {row['get']:6.0f}"
            f"  get+verify {row['get --verify-data']:6.0f}  get(kept) {row['get, all kept']:6.0f} MB/s  stored/raw {row['stored/raw']:.3f}"
            f"  get/sha256 {row['get'] / sha:.2f} ({verdict} the 0.5 target)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
