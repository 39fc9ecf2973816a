"""What the multi-host tests share: the manifest on the client host, commands, the S3 request log, waiting.

Every run of these tests plays :data:`SEEDS` on the public suite (120
episodes, about 4 s of play on the two worker hosts): long enough that a
fault injected once the first records reach the store lands mid-run, short
enough to keep the rig's tests within a few minutes. The in-process artifact
of that run (``reference`` in conftest.py) is computed once per session.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from emberbench.results.manifest import write_manifest
from tests.rig import BUCKET, Rig
from tests.rig.rig import kill_group

SEEDS = list(range(10))
MANIFEST = "/srv/m120.json"
_REQUEST = re.compile(r'^(\S+) - - \[[^]]*\] "(\w+) /' + BUCKET + r'/([^ ?]+)\S* HTTP/[0-9.]+" (\d+)')


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def put_manifest(rig: Rig, manifest, path: str = MANIFEST) -> str:  # noqa: ANN001
    """Write the manifest into the client host's working folder (as a user would); its path there."""
    write_manifest(manifest, rig.host_path("client", path))
    return path


def run_argv(rig: Rig, out: str, prefix: str, *extra: str, policy: str = "greedy", model_id: str = "g",
             manifest: str = MANIFEST) -> list[str]:
    """``emberbench run`` from the client host into the S3 store ``prefix`` of the rig."""
    return ["emberbench", "run", "--address", rig.ray_address, "--manifest", manifest, "--policy", policy,
            "--model-id", model_id, "--out", out, "--store", rig.s3_locator(prefix), *extra]


@dataclass(frozen=True, slots=True)
class Request:
    """One request in the S3 server's log: who (the client's address), what, on which object, with what status."""

    client: str
    method: str
    key: str
    status: int


class S3Log:
    """The S3 host's request log from the moment this object was made (one line per request, moto's format)."""

    def __init__(self, rig: Rig) -> None:
        self.path = rig.root / "logs" / "s3-s3.log"
        self.start = self.path.stat().st_size

    def requests(self) -> list[Request]:
        with open(self.path, "rb") as handle:
            handle.seek(self.start)
            text = handle.read().decode(errors="replace")
        found = []
        for line in text.splitlines():
            match = _REQUEST.match(line)
            if match:
                found.append(Request(match[1], match[2], match[3], int(match[4])))
        return found

    def objects(self, prefix: str, method: str = "PUT") -> list[Request]:
        """Requests ``method`` on the store objects (records, artifacts) under ``prefix``."""
        return [r for r in self.requests() if r.method == method and r.key.startswith(f"{prefix}/objects/")]

    def journal_segments(self, prefix: str) -> list[Request]:
        """Journal segments written under ``prefix`` (segment 0 is the file header, 1 the run header)."""
        return [r for r in self.requests()
                if r.method == "PUT" and re.fullmatch(rf"{prefix}/journals/run-[0-9a-f]{{64}}/[0-9]+", r.key)]


def object_key(request: Request, prefix: str) -> str:
    """The store key (a SHA-256) of an object request under ``prefix``."""
    return request.key.removeprefix(f"{prefix}/objects/").replace("/", "")


def wait_for(what: str, condition: Callable[[], object], *, timeout: float, proc: subprocess.Popen[str] | None = None,
             poll: float = 0.1) -> object:
    """Wait until ``condition()`` is true (its value); fail naming ``what`` after ``timeout`` s or if ``proc`` ends."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"the run ended ({proc.returncode}) before {what}: {out[-500:]} {err[-1500:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {timeout:g} s")
        time.sleep(poll)


def finish(proc: subprocess.Popen[str], timeout: float) -> tuple[int, str, str]:
    """Wait for a command started with ``rig.popen``; kill its process group if it outlives ``timeout``."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        raise AssertionError(f"the run did not end within {timeout:g} s") from None
    return proc.returncode, out, err


def client_file(rig: Rig, path: str) -> Path:
    return rig.host_path("client", path)
