"""Runs that cross hosts on the rig: ``emberbench run`` from the client host, episodes on the worker hosts, S3 on its own.

Every host has its own files; the only shared thing is the installed Python
environment. The S3 server's request log (one line per request, with the
client's address) shows which host wrote what.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from pathlib import Path

import pytest

from emberbench.results.manifest import build_manifest, write_manifest
from emberbench.evaluation.runner import run_evaluation
from emberbench.evaluation.store_runner import open_store
from tests.rig import BUCKET, Rig

pytestmark = pytest.mark.multihost
SEEDS = [0, 1]
REQUEST = re.compile(r'^(\S+) - - \[[^]]*\] "(\w+) /' + BUCKET + r'/([^ ?]+)')


@pytest.fixture(scope="module")
def manifest(suite):
    return build_manifest(suite, SEEDS)


@pytest.fixture(scope="module")
def reference(suite, manifest, tmp_path_factory) -> bytes:
    """The artifact of the same run in this process, with a local store."""
    base = tmp_path_factory.mktemp("in-process")
    run_evaluation(manifest, suite, "greedy", "g", base / "g.json", store=open_store(base / "store"))
    return (base / "g.json").read_bytes()


def _put_on_client(rig: Rig, manifest, name: str) -> str:  # noqa: ANN001
    """Copy the manifest into the client host's working folder (as a user would); its path there."""
    write_manifest(manifest, rig.host_path("client", f"/srv/{name}"))
    return f"/srv/{name}"


def _run(rig: Rig, manifest_path: str, out: str, store: str):  # noqa: ANN202
    return rig.run("client", ["emberbench", "run", "--address", rig.ray_address, "--manifest", manifest_path,
                              "--policy", "greedy", "--model-id", "g", "--out", out, "--store", store], timeout=240)


def _writers(rig: Rig, prefix: str) -> dict[str, set[str]]:
    """Per object key under ``prefix``: the addresses that PUT it (from the S3 host's request log)."""
    writers: dict[str, set[str]] = defaultdict(set)
    for line in (rig.root / "logs" / "s3-s3.log").read_text(errors="replace").splitlines():
        match = REQUEST.match(line)
        if match and match[2] == "PUT" and match[3].startswith(f"{prefix}/objects/"):
            key = match[3].removeprefix(f"{prefix}/objects/").replace("/", "")
            writers[key].add(match[1])
    return writers


@pytest.mark.multihost(seconds=180)
def test_run_from_the_client_plays_on_both_workers_and_matches_in_process(rig, manifest, reference):
    """Episodes play on both worker hosts, which write the records to S3 themselves; the artifact is
    byte-identical (SHA-256) to the in-process run's."""
    path = _put_on_client(rig, manifest, "m.json")
    proc = _run(rig, path, "/srv/g.json", rig.s3_locator("across"))
    assert proc.returncode == 0, proc.stderr
    artifact = rig.host_path("client", "/srv/g.json").read_bytes()
    assert hashlib.sha256(artifact).hexdigest() == hashlib.sha256(reference).hexdigest()

    digests = [e["record_digest"] for e in json.loads(artifact)["episodes"]]
    writers = _writers(rig, "across")
    workers = {rig.address(h) for h in rig.workers}
    assert all(writers[d] and writers[d] <= workers for d in digests), "a record was not written by a worker host"
    by_host = {ip: sum(ip in writers[d] for d in digests) for ip in sorted(workers)}
    assert min(by_host.values()) > 0, f"records written per worker host: {by_host}"


@pytest.mark.multihost(seconds=180)
def test_a_worker_host_without_store_credentials_is_named_in_one_line(rig, manifest):
    """A third worker host joins without S3 credentials: the run fails with one line naming that node and the cause."""
    rig.add_worker("w3", credentials=False)
    try:
        rig.wait_nodes(["head", "w1", "w2", "w3", "client"])
        path = _put_on_client(rig, manifest, "m3.json")
        # One worker per CPU of the cluster, one CPU per worker host: one of them on w3.
        proc = _run(rig, path, "/srv/g3.json", rig.s3_locator("nocreds"))
    finally:
        rig.remove_host("w3")
    w3 = rig.address("w3")
    assert proc.returncode == 1
    assert proc.stderr == (f"error: an episode worker failed to start on node {w3} ({rig.config.prefix}-w3): "
                           f"StoreIOError: store read failed at s3://{BUCKET}/nocreds/format: no AWS credentials "
                           "found (environment, AWS_PROFILE, config files or an instance role)\n")
    assert not Path(rig.host_path("client", "/srv/g3.json")).exists()
    rig.wait_nodes(["head", "w1", "w2", "client"])
