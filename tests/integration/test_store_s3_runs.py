"""Runs writing to an S3 store: Ray workers on any node, crash and resume, the same bytes as a local store.

The S3 server is the session's loopback test server (tests/s3server.py).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from emberbench.evaluation import record_puts
from emberbench.evaluation.runner import run_evaluation
from emberbench.store import fsck, journal_name, open_store


def _helpers_of(locator: str) -> list[int]:
    """Pids of record-put helpers serving ``locator`` (zombies excluded)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(") ", 1)[-1][:1]
        except OSError:
            continue
        if b"emberbench.evaluation.record_puts" in cmdline and locator.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


@pytest.mark.ray
def test_two_ray_workers_writing_to_s3_match_the_local_run(ray_cluster, suite, dev_manifest, reference, tmp_path,
                                                            s3_locator):
    """2 Ray workers reopen the store from its s3:// locator, write records straight to the bucket, same artifact."""
    from emberbench.cluster import RayExecutor

    store = open_store(s3_locator, create=True)
    out = tmp_path / "r.json"
    with RayExecutor(suite, "greedy", workers=2, store_root=store.locator) as ex:
        run_evaluation(dev_manifest, suite, "greedy", "g", out, executor=ex, store=store)
    assert out.read_bytes() == reference("greedy", "g")
    assert sum(ex.stats.episodes_by_node.values()) == len(dev_manifest.episodes)
    state = store.read_journal(journal_name(dev_manifest.hash, "g"))
    episodes = [e for e in state.entries if "index" in e.data]  # the first entry is the run's header
    assert state.finished and len(episodes) == len(dev_manifest.episodes)
    assert fsck(store, verify_data=True, connectivity=True).ok
    store.close()
    b = store.backend  # issue 14: the workers' writer leases went with the run, not 5 minutes later
    leases = b.client.list_objects_v2(Bucket=b.bucket, Prefix=f"{b.prefix}leases/").get("Contents", [])
    assert [item["Key"] for item in leases] == []


@pytest.mark.slow
def test_sigkill_then_resume_on_s3_is_byte_identical(tmp_path, suite, s3_locator):  # noqa: ANN001
    """A store-backed `emberbench run` on S3, SIGKILLed mid-run (its leases left behind), resumes at once to the byte-identical artifact.

    240 episodes: long enough that the first journal batch (a second's worth
    of episodes on S3) is written well before the end, and enough for the run
    to put its records through the helper process, which must end with it.
    """
    from emberbench.results.manifest import build_manifest, write_manifest

    manifest = build_manifest(suite, list(range(20)))
    assert len(manifest.episodes) >= record_puts.HELPER_FROM
    run_evaluation(manifest, suite, "greedy", "g", tmp_path / "reference.json")
    store = open_store(s3_locator, create=True)
    mpath = tmp_path / "m.json"
    write_manifest(manifest, mpath)
    out = tmp_path / "out.json"
    cmd = [sys.executable, "-c", "from emberbench.cli.main import main; main()", "run", "--manifest", str(mpath),
           "--policy", "greedy", "--model-id", "g", "--out", str(out), "--executor", "local", "--store", s3_locator]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    name = journal_name(manifest.hash, "g")
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        # The header, then the first batch of episode entries (on S3 they are written a second's worth at a time).
        if name in store.journal_names() and len(store.read_journal(name).entries) >= 2:
            helpers = _helpers_of(s3_locator)
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.05)
    assert proc.wait(60) == -signal.SIGKILL, "the run must be interrupted"
    assert len(store.read_journal(name).entries) - 1 < len(manifest.episodes)  # minus the run's header
    assert len(helpers) == 1, "the run put its records through the helper"
    deadline = time.monotonic() + 15
    while _helpers_of(s3_locator) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _helpers_of(s3_locator) == [], "the record-put helper outlived its killed run"
    final = subprocess.run(cmd, capture_output=True, env=env, timeout=300)
    assert final.returncode == 0, final.stderr.decode()
    assert out.read_bytes() == (tmp_path / "reference.json").read_bytes()
    assert fsck(store, verify_data=True, connectivity=True).ok
