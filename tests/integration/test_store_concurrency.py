"""Many processes against one store: racing writers, SIGKILLed writers, gc racing a writer.

These start real processes (fork for the racing writers, fresh interpreters for
the SIGKILL test) and take a few seconds each, hence the ``slow`` marker.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from emberbench.store import Store, fsck, gc, key_of

pytestmark = pytest.mark.slow

_CTX = multiprocessing.get_context("fork")


def _payloads(n: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    return [(f'{{"episode":{i},"log":"' + "NESW"[i % 4] * rng.randrange(1, 40_000) + '"}').encode() for i in range(n)]


def _racing_writer(root: str, seed: int, barrier: multiprocessing.synchronize.Barrier) -> None:
    st = Store.open(root)
    shared = _payloads(60, 0)
    random.Random(seed).shuffle(shared)
    own = [f"writer {seed} object {i}".encode() for i in range(20)]
    barrier.wait()
    for data in shared + own:
        assert st.put(data) == key_of(data)
    st.close()  # releases its writer lease (a forked child ends without running finalizers)


def test_racing_writers_overlapping_keys(tmp_path: Path) -> None:
    """Four processes put the same 60 objects (and 20 of their own) at once: all stored, valid, no temps."""
    st = Store.open(tmp_path / "s", create=True)
    barrier = _CTX.Barrier(4)
    procs = [_CTX.Process(target=_racing_writer, args=(str(st.root), seed, barrier)) for seed in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    expected = {key_of(d) for d in _payloads(60, 0)}
    expected |= {key_of(f"writer {s} object {i}".encode()) for s in range(4) for i in range(20)}
    assert set(st) == expected
    for key in expected:
        assert key_of(st.get(key)) == key
    report = fsck(st, verify_data=True)
    assert report.ok and report.temp_files == () and os.listdir(st.layout.tmp) == []


_KILLED_WRITER = textwrap.dedent(
    """
    import os, random, sys
    from emberbench.store import Store
    st = Store.open(sys.argv[1])
    rng = random.Random(int(sys.argv[2]))
    with st.open_journal("run", timeout=30) as journal:
        index = len(journal.entries)
        print("ready", flush=True)
        while True:
            key = st.put(os.urandom(rng.randrange(1, 300_000)))
            journal.append({"index": index, "digest": key}, keys=[key])
            index += 1
            if index % 7 == 0:
                st.refs.set("latest", key)
    """
)


def test_sigkilled_writers_leave_a_valid_store(tmp_path: Path) -> None:
    """Writers killed with SIGKILL at random points leave only temps; the journal resumes cleanly."""
    st = Store.open(tmp_path / "s", create=True)
    rng = random.Random(7)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    for round_ in range(10):
        proc = subprocess.Popen(
            [sys.executable, "-c", _KILLED_WRITER, str(st.root), str(round_)],
            stdout=subprocess.PIPE,
            env=env,
        )
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        time.sleep(rng.uniform(0.0, 0.12))
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        proc.stdout.close()
        report = fsck(st, verify_data=True, connectivity=True, quarantine=False)
        assert report.ok, report
        # A kill can leave a temp file in tmp/ (an object put) or in refs/ (a ref update).
        # (A killed writer's lease file stays too: it is no temp file; gc releases it once it is dead.)
        left = {f"tmp/{n}" for n in os.listdir(st.layout.tmp) if not n.endswith(".lease")}
        left |= {str(p.relative_to(st.root)) for p in (st.root / "refs").rglob("*.tmp")}
        assert set(report.temp_files) == left
        state = st.read_journal("run")
        assert [e.data["index"] for e in state.entries] == list(range(len(state.entries)))
        for entry in state.entries:
            assert st.get(entry.data["digest"], verify_data=True) is not None
    with st.open_journal("run") as journal:  # the writer's open drops any torn tail
        count = len(journal.entries)
    assert count > 10 and st.read_journal("run").torn_bytes == 0
    assert st.get(st.refs.get("latest"), verify_data=True)


def _gc_race_writer(root: str, waves: multiprocessing.queues.Queue, ready: multiprocessing.synchronize.Event) -> None:
    st = Store.open(root)
    pending: list[bytes] = []
    with st.open_journal("run") as journal:
        ready.set()
        i = 0
        while True:
            if not pending:
                wave = waves.get()
                if wave is None:
                    return
                pending = list(wave)
            new = st.put(f"new object {i}".encode())
            # An old unreferenced object that gc may be collecting right now;
            # each is revived once, so a wrong deletion is never papered over.
            revived = st.put(pending.pop())
            journal.append({"index": i}, keys=[new, revived])
            if i % 5 == 0:
                st.refs.set(f"r/{i % 3}", revived)
            i += 1


def test_gc_racing_a_writer_never_deletes_referenced(tmp_path: Path) -> None:
    """gc --apply in a loop, while a writer re-puts old objects and references them, loses nothing referenced."""
    st = Store.open(tmp_path / "s", create=True)
    waves = _CTX.Queue()
    ready = _CTX.Event()
    writer = _CTX.Process(target=_gc_race_writer, args=(str(st.root), waves, ready))
    writer.start()
    assert ready.wait(30)
    deleted: set[str] = set()
    garbage: set[str] = set()
    past = time.time() - 3600
    for wave in range(6):
        old = [f"old object {wave}/{i}".encode() for i in range(200)]
        for data in old + [f"garbage {wave}/{i}".encode() for i in range(50)]:
            os.utime(st.layout.object_path(st.put(data)), (past, past))
        garbage |= {key_of(f"garbage {wave}/{i}".encode()) for i in range(50)}
        waves.put(old)
        deadline = time.monotonic() + 0.4
        while time.monotonic() < deadline:
            deleted |= set(gc(st, grace_seconds=1.0, apply=True).deleted)
    waves.put(None)
    writer.join(30)
    assert writer.exitcode == 0
    assert garbage <= deleted  # gc really was sweeping
    state = st.read_journal("run")
    referenced = state.referenced_keys() | {key for _, key in st.refs.items()}
    assert len(state.entries) > 100
    for key in referenced:
        assert st.get(key, verify_data=True) is not None
    assert fsck(st, connectivity=True).ok
