"""Ending every process an external agent started, including those that left its process group.

An agent runs in a process group of its own, and ending the group ends the
helpers it forked. A process that calls ``setsid()`` (or ``setpgid``) leaves
the group, and once its parent has exited (the classic double fork of a
daemon) it is no longer anyone's descendant either: nothing ties it to the
agent any more except what it inherited.

So every agent process is started with a mark in its environment
(:data:`MARK_VAR`, a random value per agent process, which says nothing
about the episode), and ending an agent (:func:`end_agent`) kills, in
rounds until none is left:

* the agent's process group;
* every live descendant of the agent (by parent pid, read from ``/proc``),
  wherever its group or session is;
* every process whose initial environment holds the mark.

Limits (docs/model-interface.md): a process that both detaches (new
session, parent gone) and replaces its environment when it executes a
program (``env -i``) carries no trace back to the agent and survives; so
does a process that changes its user (a setuid program), whose environment
this process may not read. Only a cgroup or a container would hold those.
Where ``/proc`` does not exist, only the process group is ended.
"""

from __future__ import annotations

import os
import secrets
import signal
import time

MARK_VAR = "EMBERBENCH_AGENT_MARK"
ROUNDS = 50
PAUSE_SECONDS = 0.02
_PROC = "/proc"


def new_mark() -> str:
    """A fresh value for :data:`MARK_VAR` (128 random bits in hex)."""
    return secrets.token_hex(16)


def _stat(pid: int | str) -> list[bytes] | None:
    """The fields of ``/proc/PID/stat`` after the command name (state first), or None if gone."""
    try:
        with open(f"{_PROC}/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _live_processes() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, start time) of every process that is not a zombie (empty where /proc is missing)."""
    table: dict[int, tuple[int, int]] = {}
    try:
        names = os.listdir(_PROC)
    except OSError:
        return table
    for name in names:
        if name.isdigit() and (fields := _stat(name)) is not None and len(fields) > 19 \
                and fields[0] not in (b"Z", b"X"):
            table[int(name)] = (int(fields[1]), int(fields[19]))
    return table


def _descendants(root: int, table: dict[int, tuple[int, int]]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _marked(mark: str, candidates: list[int]) -> set[int]:
    """The processes among ``candidates`` whose initial environment holds ``MARK_VAR=mark``."""
    needle = f"{MARK_VAR}={mark}".encode()
    me = os.getpid()
    found = set()
    for pid in candidates:
        if pid == me:
            continue
        try:
            with open(f"{_PROC}/{pid}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:  # gone, or another user's
            continue
        if needle in environ.split(b"\0"):
            found.add(pid)
    return found


def agent_processes(leader: int, mark: str) -> set[int]:
    """Live processes that belong to the agent ``leader`` started with ``mark`` (the leader included if live).

    Only processes started no earlier than the leader can carry its mark, so
    only their environments are read (the leader, even as a zombie, still
    has its start time in ``/proc``).
    """
    table = _live_processes()
    fields = _stat(leader)
    since = int(fields[19]) if fields is not None and len(fields) > 19 else 0
    found = _descendants(leader, table) | _marked(mark, [pid for pid, (_, start) in table.items() if start >= since])
    if leader in table:
        found.add(leader)
    return found


def end_agent(leader: int, mark: str, *, rounds: int = ROUNDS, pause: float = PAUSE_SECONDS) -> int:
    """SIGKILL the agent's group, its descendants and its marked processes, until none is left; return how many.

    ``leader`` must not have been reaped yet (it may be a zombie), so that
    neither its pid nor its group id can belong to an unrelated process.
    Bounded by ``rounds`` scans (a process that forks faster than it is
    killed could outlast them; each round kills what it finds).
    """
    try:
        os.killpg(leader, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    sent = 0
    for _ in range(rounds):
        victims = agent_processes(leader, mark)
        if not victims:
            break
        for pid in sorted(victims):
            try:
                os.kill(pid, signal.SIGKILL)
                sent += 1
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(pause)
    return sent
