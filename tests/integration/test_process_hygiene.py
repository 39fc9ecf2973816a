"""Nothing outlives an `emberbench` command that ran embedded Ray, however it ended; joining is bounded.

Each test runs the CLI in a child process with a fresh HOME (so the token file
is made by this run) and finds the Ray processes of that child by the marker
every one of them inherits (``EMBERBENCH_RAY_OWNER=<child pid>-...``), never by
name. Marked ``ray`` (they start Ray) and ``slow`` (tens of seconds each).
"""

from __future__ import annotations

import os
import secrets
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from emberbench.cluster.hygiene import MARKER_VAR
from tests.integration.conftest import subprocess_env

pytestmark = [pytest.mark.ray, pytest.mark.slow]

BOUND_SECONDS = 15.0
"""How long Ray's processes may take to be gone once the command has ended."""


def owned_by(pid: int) -> list[int]:
    """Processes whose environment says they belong to the embedded Ray instance of command ``pid``."""
    prefix = f"{MARKER_VAR}={pid}-".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:
                if any(item.startswith(prefix) for item in handle.read().split(b"\0")):
                    found.append(int(name))
        except OSError:
            continue
    return found


def _wait_for(condition, seconds: float) -> bool:  # noqa: ANN001
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def _kill_leftovers(pid: int) -> None:
    for leftover in owned_by(pid):  # only if the test failed: never leave them running
        try:
            os.kill(leftover, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture
def run_command(tmp_path: Path, suite):  # noqa: ANN001, ANN201
    """A long `run` (480 episodes) on embedded Ray (2 workers, no store), in a fresh HOME."""
    from emberbench.results.manifest import build_manifest, write_manifest

    write_manifest(build_manifest(suite, list(range(40))), tmp_path / "m.json")
    home = tmp_path / "home"
    home.mkdir()
    env = subprocess_env()
    for name in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", MARKER_VAR):
        env.pop(name, None)
    env["HOME"] = str(home)
    cmd = [sys.executable, "-m", "emberbench.cli.main", "run", "--manifest", str(tmp_path / "m.json"),
           "--policy", "fire-aware", "--model-id", "f", "--out", str(tmp_path / "r.json"), "--no-store",
           "--workers", "2"]
    return cmd, env, home


def _start(cmd: list[str], env: dict[str, str], tmp_path: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(cmd, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def test_sigterm_stops_a_ray_run_cleanly_and_leaves_no_process(run_command, tmp_path: Path) -> None:  # noqa: ANN001
    """Issue 12 (defects 6, 7): SIGTERM in the middle of a Ray run exits 143 with the one line `terminated` (no
    native stack dump), and within a bounded time no process of its Ray instance is left; the token it made
    is private (folder 0700, file 0600)."""
    cmd, env, home = run_command
    child = _start(cmd, env, tmp_path)
    try:
        started = _wait_for(lambda: (tmp_path / "r.json").exists() and len(owned_by(child.pid)) >= 5, 180)
        assert started, "the run did not get going"
        child.send_signal(signal.SIGTERM)
        _, err = child.communicate(timeout=120)
        assert child.returncode == 143, err.decode()
        lines = [line for line in err.decode().splitlines() if line.strip()]
        assert lines == ["terminated"], err.decode()
        assert _wait_for(lambda: not owned_by(child.pid), BOUND_SECONDS), owned_by(child.pid)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        _kill_leftovers(child.pid)
    assert stat.S_IMODE(os.stat(home / ".ray").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(home / ".ray" / "auth_token").st_mode) == 0o600


def test_a_killed_coordinator_leaves_no_ray_process(run_command, tmp_path: Path) -> None:  # noqa: ANN001
    """Issue 12 (defect 7): after a SIGKILL of the command (nothing in it runs), every process of its embedded
    Ray instance, the dashboard and runtime-env agents included, is gone within a bounded time (they used to
    live on for 60-120 s)."""
    cmd, env, _ = run_command
    child = _start(cmd, env, tmp_path)
    try:
        assert _wait_for(lambda: (tmp_path / "r.json").exists() and len(owned_by(child.pid)) >= 5, 180)
        child.kill()
        child.wait()
        assert _wait_for(lambda: not owned_by(child.pid), BOUND_SECONDS), owned_by(child.pid)
    finally:
        _kill_leftovers(child.pid)


def test_sigterm_while_ray_starts_leaves_no_process(run_command, tmp_path: Path) -> None:  # noqa: ANN001
    """Issue 12 (defect 7): a start interrupted half-way (the first Ray process is up, ray.init has not
    returned) ends with `terminated`, status 143, and leaves nothing behind."""
    cmd, env, _ = run_command
    child = _start(cmd, env, tmp_path)
    try:
        assert _wait_for(lambda: bool(owned_by(child.pid)), 180)
        child.send_signal(signal.SIGTERM)
        _, err = child.communicate(timeout=120)
        assert child.returncode == 143 and err.decode().split() == ["terminated"], err.decode()
        assert _wait_for(lambda: not owned_by(child.pid), BOUND_SECONDS), owned_by(child.pid)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        _kill_leftovers(child.pid)


UNREACHABLE = [
    ("workers", ["run", "--manifest", "{m}", "--policy", "greedy", "--model-id", "g", "--out", "{out}",
                 "--no-store", "--workers", "1000000"], "--workers 1000000 exceeds the"),
    ("run address", ["run", "--manifest", "{m}", "--policy", "greedy", "--model-id", "g", "--out", "{out}",
                     "--no-store", "--address", "127.0.0.1:1"], "cannot join the Ray cluster at 127.0.0.1:1"),
    ("verify address", ["verify", "{out}", "--address", "127.0.0.1:1"], "cannot join the Ray cluster at 127.0.0.1:1"),
    ("submit address", ["submit", "--address", "127.0.0.1:1", "--", "verify", "g.json"],
     "cannot reach the Ray job server at http://127.0.0.1:1"),
]


@pytest.mark.parametrize(("name", "args", "message"), UNREACHABLE, ids=[case[0] for case in UNREACHABLE])
def test_unreachable_cluster_and_too_many_workers_fail_fast_in_one_line(name: str, args: list[str], message: str,
                                                                       tmp_path: Path, dev_manifest) -> None:  # noqa: ANN001
    """Issue 12 (defects 3, 7) and issue 16 (item 5): a wrong --address fails within EMBERBENCH_CONNECT_TIMEOUT
    (here 3 s) plus start-up, with one line and no raw Ray log lines, instead of hanging for minutes; --workers
    beyond the machine's CPUs is refused before Ray starts. Nothing is left running."""
    from emberbench.results.manifest import write_manifest

    write_manifest(dev_manifest, tmp_path / "m.json")
    if name == "verify address":  # verify reads its file (and finds its suite) before joining a cluster
        from emberbench.evaluation.runner import run_evaluation
        from emberbench.sim.suite import load_suite

        run_evaluation(dev_manifest, load_suite(), "stay", "g", tmp_path / "r.json")
    else:
        (tmp_path / "r.json").write_bytes(b"{}")
    env = subprocess_env()
    env.pop("RAY_AUTH_TOKEN_PATH", None)
    env.update({"RAY_AUTH_TOKEN": secrets.token_hex(32), "EMBERBENCH_CONNECT_TIMEOUT": "3", "HOME": str(tmp_path)})
    filled = [a.replace("{m}", str(tmp_path / "m.json")).replace("{out}", str(tmp_path / "r.json")) for a in args]
    start = time.monotonic()
    child = subprocess.Popen([sys.executable, "-m", "emberbench.cli.main", *filled], env=env, cwd=tmp_path,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    elapsed = time.monotonic() - start
    lines = [line for line in err.decode().splitlines() if line.strip()]
    assert child.returncode == 1 and len(lines) == 1 and message in lines[0], err.decode()
    assert elapsed < 30, f"took {elapsed:.0f} s"
    assert not owned_by(child.pid)
