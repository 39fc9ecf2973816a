"""Ends every process of an embedded Ray instance once the command that owns it is gone.

An embedded instance starts a GCS server and a raylet, which start workers,
a dashboard agent and a runtime-env agent. When the owning command ends
normally it stops them (``ray.shutdown``); when it is killed (SIGKILL, the
OOM killer) nothing in it runs, and Ray's agents used to live on for a minute
or two, trying to report the raylet's death to a GCS that was gone too.

So before the instance starts, the owner sets a marker variable in its
environment (every Ray process inherits it) and starts this script, stdlib
only, in a session of its own, holding the read end of a pipe whose write end
only the owner has. End of file on the pipe means the owner closed it (after
``ray.shutdown``) or died: the script then sends SIGKILL to every process
whose environment carries the marker, until none is left (at most about five
seconds), and exits. A process that replaced its environment, or the script
itself killed by hand, are beyond this (docs/cluster.md).

Usage: ``python -I reaper.py NAME=VALUE`` (the marker), stdin the pipe.
"""

from __future__ import annotations

import os
import signal
import sys
import time

ROUNDS = 50
PAUSE_SECONDS = 0.1


def marked_pids(marker: bytes) -> list[int]:
    """Processes (other than this one) whose initial environment holds ``marker`` (``NAME=VALUE``)."""
    me = os.getpid()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:  # gone, or not ours to read
            continue
        if marker in environ.split(b"\0"):
            found.append(int(name))
    return found


def reap(marker: bytes, *, rounds: int = ROUNDS, pause: float = PAUSE_SECONDS) -> int:
    """SIGKILL every marked process, again until none is left or ``rounds`` are done; return how many were sent."""
    sent = 0
    for _ in range(rounds):
        pids = marked_pids(marker)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                sent += 1
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(pause)
    return sent


def main(argv: list[str]) -> int:
    """Wait for end of file on stdin, then reap the processes marked ``argv[1]``."""
    if len(argv) != 2 or "=" not in argv[1]:
        print("usage: reaper.py NAME=VALUE", file=sys.stderr)
        return 2
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the owner, which then closes the pipe
    while sys.stdin.buffer.read(65536):
        pass
    reap(argv[1].encode())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
