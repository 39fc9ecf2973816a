"""Losing the head mid-run: the driver on the client dies with it; once the cluster is started again, the same
command resumes from the run's journal in S3, replays nothing the journal holds, and ends byte-identical."""

from __future__ import annotations

import json

import pytest

from emberbench.store import journal_name

from .support import S3Log, client_file, finish, object_key, put_manifest, run_argv, sha256, wait_for

pytestmark = pytest.mark.multihost
PREFIX = "headloss"
_JOURNALED = """
import json, sys
from emberbench.evaluation.store_runner import open_store
state = open_store(sys.argv[1]).read_journal(sys.argv[2])
print(json.dumps([e.data["digest"] for e in state.entries if "digest" in e.data]))
"""


@pytest.mark.multihost(seconds=240)
def test_the_head_stopped_mid_run_then_the_same_command_resumes_from_the_journal(rig, manifest, reference):
    """The head host shuts down once the journal holds episodes; the driver dies (Ray gives up on the head
    after 3 s on the rig). After a restart of the cluster the same command resumes: every journaled record
    is read back and replayed, none is played or written again, and the artifact is the in-process one."""
    put_manifest(rig, manifest)
    # One worker: about 8 s of play, so the driver dies long before the end.
    argv = run_argv(rig, f"/srv/{PREFIX}.json", PREFIX, "--workers", "1")
    log = S3Log(rig)
    proc = rig.popen("client", argv)
    # Segment 0 is the journal's file header, 1 the run header, 2 the first batch of episodes.
    wait_for("a journaled episode", lambda: len(log.journal_segments(PREFIX)) >= 3, timeout=90, proc=proc)
    rig.stop_host("head")
    code, _, err = finish(proc, 90)
    assert code != 0, "the driver outlived the head"

    rig.restart_ray()
    store = rig.s3_locator(PREFIX)
    name = journal_name(manifest.hash, "g")
    read = rig.run("client", ["python", "-c", _JOURNALED, store, name], timeout=60)
    assert read.returncode == 0, read.stderr
    journaled = set(json.loads(read.stdout))
    held = len(journaled)
    assert 0 < held < 120, f"the journal holds {held} episodes: the head was not lost mid-run"

    rerun = S3Log(rig)
    again = rig.run("client", argv, timeout=150)
    assert again.returncode == 0, again.stderr
    assert f"120/120 episodes ({120 - held} run now, {held} resumed: {held} from the store's run journal" \
        in again.stdout, again.stdout
    assert sha256(client_file(rig, f"/srv/{PREFIX}.json").read_bytes()) == sha256(reference)
    written = {object_key(r, PREFIX) for r in rerun.objects(PREFIX)}
    assert not written & journaled, "a journaled episode was played and stored again"
    read_back = {object_key(r, PREFIX) for r in rerun.objects(PREFIX, "GET")}
    assert journaled <= read_back, "a journaled record was not read back to be authenticated"
