"""Who holds a lease: a process identity that is never just a pid.

A lease object names its holder so that a process of the same machine can
take over at once from a holder that provably no longer exists (a SIGKILLed
run), instead of waiting for the lease's heartbeat to go stale. A pid alone
cannot prove that: the same number means another process in another PID
namespace (a sidecar container, ``unshare -p``), after a reboot, or once the
kernel reuses it. So an identity holds the host name, the boot id, the PID
namespace, the pid and the process's start time, and a holder counts as dead
only when the first three are this process's own and the pid is gone or now
belongs to a process that started at another time. Anything else (another
host, another namespace, a system without ``/proc``) proves nothing, and the
lease is judged by its heartbeat alone (see :mod:`store.s3_lease`).
"""

from __future__ import annotations

import os
import socket
from typing import Any


def _read(path: str, limit: int = 4096) -> str | None:
    try:
        with open(path, "rb") as handle:
            return handle.read(limit).decode("ascii", "replace").strip()
    except OSError:
        return None


def _boot_id() -> str | None:
    return _read("/proc/sys/kernel/random/boot_id")


def _pid_namespace() -> str | None:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


def start_time(pid: int) -> str | None:
    """The start time of process ``pid`` in clock ticks since boot (field 22 of its stat), or None."""
    stat = _read(f"/proc/{pid}/stat")
    if not stat or ")" not in stat:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return fields[19] if len(fields) > 19 else None


def process_identity() -> dict[str, Any]:
    """This process's identity, as a lease body records it (no secret: names and numbers only)."""
    pid = os.getpid()
    return {"host": socket.gethostname(), "boot": _boot_id(), "pidns": _pid_namespace(), "pid": pid,
            "start": start_time(pid)}


def provably_dead(identity: Any) -> bool:
    """Whether the process ``identity`` names provably no longer exists (see the module docstring).

    False whenever it cannot be proven: another host, boot or PID namespace,
    a malformed identity, or this very process.
    """
    if not isinstance(identity, dict):
        return False
    pid, started = identity.get("pid"), identity.get("start")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0 or not isinstance(started, str):
        return False
    boot, namespace = _boot_id(), _pid_namespace()
    if boot is None or namespace is None or identity.get("host") != socket.gethostname() \
            or identity.get("boot") != boot or identity.get("pidns") != namespace or pid == os.getpid():
        return False
    now = start_time(pid)
    if now is None:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except OSError:
            return False
        return False  # it exists but its start time cannot be read: no proof
    return now != started


__all__ = ["process_identity", "provably_dead", "start_time"]
