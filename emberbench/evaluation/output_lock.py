"""One writer per output: an exclusive lock on an output path for the whole life of a run.

The lock is an ``flock`` on a lock file beside the output, ``.<name>.lock``.
Who holds it is decided by the kernel (or, on NFS, by the server's lock
manager), never by what the file says:

* **Dead holders.** The kernel drops an ``flock`` when its holder dies, even by
  SIGKILL. A lock file left behind by a dead run is therefore simply free:
  the next run takes it, records itself in it, and reports the old content as
  :attr:`OutputLock.stale`. No pid is ever tested for liveness, so a reused pid
  or a holder on another host cannot make a free lock look held, or a held
  lock look free.
* **Holder details.** After taking the lock, the holder writes its pid, host
  and start time into the file, for the message a refused run prints (a
  refused run waits up to half a second for a holder that has only just
  taken the lock to write them; after that it says "holder unknown").
* **Removal.** On release the holder deletes the file *while still holding the
  lock*; anyone who opened the old file and then obtains its lock finds that
  the path no longer names that file and starts over, so two runs can never
  both hold "the" lock of one output.

On NFS, ``flock`` works across clients through the lock manager; mounts with
``nolock`` or ``local_lock=all`` make it local to one machine (docs/evaluation.md).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import stat
import time
from pathlib import Path
from typing import Any

from ..io.atomic import check_output_path
from ..errors import OutputLockedError, OutputPathError
from .run_info import utc_now
from ..io.versions import OUTPUT_LOCK_VERSION

LOCK_SUFFIX = ".lock"
_MAX_HOLDER_BYTES = 4096
_ATTEMPTS = 10
_HOLDER_WAIT_SECONDS = 0.5


def lock_path_of(output: str | os.PathLike[str]) -> Path:
    """The lock file of ``output``: ``.<name>.lock`` in the same folder."""
    out = Path(output)
    return out.with_name(f".{out.name}{LOCK_SUFFIX}")


class OutputLock:
    """An exclusive, non-blocking lock on one output path.

    Args:
        output: the path the run writes.
        what: how the path is named in messages (``"output"``).

    Use as a context manager, or call :meth:`acquire` and :meth:`release`.
    """

    def __init__(self, output: str | os.PathLike[str], *, what: str = "output") -> None:
        self.output = Path(output)
        self.path = lock_path_of(output)
        self.what = what
        self.stale: dict[str, Any] | None = None
        self._fd = -1

    @property
    def held(self) -> bool:
        """Whether this object holds the lock now."""
        return self._fd >= 0

    def acquire(self) -> OutputLock:
        """Take the lock at once or refuse.

        Raises:
            OutputLockedError: another live process (or another open lock in
                this process) holds it; the message names the holder.
            OutputPathError: the lock path is not a regular file (a link, a
                folder...), or cannot be created.
        """
        if self.held:
            return self
        for _ in range(_ATTEMPTS):
            fd = self._open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _wait_for_holder(fd)
                os.close(fd)
                raise OutputLockedError(self._refusal(holder), path=str(self.output), holder=holder) from None
            except BaseException:
                os.close(fd)
                raise
            if self._still_named(fd):
                self._fd = fd
                self._record_holder()
                return self
            os.close(fd)  # the holder before us removed this file on release: start over
        raise OutputPathError(f"{self.path}: the lock file keeps being replaced; is another program removing it?")

    def _open(self) -> int:
        check_output_path(self.path)
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(self.path, flags | os.O_NONBLOCK, 0o644)
        except OSError as exc:
            raise OutputPathError(f"{self.path}: cannot open the {self.what} lock: {exc.strerror or exc}") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise OutputPathError(f"{self.path}: the {self.what} lock must be a regular file")
        return fd

    def _still_named(self, fd: int) -> bool:
        try:
            now = os.lstat(self.path)
        except FileNotFoundError:
            return False
        mine = os.fstat(fd)
        return (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino)

    def _record_holder(self) -> None:
        previous = _read_holder(self._fd)
        self.stale = previous or None
        text = json.dumps({"output_lock": OUTPUT_LOCK_VERSION, "pid": os.getpid(), "host": socket.gethostname(),
                           "started": utc_now()}, sort_keys=True).encode()
        try:
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, text + b"\n", 0)
        except OSError:
            pass  # the details only serve messages; the flock is what excludes

    def _refusal(self, holder: dict[str, Any]) -> str:
        if holder:
            who = (f"pid {holder.get('pid', '?')} on host {holder.get('host', '?')}, "
                   f"started {holder.get('started', '?')}")
        else:
            who = "holder unknown"
        return (f"{self.output} is being written by another run ({who}); one run per {self.what} at a time "
                f"(lock {self.path})")

    def release(self) -> None:
        """Remove the lock file and release the lock. Safe to call twice."""
        if self._fd < 0:
            return
        try:
            if self._still_named(self._fd):
                os.unlink(self.path)
        except OSError:
            pass  # a lock file left behind is free once closed: the next run takes it over
        finally:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> OutputLock:
        return self.acquire()

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def _wait_for_holder(fd: int) -> dict[str, Any]:
    """The holder's details, waiting a moment for a holder that has just taken the lock to write them."""
    deadline = time.monotonic() + _HOLDER_WAIT_SECONDS
    while True:
        holder = _read_holder(fd)
        if holder or time.monotonic() >= deadline:
            return holder
        time.sleep(0.01)


def _read_holder(fd: int) -> dict[str, Any]:
    """What a lock file says about its holder; empty if unreadable or not yet written."""
    from ..io.input_policy import parse_json

    try:
        holder = parse_json(os.pread(fd, _MAX_HOLDER_BYTES, 0), where="lock file")
    except (OSError, ValueError):
        return {}
    if not isinstance(holder, dict) or holder.get("output_lock", OUTPUT_LOCK_VERSION) != OUTPUT_LOCK_VERSION:
        return {}  # not ours, or another version: name no holder rather than guess
    return {k: holder[k] for k in ("pid", "host", "started") if isinstance(holder.get(k), (int, str))}


__all__ = ["OutputLock", "lock_path_of"]
