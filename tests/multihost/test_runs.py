"""Runs that cross hosts on the rig: ``emberbench run`` from the client host, episodes on the worker hosts, S3 on its own.

Every host has its own files; the only shared thing is the installed Python
environment. The S3 server's request log (one line per request, with the
client's address) shows which host wrote what.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from emberbench.results.manifest import build_manifest
from emberbench.store import journal_name
from tests.rig import BUCKET, Rig

from .support import S3Log, client_file, object_key, put_manifest, run_argv, sha256

pytestmark = pytest.mark.multihost
PREFIX = "across"


@pytest.fixture(scope="module")
def across(rig: Rig, manifest):  # noqa: ANN001
    """The run every test here looks at: 120 episodes from the client, records to S3 from the workers."""
    put_manifest(rig, manifest)
    log = S3Log(rig)
    proc = rig.run("client", run_argv(rig, "/srv/g.json", PREFIX), timeout=240)
    return proc, log.requests(), log


@pytest.mark.multihost(seconds=180)
def test_run_from_the_client_plays_on_both_workers_and_matches_in_process(rig, manifest, reference, across):
    """Episodes play on both worker hosts, which write the records to S3 themselves; the artifact is
    byte-identical (SHA-256) to the in-process run's; the summary and the run-info count each node's
    episodes, and those counts are the records each host wrote."""
    proc, _, log = across
    assert proc.returncode == 0, proc.stderr
    artifact = client_file(rig, "/srv/g.json").read_bytes()
    assert sha256(artifact) == sha256(reference)

    digests = [e["record_digest"] for e in json.loads(artifact)["episodes"]]
    writers: dict[str, set[str]] = {}
    for request in log.objects(PREFIX):
        writers.setdefault(object_key(request, PREFIX), set()).add(request.client)
    names = {rig.address(h): f"{rig.config.prefix}-{h}" for h in rig.workers}
    assert all(writers.get(d) and len(writers[d]) == 1 and writers[d] <= set(names) for d in digests), \
        "each record is written once, by a worker host"
    by_host = Counter(names[next(iter(writers[d]))] for d in digests)
    assert len(by_host) == 2, f"records written per worker host: {by_host}"
    played = ", ".join(f"{name} {count} episodes" for name, count in sorted(by_host.items()))
    assert f"nodes: {played}" in proc.stdout.splitlines(), proc.stdout

    run_id = journal_name(manifest.hash, "g")[4:16]
    show = rig.run("client", ["emberbench", "runs", "show", run_id, "--store", rig.s3_locator(PREFIX)], timeout=60)
    assert show.returncode == 0, show.stderr
    assert f"nodes: {', '.join(f'{n} {c}' for n, c in sorted(by_host.items()))}" in show.stdout.splitlines()


@pytest.mark.multihost(seconds=120)
def test_verify_and_runs_verify_replay_on_the_cluster_from_the_client(rig, manifest, reference, across):
    """The result the two worker hosts produced is authenticated on the cluster from the client: ``verify``
    of the artifact, and ``runs verify`` of the run in the store, which records its verdict there."""
    assert across[0].returncode == 0
    digest = sha256(reference)
    verify = rig.run("client", ["emberbench", "verify", "/srv/g.json", "--address", rig.ray_address], timeout=120)
    assert verify.returncode == 0, verify.stderr
    assert verify.stdout.startswith("ok: /srv/g.json: model 'g'") and f"120/120 episodes authenticated" in verify.stdout
    assert f"result digest {digest}" in verify.stdout

    run_id = journal_name(manifest.hash, "g")[4:16]
    store = rig.s3_locator(PREFIX)
    checked = rig.run("client", ["emberbench", "runs", "verify", run_id, "--store", store,
                                 "--address", rig.ray_address], timeout=120)
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.startswith("ok"), checked.stdout
    show = rig.run("client", ["emberbench", "runs", "show", run_id, "--store", store], timeout=60)
    assert re.search(r"^verification: ok at \S+ by root@" + re.escape(f"{rig.config.prefix}-client"), show.stdout,
                     re.M), show.stdout
    assert f"result: {digest}" in show.stdout.splitlines()


@pytest.mark.multihost(seconds=180)
def test_a_worker_host_without_store_credentials_is_named_in_one_line(rig, suite):  # noqa: ANN001
    """A third worker host joins without S3 credentials: the run fails with one line naming that node and the cause."""
    rig.add_worker("w3", credentials=False)
    try:
        rig.wait_nodes(["head", "w1", "w2", "w3", "client"])
        path = put_manifest(rig, build_manifest(suite, [0, 1]), "/srv/m3.json")
        # One worker per CPU of the cluster, one CPU per worker host: one of them on w3.
        proc = rig.run("client", run_argv(rig, "/srv/g3.json", "nocreds", manifest=path), timeout=240)
    finally:
        rig.remove_host("w3")
    w3 = rig.address("w3")
    assert proc.returncode == 1
    assert proc.stderr == (f"error: an episode worker failed to start on node {w3} ({rig.config.prefix}-w3): "
                           f"StoreIOError: store read failed at s3://{BUCKET}/nocreds/format: no AWS credentials "
                           "found (environment, AWS_PROFILE, config files or an instance role)\n")
    assert not Path(rig.host_path("client", "/srv/g3.json")).exists()
    rig.wait_nodes(["head", "w1", "w2", "client"])
