"""Batched and concurrent driving on Ray workers: the bytes of one episode at a time, in process."""

from __future__ import annotations

import pytest

from emberbench.evaluation.drive import DriveOptions
from emberbench.evaluation.runner import run_evaluation
from emberbench.evaluation.store_runner import open_store
from tests.unit.test_drive import SHORT, VARIED, manifest_of

pytestmark = pytest.mark.ray
POLICIES = "tests.drive_policies"


def _on_ray(suite, manifest, policy, out, drive, *, store=None, workers=2):  # noqa: ANN001, ANN202
    from emberbench.cluster import RayExecutor

    root = None if store is None else store.root
    with RayExecutor(suite, policy, workers=workers, store_root=root, drive=drive) as ex:
        return run_evaluation(manifest, suite, policy, "m", out, executor=ex, store=store)


@pytest.fixture(scope="module")
def in_process(suite, tmp_path_factory):  # noqa: ANN001, ANN201
    """``in_process(policy)``: the in-process, one-at-a-time artifact of ``policy`` on the varied manifest
    (made once per policy: every batch size is compared with the same bytes)."""
    made: dict[str, bytes] = {}

    def get(policy: str) -> bytes:
        if policy not in made:
            out = tmp_path_factory.mktemp("in-process") / "reference.json"
            run_evaluation(manifest_of(suite, VARIED, seeds=(0, 1, 2)), suite, policy, "m", out)
            made[policy] = out.read_bytes()
        return made[policy]

    return get


@pytest.mark.parametrize("batch", [1, 7, 64])
@pytest.mark.parametrize("policy", ["random", f"{POLICIES}:NumpyMLP"])
def test_batched_on_ray_is_byte_identical_to_one_at_a_time_in_process(ray_cluster, suite, tmp_path, in_process,
                                                                       policy, batch) -> None:  # noqa: ANN001
    """Every worker plays its calls' episodes B at a time in lockstep; the artifact (with a store: records put
    by the workers) is the in-process one-at-a-time artifact, episodes of different lengths included."""
    manifest = manifest_of(suite, VARIED, seeds=(0, 1, 2))
    out = tmp_path / "ray.json"
    summary = _on_ray(suite, manifest, policy, out, DriveOptions(batch_size=batch), store=open_store(tmp_path / "s"))
    assert out.read_bytes() == in_process(policy)
    assert summary.ran == len(manifest.episodes)


def test_slow_policy_on_ray_gives_the_same_artifact_at_concurrency_1_and_64(ray_cluster, suite, tmp_path) -> None:  # noqa: ANN001
    """A 50 ms-per-step policy on one Ray worker: 64 episodes in flight write the artifact of one in flight."""
    manifest = manifest_of(suite, SHORT)
    outs = []
    for concurrency in (1, 64):
        out = tmp_path / f"c{concurrency}.json"
        _on_ray(suite, manifest, f"{POLICIES}:SleepyGreedy", out, DriveOptions(concurrency=concurrency), workers=1)
        outs.append(out.read_bytes())
    reference = tmp_path / "greedy.json"
    run_evaluation(manifest, suite, "greedy", "m", reference)
    assert outs[0] == outs[1] == reference.read_bytes()


@pytest.mark.parametrize("drive", [DriveOptions(), DriveOptions(batch_size=4)])
def test_weights_load_once_per_worker_not_per_episode(ray_cluster, suite, tmp_path, drive) -> None:  # noqa: ANN001
    """Each Ray worker loads the network's weights at its first episode and never again (18 episodes, 2
    workers: at most 2 loads, each in another process), while every episode or batch gets a new policy."""
    import ray

    from emberbench.cluster.workers import remote_class
    from tests.drive_policies import LOAD_COUNTER, LoadCounter

    counter = remote_class(LoadCounter).options(name=LOAD_COUNTER, num_cpus=0).remote()
    try:
        manifest = manifest_of(suite, VARIED[:3], seeds=(0, 1, 2, 3, 4, 5))
        _on_ray(suite, manifest, f"{POLICIES}:CountedMLP", tmp_path / "r.json", drive)
        loads = ray.get(counter.get.remote())
    finally:
        ray.kill(counter)
    assert 1 <= len(loads) <= 2
    assert len(set(loads)) == len(loads)


def test_usage_reported_on_workers_reaches_the_run_info(ray_cluster, suite, tmp_path) -> None:  # noqa: ANN001
    """Each worker's episodes carry their policy's usage back in the reply; the coordinator's sum in the
    run-info equals the in-process run's."""
    from emberbench.evaluation.run_info import read_run_info

    manifest = manifest_of(suite, SHORT)
    local = run_evaluation(manifest, suite, f"{POLICIES}:CountingGreedy", "m", tmp_path / "local.json")
    store = open_store(tmp_path / "s")
    summary = _on_ray(suite, manifest, f"{POLICIES}:CountingGreedy", tmp_path / "ray.json",
                      DriveOptions(concurrency=4), store=store)
    (name,) = store.journal_names()
    assert local.usage is not None and summary.usage == local.usage == read_run_info(store, name).model_usage
