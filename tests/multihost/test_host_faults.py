"""Losing a worker host mid-run: its processes killed, or its network link down for longer than Ray's health check.

Each test starts the run from the client host, waits until the second worker
host has written records to S3 (so the fault lands mid-run, with episodes of
that host in flight), injects the fault, and checks that the run finishes on
the remaining worker host with the in-process artifact, byte for byte. The
lost host is then brought back, so the next test finds the whole rig.
"""

from __future__ import annotations

import time

import pytest

from tests.rig import Rig

from .support import S3Log, client_file, finish, put_manifest, run_argv, sha256, wait_for

pytestmark = pytest.mark.multihost
HEALTH_CHECK_SECONDS = 5
"""The rig's head declares a silent node dead after about this long (tests/rig/services.py)."""


def _start_and_wait_for_w2(rig: Rig, manifest, prefix: str):  # noqa: ANN001, ANN202
    put_manifest(rig, manifest)
    log = S3Log(rig)
    proc = rig.popen("client", run_argv(rig, f"/srv/{prefix}.json", prefix))
    w2 = rig.address("w2")
    wait_for("records from w2", lambda: sum(r.client == w2 for r in log.objects(prefix)) >= 3, timeout=90, proc=proc)
    return proc


def _bring_back_w2(rig: Rig) -> None:
    rig.kill_host("w2")  # whatever is left of it (after a link fault, its raylet has given up)
    rig.start_nodes(["w2"])
    rig.wait_nodes(["head", "w1", "w2", "client"])


@pytest.mark.multihost(seconds=150)
def test_a_worker_host_killed_mid_run(rig, manifest, reference):
    """SIGKILL to every process of w2 while it plays: the episodes it had in flight are played again on w1,
    and the run ends with the in-process artifact."""
    proc = _start_and_wait_for_w2(rig, manifest, "hostkill")
    try:
        rig.kill_host("w2")
        code, out, err = finish(proc, 120)
    finally:
        _bring_back_w2(rig)
    assert code == 0, err
    assert sha256(client_file(rig, "/srv/hostkill.json").read_bytes()) == sha256(reference)
    assert "(120 run now, 0 resumed)" in out


@pytest.mark.multihost(seconds=150)
def test_a_worker_host_cut_off_longer_than_the_health_check(rig, manifest, reference):
    """w2's link goes down for twice the health-check timeout, then up again: the head declares it dead,
    its episodes in flight are played again on w1, and the artifact is the in-process one."""
    proc = _start_and_wait_for_w2(rig, manifest, "hostlink")
    try:
        rig.set_link("w2", False)
        time.sleep(2 * HEALTH_CHECK_SECONDS)
        rig.set_link("w2", True)
        code, out, err = finish(proc, 120)
    finally:
        rig.set_link("w2", True)
        _bring_back_w2(rig)
    assert code == 0, err
    assert sha256(client_file(rig, "/srv/hostlink.json").read_bytes()) == sha256(reference)
    assert "(120 run now, 0 resumed)" in out
