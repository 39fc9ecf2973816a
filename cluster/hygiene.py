"""What an embedded Ray instance leaves behind: no process once its command ends, no readable token.

* :class:`ProcessGuard` marks every process of the instance (a variable in
  the environment they all inherit) and starts the reaper
  (:mod:`emberbench.cluster.reaper`) before ``ray.init``; closing the guard
  (or the owner dying) makes the reaper end whatever is left, so no Ray
  process outlives the command, whatever ended it.
* :func:`ensure_private_token` creates the token file Ray would otherwise
  create with the default permissions (``~/.ray`` 0755, ``auth_token``
  0644): here the folder is created 0700 and the file 0600. A token path
  that is a symbolic link (dangling or not) or anything but a regular file
  is refused: Ray writes a new token with ``open(path, "w")``, which follows
  a dangling link and creates its target readable by everyone.
* :func:`local_cpus`: the CPUs this process may run on, which bound
  ``--workers`` of an embedded instance.
"""

from __future__ import annotations

import os
import secrets
import stat
import subprocess
import sys
from pathlib import Path

from emberbench.errors import ClusterError

MARKER_VAR = "EMBERBENCH_RAY_OWNER"
REAPER = Path(__file__).with_name("reaper.py")
REAPER_WAIT_SECONDS = 10.0
TOKEN_VARS = ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")


def local_cpus() -> int:
    """CPUs this process may use (its affinity set; the machine's count where that is unknown)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class ProcessGuard:
    """Marks the processes an embedded Ray instance is about to start and ends them when closed.

    Use as a context manager around ``ray.init`` ... ``ray.shutdown``. While
    open, ``os.environ`` holds ``EMBERBENCH_RAY_OWNER=<unique value>``; every
    process started meanwhile inherits it. On close the variable is removed,
    the reaper is told (its pipe is closed) and awaited: when this returns,
    no marked process is left (the reaper sends SIGKILL, bounded by
    :data:`REAPER_WAIT_SECONDS`).
    """

    def __init__(self) -> None:
        self.marker = f"{MARKER_VAR}={os.getpid()}-{secrets.token_hex(8)}"
        self._reaper: subprocess.Popen[bytes] | None = None
        self._saved: str | None = None

    def __enter__(self) -> ProcessGuard:
        env = {k: v for k, v in os.environ.items() if k != MARKER_VAR}
        try:
            self._reaper = subprocess.Popen(
                [sys.executable, "-I", str(REAPER), self.marker], stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True,
            )
        except OSError as exc:
            raise ClusterError(f"cannot start the process guard of the embedded Ray instance: {exc}") from None
        self._saved = os.environ.get(MARKER_VAR)
        os.environ[MARKER_VAR] = self.marker.split("=", 1)[1]
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop marking new processes; have every marked process ended; wait for that (bounded)."""
        if self._saved is None:
            os.environ.pop(MARKER_VAR, None)
        else:
            os.environ[MARKER_VAR] = self._saved
        reaper, self._reaper = self._reaper, None
        if reaper is None:
            return
        try:
            reaper.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass
        try:
            reaper.wait(timeout=REAPER_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            reaper.kill()
            reaper.wait()


def ensure_private_token(home: Path | None = None) -> Path | None:
    """Create ``~/.ray/auth_token`` (folder 0700, file 0600) when Ray would otherwise generate it.

    Nothing is created when ``RAY_AUTH_TOKEN`` is set, when
    ``RAY_AUTH_TOKEN_PATH`` names the token file, or when the file exists (an
    existing folder keeps its permissions: it is the user's). The token is
    256 random bits in hex, the form Ray generates.

    Returns:
        The token file created, or None.

    Raises:
        ClusterError: the token path (``RAY_AUTH_TOKEN_PATH``, else
            ``~/.ray/auth_token``) is a symbolic link or not a regular file,
            ``RAY_AUTH_TOKEN_PATH`` names nothing (Ray would then write a new
            token to the default path), or the folder or file cannot be
            created.
    """
    if os.environ.get("RAY_AUTH_TOKEN"):
        return None
    named = os.environ.get("RAY_AUTH_TOKEN_PATH")
    if named:
        if not _regular_token_file(Path(named)):
            raise ClusterError(f"RAY_AUTH_TOKEN_PATH={named}: no such file (Ray would write a new token "
                               "to ~/.ray/auth_token instead)")
        return None
    folder = (home if home is not None else Path.home()) / ".ray"
    path = folder / "auth_token"
    if _regular_token_file(path):
        return None
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        return None  # another process made it meanwhile
    except OSError as exc:
        raise ClusterError(f"cannot create the Ray token file {path}: {exc.strerror or exc}") from None
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, secrets.token_hex(32).encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return path


def _regular_token_file(path: Path) -> bool:
    """True for a regular token file, False for nothing there.

    Raises:
        ClusterError: a symbolic link (Ray would write through a dangling
            one) or anything but a regular file is there.
    """
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise ClusterError(f"cannot check the Ray token file {path}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(mode):
        raise ClusterError(f"the Ray token file {path} is a symbolic link; EMBERBench refuses it (Ray writes a "
                           "new token through a dangling link, readable by everyone): put the token file itself "
                           "there, or set RAY_AUTH_TOKEN")
    if not stat.S_ISREG(mode):
        raise ClusterError(f"the Ray token file {path} is not a regular file")
    return True
