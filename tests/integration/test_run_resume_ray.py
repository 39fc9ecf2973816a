"""The audit-grade run path on Ray: resume authentication on the workers, fresh policies, one writer per output."""

from __future__ import annotations

import threading

import pytest

from emberbench.errors import OutputLockedError, PolicyError, ResultError
from emberbench.results import load_result
from emberbench.runner import run_evaluation
from emberbench.store_runner import open_store
from tests.run_support import small_manifest, tamper_metric

pytestmark = pytest.mark.ray
POLICIES = "tests.integration.cluster_policies"


@pytest.fixture(scope="module")
def manifest(suite):  # noqa: ANN001
    return small_manifest(suite, seeds=(3, 11, 12))


@pytest.fixture(scope="module")
def local_bytes(tmp_path_factory, suite, manifest):  # noqa: ANN001
    out = tmp_path_factory.mktemp("local") / "r.json"
    run_evaluation(manifest, suite, "greedy", "g", out)
    return out.read_bytes()


def _ray_run(suite, manifest, out, store, policy="greedy", workers=2):  # noqa: ANN001, ANN202
    from emberbench.cluster import RayExecutor

    with RayExecutor(suite, policy, workers=workers, store_root=store.root) as ex:
        summary = run_evaluation(manifest, suite, policy, "g", out, executor=ex, store=store)
        return summary, ex.auth_calls


def test_resume_on_ray_replays_on_workers_and_regenerates(ray_cluster, suite, manifest, local_bytes, tmp_path):
    """Journaled records are checked on the workers; a deleted one is played again to the same bytes."""
    store = open_store(tmp_path / "s")
    _ray_run(suite, manifest, tmp_path / "a.json", store)
    (name,) = store.journal_names()
    digests = [e.data["digest"] for e in store.read_journal(name).entries if "digest" in e.data]
    store.layout.object_path(digests[2]).unlink()
    summary, calls = _ray_run(suite, manifest, tmp_path / "b.json", store)
    assert calls >= 2
    assert summary.from_journal == len(manifest.episodes) - 1 and summary.regenerated == 1 and summary.ran == 0
    assert (tmp_path / "b.json").read_bytes() == local_bytes
    assert store.get(digests[2], verify_data=True)


def test_tampered_artifact_is_refused_on_ray(ray_cluster, suite, manifest, tmp_path):
    """With Ray and a store, an artifact at --out that fails replay on the workers is refused and kept."""
    store = open_store(tmp_path / "s")
    out = tmp_path / "a.json"
    _ray_run(suite, manifest, out, store)
    tamper_metric(out)
    before = out.read_bytes()
    with pytest.raises(ResultError, match="stored metrics differ"):
        _ray_run(suite, manifest, out, store)
    assert out.read_bytes() == before


def test_factory_sharing_one_policy_is_refused_on_workers(ray_cluster, suite, manifest, tmp_path):
    """Issue 11 defect 8: on Ray workers too, a factory returning one object twice stops the run."""
    with pytest.raises(PolicyError, match="already returned"):
        _ray_run(suite, manifest, tmp_path / "a.json", open_store(tmp_path / "s"), policy=f"{POLICIES}:shared",
                 workers=1)


@pytest.mark.parametrize("with_store", [False, True])
def test_two_ray_runs_racing_on_one_out(ray_cluster, suite, manifest, tmp_path, with_store):
    """Issue 11 defect 3: two Ray runs started together on one --out: exactly one proceeds."""
    from emberbench.cluster import run_on_ray

    out = tmp_path / "r.json"
    barrier = threading.Barrier(2)
    outcomes: dict[str, object] = {}

    def go(model_id: str, policy: str) -> None:
        store = open_store(tmp_path / "s") if with_store else None
        barrier.wait()
        try:
            outcomes[model_id] = run_on_ray(manifest, suite, policy, model_id, out, store=store, workers=1)
        except OutputLockedError as exc:
            outcomes[model_id] = exc

    threads = [threading.Thread(target=go, args=args) for args in (("a", "greedy"), ("b", "stay"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    refused = [k for k, v in outcomes.items() if isinstance(v, OutputLockedError)]
    winners = [k for k, v in outcomes.items() if not isinstance(v, OutputLockedError)]
    assert len(refused) == 1 and len(winners) == 1, outcomes
    assert "is being written by another run (pid" in str(outcomes[refused[0]])
    assert load_result(out, suite).model_id == winners[0]
