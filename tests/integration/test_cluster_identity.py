"""Byte identity across executors, parallel authentication verdicts, and the isolation of ``ray``.

The acceptance test of the design: the same manifest and deterministic policy
give the same artifact bytes and statistics bytes in process, on one Ray
worker and on two; parallel replay gives the same verdicts and messages.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from emberbench.errors import ResultError
from emberbench.results.artifact import load_result
from emberbench.evaluation.runner import run_evaluation
from emberbench.statistics import aggregate_statistics, paired_statistics
from emberbench.evaluation.store_runner import open_store

pytestmark = pytest.mark.ray


def _run_ray(suite, manifest, policy, model_id, out: Path, workers: int, *, store_dir: Path | None):
    from emberbench.cluster import RayExecutor

    store = None if store_dir is None else open_store(store_dir)
    with RayExecutor(suite, policy, workers=workers, store_root=None if store is None else store.root) as ex:
        summary = run_evaluation(manifest, suite, policy, model_id, out, executor=ex, store=store)
        return ex.stats, summary


@pytest.mark.parametrize("workers", [1, 2])
def test_ray_artifact_is_byte_identical_to_local(ray_cluster, suite, dev_manifest, reference, tmp_path, workers):
    """greedy on 1 and 2 Ray workers (store in the workers) writes exactly the in-process artifact."""
    out = tmp_path / "r.json"
    stats, summary = _run_ray(suite, dev_manifest, "greedy", "g", out, workers, store_dir=tmp_path / "store")
    assert out.read_bytes() == reference("greedy", "g")
    assert sum(stats.episodes_by_node.values()) == len(dev_manifest.episodes)
    # Every worker is on this machine: each outcome names it, and so do the summary and the run-info.
    from emberbench.evaluation.run_info import read_run_info, this_host
    from emberbench.store import journal_name

    assert summary.nodes == ((this_host(), len(dev_manifest.episodes)),)
    info = read_run_info(open_store(tmp_path / "store"), journal_name(dev_manifest.hash, "g"))
    assert info is not None and info.nodes == summary.nodes
    assert stats.calls > workers  # batched, but more than one call per worker


def test_ray_without_store_returns_records_and_matches(ray_cluster, suite, dev_manifest, reference, tmp_path):
    """Without a store the workers send record bytes back; the artifact is still identical."""
    out = tmp_path / "r.json"
    _run_ray(suite, dev_manifest, "greedy", "g", out, 2, store_dir=None)
    assert out.read_bytes() == reference("greedy", "g")


def test_statistics_are_byte_identical_on_ray(ray_cluster, suite, dev_manifest, reference, tmp_path):
    """stats and compare with parallel replay and the Ray reducer give the in-process bytes."""
    from emberbench.cluster import RayAuthenticator, RayMapper

    (tmp_path / "g.json").write_bytes(reference("greedy", "g"))
    (tmp_path / "f.json").write_bytes(reference("fire-aware", "f"))
    ra, rb = load_result(tmp_path / "g.json", suite), load_result(tmp_path / "f.json", suite)
    with RayAuthenticator(2) as auth:
        mapper = RayMapper(2)
        for resamples in (200,):
            local = aggregate_statistics(ra, suite, resamples).to_json_bytes()
            remote = aggregate_statistics(ra, suite, resamples, authenticator=auth, mapper=mapper).to_json_bytes()
            assert remote == local
            local = paired_statistics(ra, rb, suite, resamples).to_json_bytes()
            remote = paired_statistics(ra, rb, suite, resamples, authenticator=auth, mapper=mapper).to_json_bytes()
            assert remote == local


def test_cli_run_verify_stats_compare_identical(ray_cluster, suite, dev_manifest, reference, tmp_path):
    """The CLI on Ray (run, verify --workers, stats/compare --workers) writes the in-process bytes."""
    from typer.testing import CliRunner

    from emberbench.cli.main import app
    from emberbench.results.manifest import write_manifest

    write_manifest(dev_manifest, tmp_path / "m.json")
    runner = CliRunner()

    def ok(*args: str) -> str:
        result = runner.invoke(app, list(args))
        assert result.exit_code == 0, result.output
        return result.output

    ok("run", "--manifest", str(tmp_path / "m.json"), "--policy", "greedy", "--model-id", "g",
       "--out", str(tmp_path / "g.json"), "--store", str(tmp_path / "st"), "--workers", "2")
    assert (tmp_path / "g.json").read_bytes() == reference("greedy", "g")
    (tmp_path / "f.json").write_bytes(reference("fire-aware", "f"))
    assert "60/60 episodes authenticated" in ok("verify", str(tmp_path / "g.json"), "--workers", "2")
    for workers in (None, "2"):
        extra = [] if workers is None else ["--workers", workers]
        ok("stats", str(tmp_path / "g.json"), "--resamples", "200", "--out", str(tmp_path / f"s{workers}.json"), *extra)
        ok("compare", str(tmp_path / "g.json"), str(tmp_path / "f.json"), "--resamples", "200",
           "--out", str(tmp_path / f"c{workers}.json"), *extra)
    assert (tmp_path / "s2.json").read_bytes() == (tmp_path / "sNone.json").read_bytes()
    assert (tmp_path / "c2.json").read_bytes() == (tmp_path / "cNone.json").read_bytes()


def _tamper(data: bytes, positions: list[int]) -> bytes:
    """Change one logged action of the episodes at ``positions`` and keep digests consistent."""
    from emberbench.io.canonical import canonical_bytes, sha256_hex

    obj = json.loads(data)
    for pos in positions:
        record = obj["episodes"][pos]["record"]
        first = record["actions"][0]
        record["actions"][0] = ("W" if first[0] != "W" else "E") + first[1:]
        obj["episodes"][pos]["record_digest"] = sha256_hex(canonical_bytes(record))
    return canonical_bytes(obj) + b"\n"


def test_parallel_verify_gives_the_in_process_verdict(ray_cluster, suite, reference, tmp_path):
    """Two tampered records (positions 45 and 7): both verifiers name episode 7 with the same message."""
    from emberbench.cluster import RayAuthenticator

    bad = tmp_path / "bad.json"
    bad.write_bytes(_tamper(reference("greedy", "g"), [45, 7]))
    with pytest.raises(ResultError) as local:
        load_result(bad, suite)
    with RayAuthenticator(2, max_chunk=4) as auth, pytest.raises(ResultError) as remote:
        load_result(bad, suite, authenticator=auth)
    assert "episode 7:" in str(local.value)
    assert str(remote.value) == str(local.value)


def test_parallel_audit_gives_the_in_process_verdicts(ray_cluster, suite, dev_manifest, tmp_path):
    """store audit with parallel replay lists the same verdicts as in process."""
    from emberbench.cluster import RayAuthenticator
    from emberbench.runs.audit import audit_store

    store = open_store(tmp_path / "st")
    run_evaluation(dev_manifest, suite, "greedy", "g", tmp_path / "g.json", store=store)
    with RayAuthenticator(2) as auth:
        assert audit_store(store, suite, authenticator=auth) == audit_store(store, suite)


def test_embedded_ray_binds_loopback_with_token_auth(ray_cluster):
    """The embedded instance's node address is 127.0.0.1 and token authentication is on."""
    import os

    import ray

    assert [n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"]] == ["127.0.0.1"]
    assert os.environ["RAY_AUTH_MODE"] == "token"
    assert ray_cluster.workers == 2 and ray_cluster.address is None


def test_other_auth_modes_are_refused(monkeypatch):
    """RAY_AUTH_MODE=disabled is refused with a clear error before Ray is touched."""
    from emberbench.cluster.session import require_token_auth
    from emberbench.errors import ClusterError

    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    with pytest.raises(ClusterError, match="token authentication"):
        require_token_auth()


def test_importing_the_core_and_cli_leaves_ray_out():
    """Importing emberbench, its CLI (every command module: the full app) and the cluster package itself does not
    import ray."""
    code = ("import sys, emberbench, emberbench.cli.main, cluster; emberbench.cli.main.app; "
            "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_external_agent_on_ray_matches_in_process(ray_cluster, suite, dev_manifest, tmp_path):
    """A cmd: agent started by Ray workers (one process per episode) writes the in-process bytes."""
    agent = tmp_path / "stay_agent.py"
    agent.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    print(json.dumps({p['id']: 'stay' for p in json.loads(line)['people']}), flush=True)\n"
    )
    spec = f"cmd:{sys.executable} {agent}"
    local, on_ray = tmp_path / "local.json", tmp_path / "ray.json"
    run_evaluation(dev_manifest, suite, spec, "agent", local)
    _run_ray(suite, dev_manifest, spec, "agent", on_ray, 2, store_dir=tmp_path / "store")
    assert on_ray.read_bytes() == local.read_bytes()
    assert load_result(on_ray, suite).episodes[0].metrics.count("evacuated") == 0
