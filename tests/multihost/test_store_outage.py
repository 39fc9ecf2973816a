"""The S3 host unreachable mid-run (its link down), then back.

The S3 client gives each request 5 attempts (botocore's standard retry mode)
and each attempt 60 s to connect (botocore's default): a request sent during
an outage shorter than that is not lost, its packets are sent again until
the link is back. So an outage of 12 s (more than twice the longest pause
between TCP's first retransmissions, which are 1, 2 and 4 s apart) exercises
the same path as one of 30 s, in less time: the run must ride it out. A
longer outage, or a server that refuses connections, exhausts the attempts:
the run then stops with one line naming the store and the cause (tested
without the rig in tests/unit/test_store_runner.py), and a rerun resumes.
"""

from __future__ import annotations

import time

import pytest

from .support import S3Log, client_file, finish, put_manifest, run_argv, sha256, wait_for

pytestmark = pytest.mark.multihost
PREFIX = "outage"
OUTAGE_SECONDS = 12


@pytest.mark.multihost(seconds=180)
def test_the_store_unreachable_mid_run_is_ridden_out(rig, manifest, reference):
    """S3 is cut off for 12 s while the workers write records and the driver appends to the journal;
    the run waits it out and ends with the in-process artifact."""
    put_manifest(rig, manifest)
    log = S3Log(rig)
    proc = rig.popen("client", run_argv(rig, f"/srv/{PREFIX}.json", PREFIX))
    wait_for("records in the store", lambda: len(log.objects(PREFIX)) >= 5, timeout=90, proc=proc)
    try:
        rig.set_link("s3", False)
        cut = time.monotonic()
        time.sleep(OUTAGE_SECONDS)
    finally:
        rig.set_link("s3", True)
    assert proc.poll() is None, "the run ended during the outage"
    code, out, err = finish(proc, 150)
    assert code == 0, err
    assert time.monotonic() - cut >= OUTAGE_SECONDS
    assert sha256(client_file(rig, f"/srv/{PREFIX}.json").read_bytes()) == sha256(reference)
    assert "(120 run now, 0 resumed)" in out
