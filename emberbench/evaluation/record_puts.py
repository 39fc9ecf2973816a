"""Where a store-backed in-process run puts its records while the next episodes play.

:func:`emberbench.evaluation.runner.stored_behind` hands each played record to a
*putter* and takes its outcome back only once the putter says the record is
stored. Two putters, one contract:

* :class:`ThreadPuts`: a few threads in this process. For a local folder a
  put is mostly an fsync, which leaves the interpreter free.
* :class:`HelperPuts`: a helper process (``python -m emberbench.evaluation.record_puts``)
  with its own threads and its own connection to the store. For a remote
  store (S3) each put is an HTTP request whose client work is about 4 ms of
  Python per record; in this process that time would be taken from playing
  (one interpreter lock), in the helper it runs on another core.

The helper only saves time; it decides nothing. A put the helper reports as
failed, and every put once the helper is gone, is made again here with
:meth:`Store.put <emberbench.store.Store.put>` (puts are idempotent), so the
error a run stops on is always the one its own put raises, with its own class
and message. The helper reads records from its stdin and answers on its
stdout (msgpack frames): when this process ends, however it ends, the helper
reads the end of its input, finishes the puts it holds, releases its store
lease and exits.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

PUT_THREADS = 4
"""Record puts in flight (threads in this process, or in the helper)."""
HELPER_FROM = 200
"""Scheduled episodes from which a run on a remote store puts its records through the helper."""
_HELPER_STOP_SECONDS = 60.0
_MAX_MESSAGE = 1 << 30


class ThreadPuts:
    """Record puts on :data:`PUT_THREADS` threads of this process."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self._pool = ThreadPoolExecutor(max_workers=PUT_THREADS, thread_name_prefix="emberbench-put")

    def submit(self, record: bytes, key: str) -> Future[Any]:
        """Start putting ``record`` (whose SHA-256 is ``key``)."""
        return self._pool.submit(self._store.put, record, key=key)

    def result(self, ticket: Future[Any]) -> None:
        """Wait until that record is stored; raises what the put raised."""
        ticket.result()

    def close(self) -> None:
        self._pool.shutdown(wait=True)


class HelperPuts:
    """Record puts made by a helper process (see the module docstring)."""

    def __init__(self, store: Any) -> None:
        import msgpack

        self._store = store
        env = dict(os.environ)
        # The helper imports this package exactly as this process found it.
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
            [sys.executable, "-m", "emberbench.evaluation.record_puts", store.locator],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self._unpacker = msgpack.Unpacker(max_buffer_size=1 << 20)
        self._poller = select.poll()  # not select(): this process may hold fds above FD_SETSIZE
        self._poller.register(self._proc.stdout.fileno(), select.POLLIN)  # type: ignore[union-attr] - a PIPE
        self._next = 0
        self._answers: dict[int, str | None] = {}
        self._gone = False

    def submit(self, record: bytes, key: str) -> tuple[int, bytes, str, int | None]:
        """Hand ``record`` to the helper (or note it for this process if the helper is gone)."""
        import msgpack

        epoch = self._store.lease_epoch()  # before the put is asked for: see Store.note_stored
        seq = self._next
        self._next += 1
        if not self._gone and self._proc is not None and self._proc.stdin is not None:
            try:
                self._proc.stdin.write(msgpack.packb([seq, key, record]))
                self._proc.stdin.flush()
            except (OSError, ValueError):
                self._gone = True
        return seq, record, key, epoch

    def result(self, ticket: tuple[int, bytes, str, int | None]) -> None:
        """Wait until that record is stored; a put the helper did not confirm is made here."""
        seq, record, key, epoch = ticket
        if self._answer(seq) is None:
            self._store.note_stored(key, len(record), epoch)
            return
        self._store.put(record, key=key)

    def _answer(self, seq: int) -> str | None:
        """The helper's answer for ``seq``: None when stored, else why not."""
        while seq not in self._answers:
            if self._gone or self._proc is None or self._proc.stdout is None:
                return "the helper is gone"
            fd = self._proc.stdout.fileno()
            if not self._poller.poll(1000):
                if self._proc.poll() is not None:
                    self._gone = True
                continue
            data = os.read(fd, 1 << 16)
            if not data:
                self._gone = True
                continue
            try:
                self._unpacker.feed(data)
                answers = list(self._unpacker)
            except Exception:  # noqa: BLE001 - not the helper speaking: trust nothing more from it
                self._gone = True
                continue
            for answer in answers:
                if (not isinstance(answer, list) or len(answer) != 2 or not isinstance(answer[0], int)
                        or not (answer[1] is None or isinstance(answer[1], str))):
                    self._gone = True
                    break
                self._answers[answer[0]] = answer[1]
        return self._answers.pop(seq)

    def close(self) -> None:
        """End the helper: it finishes the puts it holds, releases its lease and exits."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(_HELPER_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        finally:
            if proc.stdout is not None:
                proc.stdout.close()


@contextmanager
def record_putter(store: Any, episodes: int) -> Iterator[ThreadPuts | HelperPuts]:
    """The putter for a run of ``episodes`` into ``store`` (the helper for large runs on remote stores)."""
    putter: ThreadPuts | HelperPuts | None = None
    if getattr(getattr(store, "backend", None), "remote", False) and episodes >= HELPER_FROM:
        try:
            putter = HelperPuts(store)
        except OSError:  # no process to be had (limits, memory): the threads do the same, slower
            putter = None
    if putter is None:
        putter = ThreadPuts(store)
    try:
        yield putter
    finally:
        putter.close()


def _serve(locator: str) -> int:
    """The helper: put every record read from stdin into the store at ``locator``; answer each on stdout."""
    import signal

    import msgpack

    from emberbench.store import open_store

    # Ctrl-C reaches the whole process group: the run decides, and the helper
    # ends when its input does (after the puts it holds).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    out = sys.stdout.buffer
    lock = threading.Lock()

    def answer(seq: int, error: str | None) -> None:
        with lock:
            out.write(msgpack.packb([seq, None if error is None else error[:1000]]))
            out.flush()

    try:
        store = open_store(locator)
    except Exception as exc:  # noqa: BLE001 - every put is answered with it; the run puts them itself
        store, failure = None, f"{type(exc).__name__}: {exc}"

    def put(seq: int, key: str, record: bytes) -> None:
        if store is None:
            answer(seq, failure)
            return
        try:
            store.put(record, key=key)
        except Exception as exc:  # noqa: BLE001 - reported; the run makes this put again itself
            answer(seq, f"{type(exc).__name__}: {exc}")
        else:
            answer(seq, None)

    unpacker = msgpack.Unpacker(max_buffer_size=_MAX_MESSAGE)
    stdin = sys.stdin.fileno()
    try:
        with ThreadPoolExecutor(max_workers=PUT_THREADS, thread_name_prefix="emberbench-put") as pool:
            # os.read returns what has arrived: a buffered read would wait for a full buffer.
            while data := os.read(stdin, 1 << 20):
                unpacker.feed(data)
                for seq, key, record in unpacker:
                    pool.submit(put, seq, key, record)
    finally:
        if store is not None:
            store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(_serve(sys.argv[1]))
