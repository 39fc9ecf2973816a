"""Streaming on Ray: each record replayed once by the workers (none on the driver), audit verdicts as in process."""

from __future__ import annotations

import hashlib
import json
from collections import Counter

import pytest
from typer.testing import CliRunner

import emberbench.records.episode as episode
from emberbench.io.canonical import canonical_bytes
from emberbench.cli.main import app
from emberbench.results.manifest import EvaluationManifest, ManifestEntry
from emberbench.evaluation.runner import run_evaluation
from tests.run_support import small_manifest

pytestmark = pytest.mark.ray

SMALL = ["v1-pub-01-single-exit-sparse", "v1-pub-12-smouldering-two-exits"]


@pytest.fixture(scope="module")
def results(tmp_path_factory, suite):  # noqa: ANN001
    """greedy and stay artifacts of a ten-episode manifest."""
    manifest = small_manifest(suite, seeds=range(5), ids=SMALL)
    folder = tmp_path_factory.mktemp("ray-stream")
    for policy in ("greedy", "stay"):
        run_evaluation(manifest, suite, policy, policy, folder / f"{policy}.json")
    return folder


@pytest.fixture
def counted(monkeypatch):  # noqa: ANN001, ANN201
    """Records every record the commands' Ray replayer gets a verdict for, and every replay on the driver."""
    import emberbench.cluster.commands as commands
    from emberbench.cluster import RayAuthenticator

    on_ray: Counter = Counter()
    on_driver: Counter = Counter()

    class Counting(RayAuthenticator):
        def replay(self, jobs, suite):  # noqa: ANN001, ANN202
            for job, verdict in super().replay(jobs, suite):
                on_ray[hashlib.sha256(job.record_bytes).hexdigest()] += 1
                yield job, verdict

    real = episode.replay
    monkeypatch.setattr(commands, "RayAuthenticator", Counting)
    monkeypatch.setattr(episode, "replay", lambda s, r: on_driver.update([r.seed]) or real(s, r))
    return on_ray, on_driver


@pytest.mark.parametrize("command", ["verify", "stats", "compare"])
def test_each_record_is_replayed_once_on_ray(ray_cluster, results, counted, command, tmp_path) -> None:  # noqa: ANN001
    """Issue 13: with --workers, every record of every input is replayed exactly once, by a worker."""
    on_ray, on_driver = counted
    a, b = str(results / "greedy.json"), str(results / "stay.json")
    args = {
        "verify": ["verify", a],
        "stats": ["stats", a, "--resamples", "100", "--out", str(tmp_path / "s.json")],
        "compare": ["compare", a, b, "--resamples", "100", "--out", str(tmp_path / "c.json")],
    }[command]
    out = CliRunner().invoke(app, [*args, "--workers", "2"])
    assert out.exit_code == 0, out.output
    expected = Counter()
    for path in (a,) if command != "compare" else (a, b):
        for e in json.loads(open(path, "rb").read())["episodes"]:
            expected[hashlib.sha256(canonical_bytes(e["record"])).hexdigest()] += 1
    assert on_ray == expected and set(on_ray.values()) == {1}
    assert not on_driver


def test_audit_on_ray_gives_the_in_process_verdicts(ray_cluster, suite, results, tmp_path) -> None:  # noqa: ANN001
    """ok, partial and damaged runs get the same verdicts with parallel replay."""
    from emberbench.runs.audit import audit_store
    from emberbench.cluster import RayAuthenticator
    from emberbench.store import journal_name
    from emberbench.evaluation.store_runner import open_store

    store = open_store(tmp_path / "store")
    manifest = EvaluationManifest(suite.id, suite.version, suite.hash, tuple(
        ManifestEntry(i, sid, suite.scenario(sid).content_hash, 0) for i, sid in enumerate(SMALL)))
    for model in ("a", "b"):
        run_evaluation(manifest, suite, "greedy", model, tmp_path / f"{model}.json", store=store)
    ref = f"results/{journal_name(manifest.hash, 'b')}"
    artifact = json.loads(store.get(store.refs.get(ref)))
    artifact["episodes"][1]["metrics"]["counts"]["steps"] += 1
    store.refs.set(ref, store.put(canonical_bytes(artifact) + b"\n"))
    local = audit_store(store, suite)
    assert sorted(v.state for v in local) == ["damaged", "ok"]
    with RayAuthenticator(2, max_chunk=1) as auth:
        assert audit_store(store, suite, authenticator=auth) == local
