"""A run's liveness (issue 25, defect 5): heartbeats in the run-info, `dead` after the staleness rule,
leases of dead runs taken over without waiting, and a store outage named in the run's error.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from emberbench.cli.main import app
from emberbench.evaluation import liveness
from emberbench.evaluation.run_info import read_run_info, run_info_ref
from emberbench.evaluation.runner import run_evaluation
from emberbench.evaluation.store_runner import StoreSink, open_store
from tests.run_support import small_manifest

_RUNNER = CliRunner()


def _cli(*args: object):  # noqa: ANN202
    return _RUNNER.invoke(app, [str(a) for a in args])


@pytest.fixture(params=["local", "s3"])
def finished(request, tmp_path, suite):  # noqa: ANN001
    """A store with one finished run: (store, locator, run name)."""
    locator = str(tmp_path / "s") if request.param == "local" else request.getfixturevalue("s3_locator")
    store = open_store(locator)
    run_evaluation(small_manifest(suite), suite, "greedy", "m", tmp_path / "g.json", store=store)
    (name,) = store.journal_names()
    yield store, locator, name
    store.close()


def _as_running(store, name: str, heartbeat_age: float) -> None:  # noqa: ANN001
    """Rewrite the run's run-info as a run that still says `running`, its last heartbeat ``heartbeat_age`` s ago."""
    info = read_run_info(store, name)
    beat = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(store.now() - heartbeat_age))
    running = info.replace(state="running", ended=None, result=None, heartbeat=beat)
    store.refs.set(run_info_ref(name), store.put(running.to_bytes()))


def test_a_run_whose_heartbeat_is_stale_is_listed_as_dead(finished) -> None:  # noqa: ANN001
    """`runs ls` says `running` only while the heartbeat is fresh, `dead` once it is STALE_SECONDS old (by the
    store's clock); `--state dead` and `--state running` tell them apart; `runs show` says why."""
    store, locator, name = finished
    _as_running(store, name, 5)
    listing = _cli("runs", "ls", "--store", locator)
    assert listing.exit_code == 0 and " running " in listing.output and "dead" not in listing.output
    _as_running(store, name, liveness.STALE_SECONDS + 30)
    listing = _cli("runs", "ls", "--store", locator)
    assert listing.exit_code == 0 and " dead " in listing.output and "running" not in listing.output, listing.output
    assert name[4:12] in _cli("runs", "ls", "--store", locator, "--state", "dead").output
    assert name[4:12] not in _cli("runs", "ls", "--store", locator, "--state", "running").output
    show = _cli("runs", "show", name[4:12], "--store", locator)
    assert show.exit_code == 0 and "liveness: dead: its last heartbeat was" in show.output, show.output


def test_a_run_beats_while_it_runs(tmp_path, suite, monkeypatch) -> None:  # noqa: ANN001
    """A running run rewrites its heartbeat (store clock) while an episode takes long; the beat stops with it."""
    monkeypatch.setattr(liveness, "HEARTBEAT_SECONDS", 0.2)
    store = open_store(tmp_path / "s")
    seen: list[tuple[str, str, int]] = []
    real_add = StoreSink.add

    def slow_add(self, outcome):  # noqa: ANN001, ANN202
        if not seen:
            before = read_run_info(store, self.name).heartbeat
            time.sleep(2.3)  # a slow episode: heartbeats have whole seconds, so at least one more second passes
            seen.append((before, read_run_info(store, self.name).heartbeat, self.heartbeat.beats))
        return real_add(self, outcome)

    monkeypatch.setattr(StoreSink, "add", slow_add)
    run_evaluation(small_manifest(suite), suite, "greedy", "m", tmp_path / "g.json", store=store)
    (before, during, beats), = seen
    assert beats >= 1 and during > before
    (name,) = store.journal_names()
    info = read_run_info(store, name)
    assert info.state == "complete" and info.heartbeat >= during
    assert liveness.effective_state(info, store.now()) == "complete"


def test_record_heartbeat_never_beats_into_an_ended_run(finished) -> None:  # noqa: ANN001
    """A late heartbeat finds the run complete and leaves its run-info alone."""
    store, _, name = finished
    key = store.refs.get(run_info_ref(name))
    assert liveness.record_heartbeat(store, name) is False
    assert store.refs.get(run_info_ref(name)) == key
    _as_running(store, name, 100)
    assert liveness.record_heartbeat(store, name) is True
    assert liveness.effective_state(read_run_info(store, name), store.now()) == "running"


def test_a_stale_journal_lease_is_taken_over_without_waiting_for_its_holder(s3_locator, monkeypatch) -> None:  # noqa: ANN001
    """A journal lease whose holder (in another PID namespace) stopped beating is stale after the TTL: the next
    writer takes it over at once, and gc removes stale leases it finds."""
    from emberbench.store import LockError, gc, s3_lease
    from emberbench.store import open_store as open_any

    holder = open_any(s3_locator, create=True)
    held = holder.open_journal("run-" + "a" * 64)
    key = holder.backend.leases._key("journal-run-" + "a" * 64)
    elsewhere = {"host": "elsewhere", "boot": "b", "pidns": "pid:[1]", "pid": 7, "start": "1"}
    holder.backend.client.put_object(Bucket=holder.backend.bucket, Key=key, Body=json.dumps(
        {"kind": "journal", "owner": "elsewhere:7:x", "identity": elsewhere}).encode())
    other = open_any(s3_locator)
    with pytest.raises(LockError, match="another writer holds this journal"):
        other.open_journal("run-" + "a" * 64)
    monkeypatch.setattr(s3_lease, "TTL_SECONDS", 1.0)
    time.sleep(2.2)
    taken = other.open_journal("run-" + "a" * 64)  # stale: no heartbeat for the TTL
    taken.close()
    holder.backend.client.put_object(Bucket=holder.backend.bucket, Key=key, Body=b"{}")
    time.sleep(2.2)
    report = gc(other, grace_seconds=0, apply=True)
    assert f"journal-run-{'a' * 64}" in report.released_leases
    del held


def _cut_off(store, endpoint: str) -> None:  # noqa: ANN001
    import boto3
    from botocore.config import Config

    client = boto3.session.Session().client("s3", endpoint_url=endpoint, region_name="us-east-1",
                                            config=Config(retries={"max_attempts": 1, "mode": "standard"},
                                                          connect_timeout=2, s3={"addressing_style": "path"}))
    store.backend.client = client
    store.backend.leases.client = client


def test_a_store_outage_names_the_server_in_the_runs_error(s3_locator, tmp_path, suite, monkeypatch) -> None:  # noqa: ANN001
    """The S3 server goes away just before a journal append: the run stops with an error naming the server,
    not 'a previous append failed; reopen the journal' (which closing the run used to raise instead)."""
    import socket

    from emberbench.store import StoreError

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    store = open_store(s3_locator)
    real_flush = StoreSink.flush_journal
    calls = []

    def flush_then_cut(self):  # noqa: ANN001, ANN202
        calls.append(1)
        if len(calls) == 2 and self._pending:
            _cut_off(store, dead)
        return real_flush(self)

    monkeypatch.setattr(StoreSink, "flush_journal", flush_then_cut)
    with pytest.raises(StoreError) as info:
        run_evaluation(small_manifest(suite), suite, "greedy", "m", tmp_path / "g.json", store=store,
                       checkpoint_every=2)
    message = str(info.value)
    assert f"cannot reach the S3 server at {dead}" in message and "reopen the journal" not in message, message


def test_an_s3_run_writes_heartbeats_on_the_store_clock(s3_locator, tmp_path, suite) -> None:  # noqa: ANN001
    """The heartbeat is the store's time (the server's Date), not the client's."""
    store = open_store(s3_locator)
    run_evaluation(small_manifest(suite), suite, "greedy", "m", tmp_path / "g.json", store=store)
    (name,) = store.journal_names()
    beat = liveness.seconds_of(read_run_info(store, name).heartbeat)
    assert abs(beat - store.now()) < 60
    assert Path(tmp_path / "g.json").exists()
