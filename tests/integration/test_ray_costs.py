"""What an embedded Ray instance costs the run it serves: its workers' priority.

docs/cluster.md, "What Ray costs".
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.ray


def _niceness(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    return int(fields[16])  # field 19 of proc(5), counted from the state (field 3)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process priorities from /proc")
def test_episode_workers_run_at_the_priority_of_the_command(ray_cluster, suite) -> None:  # noqa: ANN001
    """Ray starts its workers at niceness 15: on a machine where anything else ran, they got a fraction of
    the CPU that the same run in process gets, and a Ray run was slower than in process. An embedded
    instance's episode workers run at the command's own niceness."""
    from emberbench.cluster import RayExecutor

    with RayExecutor(suite, "greedy", workers=2) as ex:
        pids = ex.worker_pids()
    assert len(pids) == 2
    assert [_niceness(pid) for pid in pids] == [os.getpriority(os.PRIO_PROCESS, 0)] * 2
