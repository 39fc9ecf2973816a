"""``emberbench submit`` from the client host: a command sent as a Ray Job to the head's job server.

The job runs on the head host (its driver there, its episodes on the worker
hosts), with the project uploaded as its working folder; paths in its
arguments are the head's. The head has no S3 credentials, so the job runs
without a store.
"""

from __future__ import annotations

import re

import pytest

from .support import put_manifest, sha256

pytestmark = pytest.mark.multihost


@pytest.mark.multihost(seconds=150)
def test_submit_runs_a_command_as_a_ray_job_and_reports_its_exit_status(rig, manifest, reference):
    """A run submitted from the client plays on the workers and writes the in-process artifact on the head;
    a job that fails makes submit exit 1 naming its status."""
    put_manifest(rig, manifest, "/srv/m120.json")
    manifest_on_head = rig.host_path("head", "/srv/m120.json")
    manifest_on_head.write_bytes(rig.host_path("client", "/srv/m120.json").read_bytes())
    submit = ["emberbench", "submit", "--address", rig.job_server, "--follow", "--"]
    ok = rig.run("client", [*submit, "run", "--manifest", "/srv/m120.json", "--policy", "greedy", "--model-id", "g",
                            "--out", "/srv/job.json", "--no-store"], timeout=120)
    assert ok.returncode == 0, ok.stderr
    job = re.match(r"submitted job (raysubmit_\w+)\n", ok.stdout)
    assert job, ok.stdout
    assert "120/120 episodes (120 run now, 0 resumed)" in ok.stdout and "executor: Ray ($RAY_ADDRESS" in ok.stdout
    assert ok.stdout.rstrip().endswith(f"job {job[1]} SUCCEEDED")
    assert sha256(rig.host_path("head", "/srv/job.json").read_bytes()) == sha256(reference)

    failed = rig.run("client", [*submit, "verify", "/srv/no-such-result.json"], timeout=120)
    assert failed.returncode == 1
    job = re.match(r"submitted job (raysubmit_\w+)\n", failed.stdout)
    assert job and failed.stdout.rstrip().endswith(f"job {job[1]} FAILED"), failed.stdout
    assert failed.stderr == f"error: job {job[1]} ended with status FAILED\n"
