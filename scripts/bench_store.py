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

With ``--s3`` it measures the S3 backend instead, against a loopback S3
server it starts (moto's, from the test extra) or the store ``--s3-locator``
names:

* put and get of 4 MiB objects through the store, as a ratio to boto3's own
  put_object / get_object of the same bytes (target >= 0.8), with one
  request in flight (object by object, the two sides alternating) and with
  four (both sides on four threads, as a run puts its records);
* a ``--run-episodes`` (1,000) greedy run with the in-process executor into
  an S3 store, as a ratio to the same run into a local store (target <= 1.3).

Usage: .venv/bin/python scripts/bench_store.py [--records 300] [--dir PATH]
       .venv/bin/python scripts/bench_store.py --s3 [--objects 24] [--repeat 3] [--in-flight 1 4]
                                               [--run-episodes 1000]
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
    stored = sum(st.backend.object_info(k).size for k in keys)
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


def _side_by_side(count: int, repeat: int, in_flight: int, raw: Callable[[int, int], object],
                  store: Callable[[int, int], object],
                  prepare: Callable[[int], object] = lambda rnd: None) -> tuple[float, float]:
    """Seconds spent by ``raw(round, i)`` and by ``store(round, i)`` over every object of every round.

    ``prepare(round)`` runs untimed before each round. One in flight: each
    object is done by both sides one right after the other, the first side
    alternating, so both see the same machine. More in flight: each side does
    a round's objects on ``in_flight`` threads, the first side alternating
    between rounds.
    """
    from concurrent.futures import ThreadPoolExecutor

    spent = {"raw": 0.0, "store": 0.0}
    sides = {"raw": raw, "store": store}
    with ThreadPoolExecutor(max_workers=in_flight) as pool:
        for rnd in range(repeat):
            prepare(rnd)
            if in_flight == 1:
                for i in range(count):
                    for name in (("raw", "store") if (rnd + i) % 2 == 0 else ("store", "raw")):
                        start = time.perf_counter()
                        sides[name](rnd, i)
                        spent[name] += time.perf_counter() - start
            else:
                for name in (("raw", "store") if rnd % 2 == 0 else ("store", "raw")):
                    start = time.perf_counter()
                    list(pool.map(lambda i, fn=sides[name]: fn(rnd, i), range(count)))
                    spent[name] += time.perf_counter() - start
    return spent["raw"], spent["store"]


def bench_s3_objects(locator: str, count: int, repeat: int, in_flight: int) -> dict[str, float]:
    """Store put/get of 4 MiB objects against boto3's raw put/get of the same bytes (MB/s).

    Every put is of a fresh object (a store put of an object already there
    is cheaper: the server refuses it before the body is sent). A round's
    fresh bytes are made before the round, so neither side is timed making
    them. Both sides keep ``in_flight`` requests going.
    """
    import os

    from emberbench.store import open_store

    st = open_store(locator, create=True)
    client, bucket, prefix = st.backend.client, st.backend.bucket, st.backend.prefix
    blobs = [os.urandom(4 << 20) for _ in range(count)]
    fresh: list[bytes] = []

    def prepare(rnd: int) -> None:
        salt = (in_flight * 1_000_000 + rnd).to_bytes(8, "big")
        fresh[:] = [salt + blob[8:] for blob in blobs]

    keys = [st.put(blob) for blob in blobs]
    raw_keys = [f"{prefix}raw/get/{i}" for i in range(count)]
    for raw_key, blob in zip(raw_keys, blobs):
        client.put_object(Bucket=bucket, Key=raw_key, Body=blob)
    mb = count * repeat * 4 * 1.048576
    put_raw, put_store = _side_by_side(
        count, repeat, in_flight,
        lambda rnd, i: client.put_object(Bucket=bucket, Key=f"{prefix}raw/{in_flight}/{rnd}/{i}", Body=fresh[i]),
        lambda rnd, i: st.put(fresh[i]), prepare)
    get_raw, get_store = _side_by_side(
        count, repeat, in_flight,
        lambda rnd, i: client.get_object(Bucket=bucket, Key=raw_keys[i])["Body"].read(),
        lambda rnd, i: st.get(keys[i]))
    st.close()
    return {"raw put": mb / put_raw, "store put": mb / put_store, "raw get": mb / get_raw,
            "store get": mb / get_store}


def bench_s3_run(locator: str, episodes: int, folder: Path) -> dict[str, float]:
    """Seconds of one greedy run into a local store and into the S3 store (same manifest)."""
    from scripts.bench_run_bytes import manifest_of

    from emberbench.evaluation.runner import run_evaluation
    from emberbench.evaluation.store_runner import open_store
    from emberbench.sim.suite import load_suite

    suite = load_suite()
    manifest = manifest_of(suite, episodes)
    seconds = {}
    outputs = {}
    for name, where in (("local", str(folder / "run-store")), ("s3", locator.replace("?", "/run?", 1))):
        out = folder / f"run-{name}.json"
        start = time.perf_counter()
        store = open_store(where)
        run_evaluation(manifest, suite, "greedy", "bench", out, store=store)
        seconds[name] = time.perf_counter() - start
        outputs[name] = out.read_bytes()
        if hasattr(store, "close"):
            store.close()
    if outputs["local"] != outputs["s3"]:
        raise SystemExit("error: the S3 run's artifact differs from the local run's")
    return seconds


def main_s3(args: argparse.Namespace) -> int:
    server = None
    locator = args.s3_locator
    if locator is None:
        import os

        from tests import s3server

        # The loopback server takes any credentials: never send real ones to it.
        os.environ.update({"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
                           "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"})
        os.environ.pop("AWS_SESSION_TOKEN", None)
        os.environ.pop("AWS_PROFILE", None)
        server = s3server.start()
        locator = f"s3://{s3server.BUCKET}/bench?endpoint={server.endpoint}"
    try:
        rates = {n: bench_s3_objects(locator.replace("?", f"/objects-{n}?", 1), args.objects, args.repeat, n)
                 for n in args.in_flight}
        with tempfile.TemporaryDirectory(dir=args.dir, prefix="bench-store-") as tmp:
            run = bench_s3_run(locator, args.run_episodes, Path(tmp)) if args.run_episodes else {}
    finally:
        if server is not None:
            server.stop()
    ratios = {n: {"put": r["store put"] / r["raw put"], "get": r["store get"] / r["raw get"]}
              for n, r in rates.items()}
    summary = {"objects_mb_s": {str(n): r for n, r in rates.items()},
               "ratios": {str(n): r for n, r in ratios.items()}, "run_seconds": run}
    if run:
        summary["run_ratio"] = run["s3"] / run["local"]
    if args.json:
        print(json.dumps(summary, indent=2, sort_keys=True))
        return 0
    print(f"4 MiB objects, {args.objects} x {args.repeat} rounds, store / raw boto3 (target >= 0.8 each):")
    for n, r in rates.items():
        print(f"  {n} in flight: put {r['store put']:.0f} / {r['raw put']:.0f} MB/s = {ratios[n]['put']:.2f}; "
              f"get {r['store get']:.0f} / {r['raw get']:.0f} MB/s = {ratios[n]['get']:.2f}")
    if run:
        print(f"{args.run_episodes}-episode greedy run: local store {run['local']:.1f} s, S3 store {run['s3']:.1f} s "
              f"(ratio {summary['run_ratio']:.2f}, target <= 1.3); artifacts identical")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--s3", action="store_true", help="measure the S3 backend (see the module docstring)")
    parser.add_argument("--s3-locator", default=None, help="an existing s3:// store prefix to use instead of moto")
    parser.add_argument("--objects", type=int, default=24, help="--s3: 4 MiB objects per round")
    parser.add_argument("--in-flight", type=int, nargs="+", default=[1, 4],
                        help="--s3: requests in flight on both sides (1: one after the other; 4: as a run puts records)")
    parser.add_argument("--run-episodes", type=int, default=1000, help="--s3: episodes of the timed run (0: skip)")
    parser.add_argument("--records", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None, help="where to put the scratch stores")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    if args.s3:
        return main_s3(args)
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
