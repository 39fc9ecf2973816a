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

from emberbench.runner import run_evaluation
from emberbench.store import fsck, journal_name, open_store


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
def test_sigkill_then_resume_on_s3_is_byte_identical(tmp_path, suite, dev_manifest, reference, s3_locator):
    """A store-backed `emberbench run` on S3, SIGKILLed mid-run (its leases left behind), resumes at once to the byte-identical artifact."""
    from emberbench.manifest import write_manifest

    store = open_store(s3_locator, create=True)
    mpath = tmp_path / "m.json"
    write_manifest(dev_manifest, mpath)
    out = tmp_path / "out.json"
    cmd = [sys.executable, "-c", "from emberbench.cli.main import main; main()", "run", "--manifest", str(mpath),
           "--policy", "greedy", "--model-id", "g", "--out", str(out), "--executor", "local", "--store", s3_locator]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    name = journal_name(dev_manifest.hash, "g")
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        # The header, then the first batch of episode entries (on S3 they are written a second's worth at a time).
        if name in store.journal_names() and len(store.read_journal(name).entries) >= 2:
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.05)
    assert proc.wait(60) == -signal.SIGKILL, "the run must be interrupted"
    assert len(store.read_journal(name).entries) - 1 < len(dev_manifest.episodes)  # minus the run's header
    final = subprocess.run(cmd, capture_output=True, env=env, timeout=300)
    assert final.returncode == 0, final.stderr.decode()
    assert out.read_bytes() == reference("greedy", "g")
    assert fsck(store, verify_data=True, connectivity=True).ok
