#!/usr/bin/env python3
"""Bytes written by a 1,000-episode run: store + journal versus rewrite-after-every-episode.

One run, side by side, on the same manifest (the public suite under enough
seeds to reach ``--episodes``), with the in-process executor and ``greedy``:

* store runner: the bytes this process hands to write() (``wchar`` in
  /proc/self/io) while it runs with a fresh store: record objects, journal
  entries, the final artifact and the artifact object under its ref;
* rewrite runner (the spec's store-less runner): it writes the whole artifact
  after every episode, so its total is the sum of the artifact's size after
  each episode. That sum is computed from the same episodes' chunk sizes
  (writing several GB would only wear the disk); ``--check-rewrite N``
  measures a real rewrite run on the first N episodes to show the formula
  agrees with wchar.

Target: store-runner bytes at most 2.5 x the final artifact.

Usage: .venv/bin/python scripts/bench_run_bytes.py [--episodes 1000] [--check-rewrite 120]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from emberbench.manifest import EvaluationManifest, ManifestEntry, build_manifest  # noqa: E402
from emberbench.results import artifact_chunks  # noqa: E402
from emberbench.runner import run_evaluation  # noqa: E402
from emberbench.store_runner import open_store  # noqa: E402
from emberbench.suite import load_suite  # noqa: E402


def wchar() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise RuntimeError("no wchar in /proc/self/io")


def manifest_of(suite, episodes: int) -> EvaluationManifest:  # noqa: ANN001
    seeds = list(range(-(-episodes // len(suite.scenarios))))
    full = build_manifest(suite, seeds)
    entries = tuple(ManifestEntry(e.index, e.scenario_id, e.scenario_hash, e.seed) for e in full.episodes[:episodes])
    return EvaluationManifest(full.suite_id, full.suite_version, full.suite_hash, entries)


def rewrite_total(manifest: EvaluationManifest, model: str, artifact: bytes) -> int:
    """Sum of the artifact's size after each episode, from the final artifact's chunk sizes."""
    import json

    from emberbench.canonical import canonical_bytes
    from emberbench.results import episode_chunk

    data = json.loads(artifact)
    sizes = []
    for e in data["episodes"]:
        entry = manifest.episodes[e["index"]]
        sizes.append(len(episode_chunk(entry, canonical_bytes(e["record"]), e["record_digest"],
                                       canonical_bytes(e["metrics"]))))
    empty = sum(map(len, artifact_chunks(manifest, model, [])))
    total, running = empty, 0  # the zero-episode artifact is written first
    for k, size in enumerate(sizes, start=1):
        running += size
        total += empty + running + (k - 1)  # k - 1 commas between k chunks
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--episodes", type=int, default=1000)
    ap.add_argument("--check-rewrite", type=int, default=120, help="episodes of a real rewrite run (0: skip)")
    ap.add_argument("--dir", type=Path, default=None)
    args = ap.parse_args()
    suite = load_suite()
    manifest = manifest_of(suite, args.episodes)
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="bench-run-bytes-") as tmp:
        tmp_path = Path(tmp)
        store = open_store(tmp_path / "store")
        out = tmp_path / "store-run.json"
        w0, t0 = wchar(), time.perf_counter()
        run_evaluation(manifest, suite, "greedy", "bench", out, store=store)
        store_bytes, store_s = wchar() - w0, time.perf_counter() - t0
        artifact = out.read_bytes()
        rewrite = rewrite_total(manifest, "bench", artifact)
        print(f"{len(manifest.episodes)} episodes, final artifact {len(artifact):,} bytes")
        print(f"store runner   wrote {store_bytes:>15,} bytes = {store_bytes / len(artifact):6.2f} x artifact "
              f"({store_s:.1f} s)  target <= 2.5")
        print(f"rewrite runner writes {rewrite:>14,} bytes = {rewrite / len(artifact):6.1f} x artifact (computed)")
        print(f"ratio rewrite / store: {rewrite / store_bytes:.1f}")
        if args.check_rewrite:
            small = EvaluationManifest(manifest.suite_id, manifest.suite_version, manifest.suite_hash,
                                       manifest.episodes[: args.check_rewrite])
            out2 = tmp_path / "rewrite.json"
            w0 = wchar()
            run_evaluation(small, suite, "greedy", "bench", out2)
            measured = wchar() - w0
            predicted = rewrite_total(small, "bench", out2.read_bytes())
            print(f"check on {len(small.episodes)} episodes: rewrite runner measured {measured:,} bytes, "
                  f"formula {predicted:,} ({measured / predicted:.4f})")
        shutil.rmtree(tmp_path / "store")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
