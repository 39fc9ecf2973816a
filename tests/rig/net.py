"""iproute2 and /proc, the rig's only ways to touch the machine: namespaces, links, processes.

Every network device the rig makes lives inside a namespace it made (the
bridge in its own namespace, each veth pair between that namespace and a
host's), so deleting the rig's namespaces deletes every device; the root
namespace gets no device, no address and no route. Processes are found by the
namespace they run in (``ip netns pids``), never by name, and a recorded pid is
signalled only while ``/proc`` still shows the process that was recorded
(same start time), never a later process that reuses the number.
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from .errors import RigError, RigUnavailable


def require_tools() -> None:
    """Root, iproute2 and util-linux's ``unshare``, or :class:`RigUnavailable` saying which is missing."""
    if os.geteuid() != 0:
        raise RigUnavailable("needs root (network and mount namespaces)")
    for tool in ("ip", "unshare", "nsenter", "mount", "hostname"):
        if shutil.which(tool) is None:
            raise RigUnavailable(f"needs {tool!r} on PATH (iproute2, util-linux)")
    require_visible_code()


HIDDEN = ("/tmp", "/home/ember", "/srv")
"""Folders every test host mounts a private folder over (see :mod:`tests.rig.launch`)."""


def require_visible_code() -> None:
    """The hosts run this Python and this checkout from the machine's file system: neither may lie in a
    folder the hosts hide behind a private one, or :class:`RigUnavailable` says which and where."""
    project = Path(__file__).resolve().parents[2]
    for what, path in (("the Python running the tests", Path(sys.executable).parent), ("the project", project)):
        for hidden in HIDDEN:
            if path == Path(hidden) or Path(hidden) in path.parents:
                raise RigUnavailable(f"needs {what} outside {hidden} ({path} is there): every test host mounts a "
                                     f"private {hidden} over it; clone the project elsewhere")


def ip(*args: str, check: bool = True) -> str:
    """Run ``ip ARGS``; its stdout, or :class:`RigError` with its first line of stderr."""
    proc = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=False)
    if check and proc.returncode != 0:
        reason = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[0]
        raise RigError(f"ip {' '.join(args)}: {reason}")
    return proc.stdout


def namespaces() -> list[str]:
    """Names of the machine's named network namespaces."""
    return sorted(line.split()[0] for line in ip("netns", "list").splitlines() if line.strip())


def subnet_users(subnet: str) -> list[str]:
    """Addresses and routes of the root namespace that fall in ``subnet`` (the rig's must be unused)."""
    net = ipaddress.ip_network(subnet)
    found = []
    for line in ip("-o", "-4", "addr").splitlines():
        parts = line.split()
        if "inet" in parts and net.overlaps(ipaddress.ip_interface(parts[parts.index("inet") + 1]).network):
            found.append(line.split("\\")[0].strip())
    for line in ip("-4", "route").splitlines():
        target = line.split()[0] if line.strip() else ""
        if target not in ("", "default") and net.overlaps(ipaddress.ip_network(target, strict=False)):
            found.append(f"route {line.strip()}")
    return found


def netns_pids(netns: str) -> list[int]:
    """Pids of the live processes in ``netns`` (empty if the namespace is gone; zombies are not counted)."""
    out = ip("netns", "pids", netns, check=False)
    return sorted(pid for pid in (int(word) for word in out.split() if word.isdigit()) if start_time(pid) is not None)


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (``/proc/PID/stat`` field 22), None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None
    return None if fields[0] == "Z" else int(fields[19])


def parent(pid: int) -> int | None:
    """The process's parent pid, None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return int(handle.read().rsplit(")", 1)[1].split()[1])
    except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
        return None


def same_process(pid: int, started: int) -> bool:
    """True while ``pid`` is still the process that started at ``started`` (not a reused number)."""
    return start_time(pid) == started


def kill_recorded(processes: Iterable[tuple[int, int]]) -> None:
    """SIGKILL each ``(pid, start time)`` that is still that process."""
    for pid, started in processes:
        if same_process(pid, started):
            _signal(pid, signal.SIGKILL)


def empty_netns(netns: str, *, grace: float = 0.0, spare: frozenset[int] = frozenset(), timeout: float = 20.0) -> None:
    """End every process in ``netns``.

    With ``grace``, first SIGTERM to each process but ``spare`` and up to
    ``grace`` seconds for them to leave; then SIGKILL to all, until none is left.

    Raises:
        RigError: processes remain after ``timeout`` seconds.
    """
    if grace > 0:
        for pid in set(netns_pids(netns)) - spare:
            _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while set(netns_pids(netns)) - spare and time.monotonic() < deadline:
            time.sleep(0.1)
    deadline = time.monotonic() + timeout
    while pids := netns_pids(netns):  # a process may fork while we kill: repeat until none is left
        if time.monotonic() > deadline:
            raise RigError(f"processes {pids} in namespace {netns} survived SIGKILL for {timeout:g} s")
        for pid in pids:
            _signal(pid, signal.SIGKILL)
        time.sleep(0.05)


def children(pid: int) -> list[int]:
    """The process's children (empty if it is gone)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as handle:
            return [int(word) for word in handle.read().split()]
    except (FileNotFoundError, ProcessLookupError):
        return []


def delete_netns(netns: str) -> None:
    """End the namespace's processes, then delete it (and with it every device inside)."""
    if netns in namespaces():
        empty_netns(netns)
        ip("netns", "del", netns)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
