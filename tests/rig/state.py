"""The rig's state file: every namespace and process it made, so that any later run can tear it down.

The file (``state.json`` under the rig root) is rewritten atomically after
every change, before the change can be lost: a namespace is recorded before it
is created, a process as soon as it has a pid. A rig that crashed (its owner
killed, the machine's tests interrupted) is thus torn down by the next
``down`` or ``up`` from this file alone, and whatever the file misses (a
namespace created in the instant before a crash) by the rig's name prefix.

Format ``rig_state`` 1.0::

    {"rig_state": "1.0", "prefix": "ebrig", "subnet": "10.213.47.0/24",
     "owner": {"pid": 4242, "start": 123456} | null,
     "namespaces": ["ebrig-net", "ebrig-s3", ...],
     "hosts": {"s3": {"netns": "ebrig-s3", "ip": "10.213.47.10", "port": "s3"}, ...},
     "processes": [{"host": "head", "role": "ray", "pid": 4300, "start": 123500, "log": "logs/head-ray.log"}]}

``owner`` is the process that tears the rig down when it ends (a test
session), or null for a rig left up on purpose (``cluster_rig.py up``).
``start`` is the process's start time in clock ticks (``/proc/PID/stat``), so
a recorded pid is never mistaken for a later process with the same number.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from emberbench.io.atomic import atomic_write_text
from emberbench.io.input_policy import SMALL_JSON, load_json

from .errors import RigError

FORMAT = "1.0"


@dataclass(frozen=True, slots=True)
class Host:
    """One test host: its namespace, its address, and its port on the bridge (in the bridge's namespace)."""

    netns: str
    ip: str
    port: str


@dataclass(frozen=True, slots=True)
class Process:
    """A process the rig started on a host, with what proves it is still that process."""

    host: str
    role: str
    pid: int
    start: int
    log: str


@dataclass(slots=True)
class RigState:
    """Everything a rig made that must be undone."""

    prefix: str
    subnet: str
    owner: dict[str, int] | None = None
    namespaces: list[str] = field(default_factory=list)
    hosts: dict[str, Host] = field(default_factory=dict)
    processes: list[Process] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"rig_state": FORMAT, "prefix": self.prefix, "subnet": self.subnet, "owner": self.owner,
                "namespaces": list(self.namespaces), "hosts": {k: asdict(v) for k, v in sorted(self.hosts.items())},
                "processes": [asdict(p) for p in self.processes]}


def save(path: Path, state: RigState) -> None:
    """Write the state atomically (a crash leaves the old file or the new one, never half of one)."""
    atomic_write_text(path, json.dumps(state.to_dict(), indent=1, sort_keys=True) + "\n")


def load(path: Path) -> RigState | None:
    """The state in ``path``, or None if there is no file.

    Raises:
        RigError: the file is not a regular file, too large (1 MiB), not
            strict JSON, of another format version, or has missing, unknown or
            ill-typed fields.
    """
    if not os.path.lexists(path):
        return None
    try:
        doc = load_json(path, SMALL_JSON, error=RigError)  # a regular file, capped, strict JSON
        if not isinstance(doc, dict) or doc.get("rig_state") != FORMAT:
            raise RigError(f"rig state {path}: not a rig_state {FORMAT} document")
        keys = {"rig_state", "prefix", "subnet", "owner", "namespaces", "hosts", "processes"}
        if set(doc) != keys:
            raise RigError(f"rig state {path}: fields {sorted(set(doc) ^ keys)} missing or unknown")
        owner = doc["owner"]
        if owner is not None and (set(owner) != {"pid", "start"} or not all(isinstance(v, int) for v in owner.values())):
            raise RigError(f"rig state {path}: bad owner {owner!r}")
        state = RigState(prefix=_text(doc["prefix"]), subnet=_text(doc["subnet"]), owner=owner,
                         namespaces=[_text(n) for n in doc["namespaces"]],
                         hosts={_text(k): Host(**v) for k, v in doc["hosts"].items()},
                         processes=[Process(**p) for p in doc["processes"]])
    except (TypeError, ValueError, AttributeError) as exc:
        raise RigError(f"rig state {path}: {exc}") from None
    for proc in state.processes:
        if not (isinstance(proc.pid, int) and isinstance(proc.start, int) and proc.pid > 1):
            raise RigError(f"rig state {path}: bad process entry {proc!r}")
    return state


def _text(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"expected a non-empty string, got {value!r}")
    return value
