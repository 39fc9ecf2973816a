"""A real two-node Ray cluster on this machine: episodes on both nodes, then a node lost mid-run.

The cluster and its driver run in a subprocess (tests/integration/multinode_driver.py),
because this process's Ray connection belongs to the shared session fixture.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .conftest import ROOT, subprocess_env

pytestmark = [pytest.mark.ray, pytest.mark.slow]


def test_two_nodes_then_one_removed_mid_run(ray_token, reference, tmp_path):
    """Both nodes play episodes; removing one mid-run loses calls but not a byte of the artifact."""
    proc = subprocess.run([sys.executable, "-m", "tests.integration.multinode_driver", str(tmp_path)],
                          cwd=ROOT, env=subprocess_env(), capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["nodes"] == 2
    assert len(summary["a_by_node"]) == 2 and min(summary["a_by_node"]) > 0  # episodes landed on both nodes
    assert summary["removed"] and summary["b_failed_calls"] >= 1  # the removal hit work in flight
    assert (tmp_path / "a.json").read_bytes() == reference("greedy", "g")
    assert (tmp_path / "b.json").read_bytes() == reference("fire-aware", "f")
