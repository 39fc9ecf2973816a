"""One writer per output: the output lock, stale locks, and two runs racing on one --out."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading

import pytest

from emberbench.errors import OutputLockedError
from emberbench.evaluation.output_lock import OutputLock, lock_path_of
from emberbench.policies import GreedyPolicy
from emberbench.results.artifact import load_result
from emberbench.evaluation.runner import run_evaluation
from emberbench.evaluation.store_runner import open_store
from tests.run_support import small_manifest


def test_second_holder_is_refused_with_the_holder_named(tmp_path) -> None:  # noqa: ANN001
    """While one lock is held, a second is refused at once naming pid, host and start time."""
    out = tmp_path / "r.json"
    with OutputLock(out):
        with pytest.raises(OutputLockedError) as info:
            OutputLock(out).acquire()
    message = str(info.value)
    assert f"pid {os.getpid()}" in message and socket.gethostname() in message and "started" in message
    assert "\n" not in message
    assert not lock_path_of(out).exists()  # released and removed


def test_stale_lock_of_a_dead_process_is_taken_over(tmp_path) -> None:  # noqa: ANN001
    """A lock file left by a dead process (any pid, any host) does not stop the next run."""
    out = tmp_path / "r.json"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    holder = {"pid": int(dead.stdout), "host": "elsewhere", "started": "2000-01-01T00:00:00Z"}
    lock_path_of(out).write_text(json.dumps(holder))
    with OutputLock(out) as lock:
        assert lock.stale == holder
        assert json.loads(lock_path_of(out).read_text())["pid"] == os.getpid()


def test_a_live_holder_in_another_process_is_respected(tmp_path) -> None:  # noqa: ANN001
    """A lock held by another live process refuses, whatever pid its file records."""
    out = tmp_path / "r.json"
    code = ("import sys, time; from emberbench.evaluation.output_lock import OutputLock; "
            "lock = OutputLock(sys.argv[1]).acquire(); print('held', flush=True); time.sleep(30)")
    proc = subprocess.Popen([sys.executable, "-c", code, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        with pytest.raises(OutputLockedError, match=f"pid {proc.pid}"):
            OutputLock(out).acquire()
    finally:
        proc.kill()
        proc.wait(10)
    with OutputLock(out):  # the kernel released the dead holder's lock
        pass


def test_lock_refuses_a_non_regular_lock_path(tmp_path) -> None:  # noqa: ANN001
    """A folder or a link where the lock file goes is refused, never followed."""
    from emberbench.errors import OutputPathError

    out = tmp_path / "r.json"
    lock_path_of(out).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OutputPathError):
        OutputLock(out).acquire()
    assert not (tmp_path / "elsewhere").exists()


@pytest.mark.parametrize("with_store", [False, True])
def test_two_runs_racing_on_one_out_exactly_one_proceeds(tmp_path, suite, with_store) -> None:  # noqa: ANN001
    """Issue 11 defect 3: two in-process runs started together on one --out: one runs, one is refused at once."""
    manifest = small_manifest(suite)
    out = tmp_path / "r.json"
    barrier = threading.Barrier(2)
    refused = threading.Event()
    outcomes: dict[str, object] = {}

    def slow_factory():  # noqa: ANN202 - waits until the other run has tried, so the two overlap
        refused.wait(10)
        return GreedyPolicy()

    def go(model_id: str, policy: str) -> None:
        store = open_store(tmp_path / "s") if with_store else None
        barrier.wait()
        try:
            outcomes[model_id] = run_evaluation(manifest, suite, slow_factory, model_id, out, store=store,
                                                policy_spec=policy)
        except OutputLockedError as exc:
            outcomes[model_id] = exc
            refused.set()

    threads = [threading.Thread(target=go, args=args) for args in (("a", "greedy"), ("b", "stay"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    errors = [v for v in outcomes.values() if isinstance(v, OutputLockedError)]
    winners = [k for k, v in outcomes.items() if not isinstance(v, OutputLockedError)]
    assert len(errors) == 1 and len(winners) == 1, outcomes
    assert load_result(out, suite).model_id == winners[0]
