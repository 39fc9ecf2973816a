"""Faults on Ray: a worker SIGKILLed mid-run, a poison episode, a policy exception, a SIGKILLed coordinator.

In every case the journal holds each episode at most once and the final
artifact is byte-identical to the in-process one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from emberbench.errors import EpisodeFailedError
from emberbench.evaluation.runner import run_evaluation
from emberbench.evaluation.store_runner import open_store

from .cluster_policies import TARGET_SCENARIO
from .conftest import subprocess_env

pytestmark = pytest.mark.ray
POLICIES = "tests.integration.cluster_policies"


def _journal_indices(store, manifest, model_id: str) -> list[int]:
    from emberbench.store import journal_name

    state = store.read_journal(journal_name(manifest.hash, model_id))
    return [int(e.data["index"]) for e in state.entries if "index" in e.data]


def test_worker_sigkilled_mid_run(ray_cluster, suite, dev_manifest, reference, tmp_path):
    """SIGKILL one worker after 20 episodes: Ray restarts it, its episodes are rerun, bytes identical."""
    from emberbench.cluster import RayExecutor

    store = open_store(tmp_path / "st")
    out = tmp_path / "r.json"
    killed: list[int] = []
    with RayExecutor(suite, "fire-aware", workers=2, store_root=store.root, target_call_seconds=0.2) as ex:
        pids = ex.worker_pids()

        def progress(done: int, total: int) -> None:
            if done >= 20 and not killed:
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])

        summary = run_evaluation(dev_manifest, suite, "fire-aware", "f", out, executor=ex, store=store,
                                 progress=progress)
        assert killed and ex.stats.failed_calls >= 1
        assert pids[0] not in ex.worker_pids()  # a new process serves that worker now
    assert summary.completed == len(dev_manifest.episodes)
    assert out.read_bytes() == reference("fire-aware", "f")
    indices = _journal_indices(store, dev_manifest, "f")
    assert sorted(indices) == list(range(len(dev_manifest.episodes)))  # each exactly once


def test_poison_episode_is_named_then_resume_after_fix(ray_cluster, suite, dev_manifest, reference, tmp_path):
    """A policy that kills its worker on one scenario: 3 attempts, a clear error, kept episodes, resume once fixed."""
    import ray

    from emberbench.cluster import RayExecutor

    from .cluster_policies import POISON_SWITCH, PoisonSwitch

    switch = ray.remote(PoisonSwitch).options(name=POISON_SWITCH, num_cpus=0).remote()
    try:
        store = open_store(tmp_path / "st")
        out = tmp_path / "r.json"
        targets = {e.index for e in dev_manifest.episodes if e.scenario_id == TARGET_SCENARIO}
        with RayExecutor(suite, f"{POLICIES}:poison", workers=2, store_root=store.root) as ex, \
                pytest.raises(EpisodeFailedError) as info:
            run_evaluation(dev_manifest, suite, f"{POLICIES}:poison", "g", out, executor=ex, store=store)
        err = info.value
        assert err.index in targets and err.attempts == 3
        assert f"episode {err.index} (scenario {TARGET_SCENARIO}" in str(err)
        kept = _journal_indices(store, dev_manifest, "g")
        assert kept and not targets & set(kept) and len(kept) == len(set(kept))
        ray.get(switch.disarm.remote())  # the user fixes the policy's code; its spec stays the same
        with RayExecutor(suite, f"{POLICIES}:poison", workers=2, store_root=store.root) as ex:
            summary = run_evaluation(dev_manifest, suite, f"{POLICIES}:poison", "g", out, executor=ex, store=store)
        assert summary.resumed == len(kept) and summary.ran == len(dev_manifest.episodes) - len(kept)
        assert out.read_bytes() == reference("greedy", "g")
        assert sorted(_journal_indices(store, dev_manifest, "g")) == list(range(len(dev_manifest.episodes)))
    finally:
        ray.kill(switch)


def test_policy_exception_stops_the_run_as_in_process(ray_cluster, suite, dev_manifest, tmp_path):
    """A policy exception is not retried: the same exception as in process, the target never journaled."""
    from emberbench.cluster import RayExecutor

    spec = f"{POLICIES}:raising"
    with pytest.raises(ValueError) as local:
        run_evaluation(dev_manifest, suite, spec, "g", tmp_path / "l.json", store=open_store(tmp_path / "l"))
    store = open_store(tmp_path / "st")
    with RayExecutor(suite, spec, workers=2, store_root=store.root) as ex:
        with pytest.raises(ValueError) as remote:
            run_evaluation(dev_manifest, suite, spec, "g", tmp_path / "r.json", executor=ex, store=store)
        assert ex.stats.failed_calls == 0
    assert str(remote.value) == str(local.value)
    targets = {e.index for e in dev_manifest.episodes if e.scenario_id == TARGET_SCENARIO}
    kept = _journal_indices(store, dev_manifest, "g")
    assert kept and not targets & set(kept)


@pytest.mark.slow
def test_coordinator_sigkilled_resumes_from_journal(ray_cluster, dev_manifest, reference, tmp_path):
    """SIGKILL the `emberbench run` process mid-run; a second run resumes from the journal, bytes identical."""
    from emberbench.results.manifest import write_manifest
    from emberbench.store import Store

    write_manifest(dev_manifest, tmp_path / "m.json")
    cmd = [sys.executable, "-m", "emberbench.cli.main", "run", "--manifest", str(tmp_path / "m.json"),
           "--policy", "fire-aware", "--model-id", "f", "--out", str(tmp_path / "r.json"),
           "--store", str(tmp_path / "st"), "--workers", "2"]
    proc = subprocess.Popen(cmd, env=subprocess_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    done: list[int] = []
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            done = _journal_indices(Store.open(tmp_path / "st"), dev_manifest, "f")
        except Exception:  # noqa: BLE001 - the store or journal may not exist yet
            done = []
        if len(done) >= 10:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    try:  # the embedded Ray processes of the killed driver: stop them by their session, never by name
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    assert 10 <= len(done) < len(dev_manifest.episodes), proc.stdout.read().decode() if proc.stdout else ""
    rerun = subprocess.run(cmd, env=subprocess_env(), capture_output=True, text=True, timeout=300, check=False)
    assert rerun.returncode == 0, rerun.stderr
    assert "resumed" in rerun.stdout
    assert (tmp_path / "r.json").read_bytes() == reference("fire-aware", "f")
    indices = _journal_indices(Store.open(tmp_path / "st"), dev_manifest, "f")
    assert sorted(indices) == list(range(len(dev_manifest.episodes)))


def test_a_worker_that_cannot_start_names_its_node_and_the_cause(ray_cluster, suite, tmp_path):
    """Issue 24: a worker that cannot open the store on its node stops the run with one line naming both.

    Before, a store error raised in the worker's constructor could not be
    unpickled on the coordinator ("Failed to deserialize exception") and the
    line said neither the node nor the cause.
    """
    from emberbench.cluster import RayExecutor
    from emberbench.errors import WorkerError

    missing = tmp_path / "not-a-store"
    with pytest.raises(WorkerError) as info:
        RayExecutor(suite, "greedy", workers=1, store_root=missing).start()
    message = str(info.value)
    assert message.startswith(f"an episode worker failed to start on node {info.value.node} (")
    assert f"StoreFormatError: {missing} is not a store (no such folder)" in message and "\n" not in message
    assert info.value.cause == "StoreFormatError"


def test_a_store_failure_on_a_worker_mid_run_names_the_node(ray_cluster, suite, dev_manifest, tmp_path):
    """A store that fails under a running worker: the run stops with the node and the store's error, one line."""
    import shutil

    from emberbench.cluster import RayExecutor
    from emberbench.errors import WorkerError

    workers_store = open_store(tmp_path / "workers")  # the workers' view of the store breaks, not the coordinator's
    with RayExecutor(suite, "greedy", workers=1, store_root=workers_store.root) as ex:
        shutil.rmtree(workers_store.root / "objects")
        (workers_store.root / "objects").write_text("not a folder")  # every put on the worker now fails
        with pytest.raises(WorkerError) as info:
            run_evaluation(dev_manifest, suite, "greedy", "g", tmp_path / "r.json", executor=ex,
                           store=open_store(tmp_path / "coordinator"))
    message = str(info.value)
    assert message.startswith(f"an episode worker failed on node {info.value.node} (") and "\n" not in message
    assert f"StoreLayoutError: refusing store entry {workers_store.root / 'objects'}" in message
    assert info.value.cause == "StoreLayoutError"
