"""How a test host boots and how a command runs on it: its own namespaces, folders and environment.

A host is booted once: a small init process (pid 1 of the host) in the host's
network namespace and in new mount, UTS and PID namespaces of its own, where

* the host's own folders from the rig root are bound over ``/tmp``, ``HOME``
  (``/home/ember``) and the working folder (``/srv``), and ``/dev/shm`` is a
  fresh tmpfs: no two hosts share a file there;
* the rest of the machine's file system is read-only (the Python environment,
  the project's code): nothing written there can reach another host;
* ``/proc`` shows the host's processes only, as on a machine of its own. (Ray
  finds the node a driver belongs to by listing the raylets it can see; with
  every host's raylet visible, a driver took the head's address as its own.)

Every command on the host then enters those namespaces (``nsenter``), with the
host's name as hostname and a clean environment built here, never inherited
from the caller (no credential, token or Ray variable leaks in). So the only
way from one host to another is the network, as between machines. Killing the
boot process (``unshare --kill-child``) kills the host's init, and with it
every process of the host.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

HOME = "/home/ember"
WORK = "/srv"
_BINDS = (("home", HOME), ("work", WORK), ("tmp", "/tmp"))
"""Per-host folder -> where the host sees it; ``/tmp`` last (the rig root may live under the machine's /tmp)."""
SHM_BYTES = 256 * 1024 * 1024

PYTHON = sys.executable
VENV_BIN = str(Path(PYTHON).parent)
"""The project's environment (``.venv/bin``), shared read-only by every host."""

S3_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
"""The S3 test server accepts any credentials; hosts without these have none at all."""

BOOTED = "host up"
_INIT = f"""
import os, time
print({BOOTED!r}, flush=True)
while True:  # pid 1 of the host: reap orphans
    try:
        os.wait()
    except ChildProcessError:
        time.sleep(1)
"""


@dataclass(frozen=True, slots=True)
class HostFolders:
    """A host's private folders under the rig root (``base/tmp``, ``base/home``, ``base/work``)."""

    base: Path

    def make(self) -> None:
        for name, _ in _BINDS:
            (self.base / name).mkdir(parents=True, exist_ok=True)
        (self.base / "home").chmod(0o700)
        (self.base / "tmp").chmod(0o1777)

    def outside(self, inside: str) -> Path:
        """The path, seen from the machine, of ``inside`` as the host sees it (``/srv/x`` -> ``base/work/x``)."""
        path = Path(inside)
        for name, mount in _BINDS:
            if path == Path(mount) or Path(mount) in path.parents:
                return self.base / name / path.relative_to(mount)
        raise ValueError(f"{inside} is not in a host's own folders ({', '.join(m for _, m in _BINDS)})")


def boot_command(netns: str, hostname: str, folders: HostFolders, rig_root: Path) -> list[str]:
    """The machine's command line that boots a host (see the module docstring); it prints :data:`BOOTED`."""
    q = shlex.quote
    steps = ["set -e", f"hostname {q(hostname)}",
             "mount -t tmpfs -o size=1m,mode=755 ebrig-home /home", f"mkdir {HOME}"]
    steps += [f"mount --bind {q(str(folders.base / name))} {mount}" for name, mount in _BINDS]
    steps += [f"mount -t tmpfs -o size={SHM_BYTES},mode=1777 ebrig-shm /dev/shm",
              # A rig root outside /tmp would still be visible (read-only) to every host: hide it.
              f"if [ -d {q(str(rig_root))} ]; then mount -t tmpfs -o size=4k,mode=700 ebrig-hidden {q(str(rig_root))}; fi",
              "mount -o remount,bind,ro /", f"cd {WORK}", f"exec {q(PYTHON)} -c {q(_INIT)}"]
    return ["ip", "netns", "exec", netns, "unshare", "--mount", "--uts", "--pid", "--fork", "--kill-child",
            "--mount-proc", "--propagation", "private", "--", "/bin/sh", "-c", "; ".join(steps)]


def exec_command(init_pid: int, argv: list[str]) -> list[str]:
    """The machine's command line that runs ``argv`` on the host whose init is ``init_pid``, in ``/srv``."""
    return ["nsenter", "--target", str(init_pid), "--net", "--mount", "--uts", "--pid", "--",
            "/bin/sh", "-c", f'cd {WORK} && exec "$@"', "sh", *argv]


def host_env(*, credentials: bool, extra: dict[str, str] | None = None) -> dict[str, str]:
    """A host's environment: the shared Python environment first, token auth on, and S3 credentials or none."""
    env = {"PATH": f"{VENV_BIN}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
           "HOME": HOME, "TMPDIR": "/tmp", "LANG": "C.UTF-8", "USER": "root", "LOGNAME": "root",
           "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1",
           "RAY_AUTH_MODE": "token", "RAY_USAGE_STATS_ENABLED": "0",
           "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}
    if credentials:
        env.update(S3_CREDENTIALS)
    env.update(extra or {})
    return env
