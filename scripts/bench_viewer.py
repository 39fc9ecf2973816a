#!/usr/bin/env python
"""Measure the viewer and the report against their targets.

Usage:
    .venv/bin/python scripts/bench_viewer.py viewer [--seeds 30]
    .venv/bin/python scripts/bench_viewer.py report R1.json R2.json ... [--resamples 2000]

``viewer``: plays every baseline policy on the largest public scenario
(v1-pub-11-large-campus) for seeds 0..N-1, takes the longest episode, writes
its record, builds its viewer page (authentication and replay included) and
opens it in headless Chromium three times. Prints the page size (target: at
most 2 MB) and the time from navigation start to the first frame drawn (the
best of the loads; target: at most 1 s).

``report``: times the statistics of the given results the way ``emberbench
stats`` computes them (load and verify, then aggregate statistics), then the
report of the same results (every record replayed once, aggregate and paired
statistics, viewer pages, figures). Target: report at most 2x the statistics.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from emberbench.records.episode import play_episode  # noqa: E402
from emberbench.policies.spec import resolve_policy  # noqa: E402
from emberbench.sim.suite import load_suite  # noqa: E402

LARGEST = "v1-pub-11-large-campus"
POLICIES = ("stay", "greedy", "fire-aware", "random")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-quic", "--window-size=1280,900")


def first_frame_ms(page: Path, loads: int = 3) -> list[float]:
    """Milliseconds from navigation start to the first frame, for each of ``loads`` fresh loads."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    profile = tempfile.mkdtemp(prefix="bench-chromium-")
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        times = []
        for _ in range(loads):
            driver.get("about:blank")
            driver.get(page.as_uri())
            times.append(float(driver.execute_script("return window.emberbenchViewer.firstFrameMs")))
        return times
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def bench_viewer(seeds: int) -> None:
    """Find the longest baseline episode of the largest scenario and measure its page."""
    from emberbench.viewer import view_page

    suite = load_suite()
    sc = suite.scenario(LARGEST)
    best = None
    for policy in POLICIES:
        for seed in range(seeds):
            record, _ = play_episode(sc, seed, resolve_policy(policy)())
            if best is None or record.steps > best[0].steps:
                best = (record, policy, seed)
    record, policy, seed = best
    work = Path(tempfile.mkdtemp(prefix="bench-viewer-"))
    rec = work / "record.json"
    rec.write_bytes(record.canonical_bytes() + b"\n")
    start = time.perf_counter()
    page = view_page(rec, suite)
    build = time.perf_counter() - start
    out = work / "page.html"
    out.write_bytes(page)
    times = first_frame_ms(out)
    print(f"longest episode: {LARGEST} policy {policy} seed {seed}: {record.steps} steps, "
          f"{sc.population} people (seeds 0..{seeds - 1}, policies {', '.join(POLICIES)})")
    print(f"page: {len(page)} bytes ({len(page) / 2**20:.3f} MiB; target <= 2 MB), built in {build:.2f} s")
    print(f"first frame: {', '.join(f'{t:.0f}' for t in times)} ms from navigation start "
          f"(best {min(times):.0f} ms; target <= 1000 ms)")
    shutil.rmtree(work, ignore_errors=True)


def bench_report(results: list[Path], resamples: int) -> None:
    """Time the statistics of ``results`` and then their report."""
    from emberbench.results.artifact import load_result
    from emberbench.statistics import aggregate_statistics
    from emberbench.viewer.report import build_report

    suite = load_suite()
    start = time.perf_counter()
    for path in results:
        aggregate_statistics(load_result(path, suite), suite, resamples)
    stats = time.perf_counter() - start
    work = Path(tempfile.mkdtemp(prefix="bench-report-"))
    start = time.perf_counter()
    built = build_report(results, suite, work / "report", resamples=resamples)
    report = time.perf_counter() - start
    size = sum((built.folder / f).stat().st_size for f in built.files)
    episodes = sum(len(i.collection.values) for i in built.inputs)
    print(f"{len(results)} results, {episodes} episodes, {resamples} resamples")
    print(f"statistics (load + verify + aggregate, as `emberbench stats`): {stats:.1f} s")
    print(f"report ({len(built.files)} files, {size / 2**20:.2f} MiB): {report:.1f} s = {report / stats:.2f}x "
          "the statistics (target <= 2x)")
    shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    """Parse the command line and run one benchmark."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    v = sub.add_parser("viewer")
    v.add_argument("--seeds", type=int, default=30)
    r = sub.add_parser("report")
    r.add_argument("results", nargs="+", type=Path)
    r.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args()
    if args.what == "viewer":
        bench_viewer(args.seeds)
    else:
        bench_report(args.results, args.resamples)


if __name__ == "__main__":
    main()
