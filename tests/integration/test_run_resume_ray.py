"""The audit-grade run path on Ray: resume authentication on the workers, fresh policies, one writer per output."""

from __future__ import annotations

import threading

import pytest

from emberbench.errors import OutputLockedError, PolicyError
from emberbench.results.artifact import load_result
from emberbench.evaluation.runner import run_evaluation
from emberbench.evaluation.store_runner import open_store
from tests.run_support import small_manifest, tamper_metric

pytestmark = pytest.mark.ray
POLICIES = "tests.integration.cluster_policies"


@pytest.fixture(scope="module")
def manifest(suite):  # noqa: ANN001
    return small_manifest(suite, seeds=(3, 11, 12, 13))


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


def test_factory_sharing_one_policy_is_refused_on_workers(ray_cluster, suite, manifest, tmp_path):
    """Issue 11 defect 8: on Ray workers too, a factory returning one object twice stops the run."""
    with pytest.raises(PolicyError, match="already returned"):
        _ray_run(suite, manifest, tmp_path / "a.json", open_store(tmp_path / "s"), policy=f"{POLICIES}:shared",
                 workers=1)


def test_two_ray_runs_racing_on_one_out(ray_cluster, suite, manifest, tmp_path):
    """Issue 11 defect 3: two Ray runs started together on one --out: exactly one proceeds."""
    from emberbench.cluster import run_on_ray

    out = tmp_path / "r.json"
    barrier = threading.Barrier(2)
    outcomes: dict[str, object] = {}

    def go(model_id: str, policy: str) -> None:
        store = open_store(tmp_path / "s")
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


KILLS = (4, 5, 7)


@pytest.fixture(scope="module")
def frozen_ray_runs(ray_cluster, suite, manifest, tmp_path_factory):  # noqa: ANN001
    """One Ray run, frozen (as a SIGKILL would leave it) after each of ``KILLS`` episodes."""
    from emberbench.cluster import RayExecutor
    from tests.run_support import freeze

    base = tmp_path_factory.mktemp("ray-kills")
    live = base / "live"
    live.mkdir()
    frozen = {kill: base / f"frozen-{kill}" for kill in KILLS}

    def progress(done: int, total: int) -> None:
        if done in frozen and not frozen[done].exists():
            freeze(live, frozen[done])

    store = open_store(live / "store")
    # Every journal entry written at once, so that the journal runs ahead of the checkpointed artifact at each
    # kill point (a run's batches do that only after a time flush).
    with RayExecutor(suite, "greedy", workers=2, store_root=store.root) as ex, pytest.MonkeyPatch.context() as patch:
        patch.setattr("emberbench.evaluation.store_runner.JOURNAL_BATCH", 1)
        run_evaluation(manifest, suite, "greedy", "g", live / "r.json", executor=ex, store=store,
                       checkpoint_every=2, progress=progress)
    return frozen


@pytest.mark.slow
@pytest.mark.parametrize("kill,kind,pick,regenerated", [
    (4, "record-delete", 1, 0),  # the record is also in the checkpointed artifact: put back from there
    (7, "record-byte", 6, 1),  # the 7th record is only in the journal (checkpoint after 6): played again
    (5, "artifact-metric", 0, 0),  # caught only by replaying the artifact's records on the workers
])
def test_killed_and_damaged_ray_runs_resume_safely(frozen_ray_runs, suite, manifest, local_bytes, tmp_path, kill,
                                                   kind, pick, regenerated):
    """The resume property on Ray, for fixed cases: refused unchanged, or byte-identical with records intact."""
    from emberbench.errors import EmberError
    from tests.run_support import freeze, journaled_keys, tamper

    folder = tmp_path / "run"
    freeze(frozen_ray_runs[kill], folder)
    store = open_store(folder / "store")
    if kind == "artifact-metric":
        tamper_metric(folder / "r.json")
    else:
        assert tamper(folder, store, kind, pick=pick, offset=123) == kind
    out = folder / "r.json"
    before = out.read_bytes()
    try:
        summary, auth_calls = _ray_run(suite, manifest, out, store)
    except EmberError as exc:
        assert kind == "artifact-metric" and out.read_bytes() == before
        assert "stored metrics differ" in str(exc)
        return
    assert kind != "artifact-metric" and out.read_bytes() == local_bytes
    assert auth_calls >= 2  # the artifact's and the journal's records were replayed on the workers
    assert summary.regenerated == regenerated and summary.ran == len(manifest.episodes) - kill
    assert all(store.get(k, verify_data=True) for k in journaled_keys(store))
