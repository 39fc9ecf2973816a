"""Record puts through the helper process: same bytes, same errors, nothing left running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from emberbench.evaluation import record_puts
from emberbench.evaluation.record_puts import HelperPuts, ThreadPuts, record_putter
from emberbench.evaluation.runner import run_evaluation
from emberbench.store import StoreIOError, key_of, open_store
from tests.helpers import process_alive, wait_gone
from tests.run_support import small_manifest


class _Elsewhere:
    """A store seen through another locator: the helper opens ``locator``, this process uses ``store``."""

    def __init__(self, store, locator: str, put=None) -> None:  # noqa: ANN001
        self._store, self.locator, self._put = store, locator, put
        self.backend = store.backend
        self.noted: list[str] = []
        self.put_here: list[str] = []

    def put(self, record: bytes, *, key: str) -> str:
        self.put_here.append(key)
        return (self._put or self._store.put)(record, key=key)

    def lease_epoch(self) -> int | None:
        return self._store.lease_epoch()

    def note_stored(self, key: str, raw_length: int, epoch: int | None) -> None:
        self.noted.append(key)
        self._store.note_stored(key, raw_length, epoch)


def test_putter_is_the_helper_only_for_large_runs_on_a_remote_store(tmp_path, s3_locator) -> None:  # noqa: ANN001
    """Local folder or a small run: threads; a remote store from HELPER_FROM episodes: the helper."""
    local, remote = open_store(tmp_path / "s", create=True), open_store(s3_locator, create=True)
    for store, episodes, kind in ((local, 10_000, ThreadPuts), (remote, record_puts.HELPER_FROM - 1, ThreadPuts),
                                  (remote, record_puts.HELPER_FROM, HelperPuts)):
        with record_putter(store, episodes) as putter:
            assert type(putter) is kind
    remote.close()


def test_run_through_the_helper_is_byte_identical(tmp_path, suite, s3_locator, monkeypatch) -> None:  # noqa: ANN001
    """An S3 run whose records go through the helper writes the bytes of a run without a store."""
    monkeypatch.setattr(record_puts, "HELPER_FROM", 1)
    manifest = small_manifest(suite, seeds=(3, 11, 12))
    started: list[HelperPuts] = []
    real_init = HelperPuts.__init__

    def spy(self, store) -> None:  # noqa: ANN001
        real_init(self, store)
        started.append(self)

    monkeypatch.setattr(HelperPuts, "__init__", spy)
    run_evaluation(manifest, suite, "greedy", "m", tmp_path / "plain.json")
    store = open_store(s3_locator, create=True)
    run_evaluation(manifest, suite, "greedy", "m", tmp_path / "s3.json", store=store)
    assert len(started) == 1 and started[0]._proc is None  # the helper was used, and ended with the run
    assert (tmp_path / "s3.json").read_bytes() == (tmp_path / "plain.json").read_bytes()
    (name,) = store.journal_names()
    digests = [e.data["digest"] for e in store.read_journal(name).entries if "digest" in e.data]
    assert len(digests) == len(manifest.episodes) and all(store.has(d) for d in digests)
    store.close()


def test_helper_puts_count_as_this_stores_own(s3_locator) -> None:  # noqa: ANN001
    """A record the helper stored is known here without a request (has() answers from memory)."""
    store = open_store(s3_locator, create=True)
    record = b'{"record":1}'
    putter = HelperPuts(store)
    try:
        putter.result(putter.submit(record, key_of(record)))
    finally:
        putter.close()
    assert store._is_fresh(key_of(record))
    store.close()


def test_a_put_the_helper_cannot_make_is_made_here(s3_locator) -> None:  # noqa: ANN001
    """A helper that cannot open its store answers every put with a failure; each is then made here."""
    store = open_store(s3_locator, create=True)
    missing = s3_locator.replace("?", "-no-such-store?", 1)
    seen = _Elsewhere(store, missing)
    putter = HelperPuts(seen)
    records = [f'{{"record":{i}}}'.encode() for i in range(5)]
    try:
        for ticket in [putter.submit(r, key_of(r)) for r in records]:
            putter.result(ticket)
    finally:
        putter.close()
    assert seen.put_here == [key_of(r) for r in records] and seen.noted == []
    assert all(store.has(key_of(r)) for r in records)
    store.close()


def test_the_error_a_run_stops_on_is_its_own_puts(s3_locator) -> None:  # noqa: ANN001
    """When the helper failed and this process's put fails too, its own error (class and text) is raised."""
    store = open_store(s3_locator, create=True)
    fault = StoreIOError("put", "objects/ab/cd", OSError(5, "S3 InternalError"))

    def failing(record: bytes, *, key: str) -> str:
        raise fault

    putter = HelperPuts(_Elsewhere(store, s3_locator.replace("?", "-no-such-store?", 1), put=failing))
    try:
        with pytest.raises(StoreIOError) as info:
            putter.result(putter.submit(b"{}", key_of(b"{}")))
        assert info.value is fault
    finally:
        putter.close()
    store.close()


def test_puts_carry_on_here_when_the_helper_dies(s3_locator) -> None:  # noqa: ANN001
    """The helper killed mid-run: the puts it did not confirm, and all later ones, are made here."""
    store = open_store(s3_locator, create=True)
    seen = _Elsewhere(store, s3_locator)
    putter = HelperPuts(seen)
    records = [f'{{"record":{i}}}'.encode() for i in range(8)]
    try:
        putter.result(putter.submit(records[0], key_of(records[0])))
        pid = putter._proc.pid
        os.kill(pid, signal.SIGKILL)
        assert wait_gone(pid, 15.0)
        for ticket in [putter.submit(r, key_of(r)) for r in records[1:]]:
            putter.result(ticket)
    finally:
        putter.close()
    assert seen.noted == [key_of(records[0])]
    assert seen.put_here == [key_of(r) for r in records[1:]]
    assert all(store.has(key_of(r)) for r in records)
    store.close()


def test_helper_ends_when_its_run_is_killed(tmp_path, s3_locator) -> None:  # noqa: ANN001
    """SIGKILL of the process that started the helper: the helper reads the end of its input and exits."""
    script = tmp_path / "starter.py"
    script.write_text(
        "import sys, time\n"
        "from emberbench.evaluation.record_puts import HelperPuts\n"
        "from emberbench.store import key_of, open_store\n"
        "store = open_store(sys.argv[1], create=True)\n"
        "putter = HelperPuts(store)\n"
        "putter.result(putter.submit(b'{}', key_of(b'{}')))\n"
        "print(putter._proc.pid, flush=True)\n"
        "time.sleep(120)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    starter = subprocess.Popen([sys.executable, str(script), s3_locator], stdout=subprocess.PIPE, env=env)
    try:
        helper = int(starter.stdout.readline())
        assert process_alive(helper)
        starter.kill()
        starter.wait(10)
        assert wait_gone(helper, 15.0), f"helper {helper} still running after its starter was killed"
    finally:
        if starter.poll() is None:
            starter.kill()
        starter.stdout.close()
