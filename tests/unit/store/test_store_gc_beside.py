"""gc beside live writers (issue 25, defect 1): a writer lease is judged by its heartbeat, never by a pid alone.

gc no longer waits for writers to stop: it keeps every unreferenced object
stamped since a live writer lease of another process was taken, and removes
the leases of writers that are gone.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import is_s3

from emberbench.store import Store, gc, open_store

ROOT = Path(__file__).resolve().parents[3]
_WRITER = """
import sys
from emberbench.store import open_store
store = open_store(sys.argv[1])
print(store.put(sys.argv[2].encode()), flush=True)
sys.stdin.read()  # hold the lease until the test closes our input (or kills us)
store.close()
"""


def _writer(locator: str, data: str) -> tuple[subprocess.Popen[str], str]:
    """Another process that put ``data`` (unreferenced) and holds its writer lease: (process, key)."""
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, locator, data], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def test_gc_beside_a_live_writer_keeps_what_it_put_and_collects_it_once_the_writer_is_killed(store: Store) -> None:
    """A writer in another process put an object it has not referenced yet: gc --grace 0 --apply runs at once
    (no waiting for the writer), keeps it, and accounts for it; once the writer is SIGKILLed its lease is
    provably gone and the next gc collects the object and removes the lease."""
    referenced = store.put(b"kept by a ref")
    store.refs.set("keep", referenced)
    store.close()
    proc, key = _writer(store.locator, "pending record")
    try:
        started = time.monotonic()
        report = gc(store, grace_seconds=0, apply=True, lock_timeout=5)
        assert time.monotonic() - started < 30
        assert report.deleted == () and store.has(key)
        assert report.protected == 1 and report.marked == 1 and report.objects == 2 and len(report.live_writers) == 1
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    report = gc(store, grace_seconds=0, apply=True, lock_timeout=5)
    assert report.deleted == (key,) and report.live_writers == () and len(report.released_leases) == 1
    assert not store.has(key) and store.has(referenced)


def _rewrite_lease(st: Store, identity: dict) -> None:
    """Make this store's S3 writer lease name ``identity`` as its holder (as a process elsewhere would)."""
    held = st.backend.leases._writer
    assert held is not None
    owner = f"{identity['host']}:{identity['pid']}:feedbeef"
    body = json.dumps({"kind": "writer", "owner": owner, "ttl": 180.0, "identity": identity}).encode()
    held.etag = st.backend.client.put_object(Bucket=st.backend.bucket, Key=held.key, Body=body)["ETag"]


def test_a_writer_whose_pid_gc_cannot_see_is_alive(s3_locator: str) -> None:
    """Defect 1: a writer lease of this host whose pid does not exist *here* (its holder runs in another PID
    namespace: a sidecar container, `unshare -p`) is live while its heartbeat is fresh; gc keeps its records.
    Only a holder of this very namespace and boot whose process is gone counts as dead at once."""
    from emberbench.store._identity import process_identity, start_time

    writer = open_store(s3_locator, create=True)
    pending = writer.put(b"record put, not yet journaled")
    collector = open_store(s3_locator)
    elsewhere = {**process_identity(), "pid": 4_000_000, "pidns": "pid:[4026532999]", "start": "1"}
    _rewrite_lease(writer, elsewhere)
    report = gc(collector, grace_seconds=0, apply=True, lock_timeout=5)
    assert report.deleted == () and report.protected == 1 and writer.has(pending)
    # The same holder claimed from *this* namespace: its pid is provably gone, so it is dead at once.
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    gone = int(finished.stdout)
    assert start_time(gone) is None
    _rewrite_lease(writer, {**process_identity(), "pid": gone, "start": "12345"})
    report = gc(collector, grace_seconds=0, apply=True, lock_timeout=5)
    assert report.deleted == (pending,) and len(report.released_leases) == 1
    writer.close()


def test_a_reused_pid_does_not_keep_a_dead_holder_alive(s3_locator: str) -> None:
    """A holder whose pid now belongs to another process (another start time) is dead; one whose pid and start
    time match a running process is alive."""
    from emberbench.store._identity import process_identity, provably_dead, start_time

    me = process_identity()
    parent = {**me, "pid": os.getppid(), "start": start_time(os.getppid())}
    assert not provably_dead(parent)
    assert provably_dead({**parent, "start": "1"})
    assert not provably_dead({**parent, "start": "1", "pidns": "pid:[1]"})
    assert not provably_dead({**parent, "start": "1", "host": socket.gethostname() + "-other"})
    assert not provably_dead({**parent, "start": "1", "boot": "another-boot"})
    assert not provably_dead(me)
    assert not provably_dead({"pid": "7"}) and not provably_dead(None)


def test_a_reput_of_an_object_older_than_the_writer_lease_makes_it_young(s3_locator: str) -> None:
    """A writer that puts again an object stamped before its lease began (unreferenced, left by another writer
    less than an hour ago) refreshes it, so that gc beside it keeps it: a put is what a writer relies on."""
    first = open_store(s3_locator, create=True)
    key = first.put(b"left by an earlier run")
    first.close()
    time.sleep(3.5)  # beyond the one-second stamps and the lease slack
    writer = open_store(s3_locator)
    writer.put(b"takes the writer lease")
    assert writer.put(b"left by an earlier run") == key
    collector = open_store(s3_locator)
    report = gc(collector, grace_seconds=0, apply=True, lock_timeout=5)
    assert key not in report.deleted and writer.has(key)
    writer.close()
    assert key in gc(collector, grace_seconds=0, apply=True, lock_timeout=5).deleted


def test_local_lease_files_are_not_temps(local_store: Store) -> None:
    """A local writer's lease file in tmp/ is neither a temp fsck reports nor one gc deletes; closing the store
    removes it."""
    store = local_store
    store.put(b"x")
    leases = [n for n in os.listdir(store.layout.tmp) if n.endswith(".lease")]
    assert len(leases) == 1
    assert not any(rel.endswith(".lease") for rel, _ in store.backend.temp_entries())
    store.close()
    assert [n for n in os.listdir(store.layout.tmp) if n.endswith(".lease")] == []


@pytest.mark.parametrize("backend", ["local", "s3"])
def test_gc_of_this_process_ignores_its_own_lease(request: pytest.FixtureRequest, tmp_path: Path, backend: str) -> None:
    """gc run by the process that wrote (one store object) is not kept back by its own writer lease."""
    locator = str(tmp_path / "s") if backend == "local" else request.getfixturevalue("s3_locator")
    st = open_store(locator, create=True)
    loose = st.put(b"loose")
    assert gc(st, grace_seconds=0, apply=True).deleted == (loose,)
    assert is_s3(st) == (backend == "s3")
    st.close()
