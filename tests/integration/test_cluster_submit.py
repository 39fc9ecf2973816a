"""``emberbench submit`` end to end: a head node started here, a Ray Job, its logs, its artifact.

The head node runs ``ray start --head --block`` on 127.0.0.1 with free ports
and the test session's token, and is stopped through its own process group
(never ``ray stop``, which would stop every Ray instance of the machine).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import ROOT, free_port, subprocess_env

pytestmark = [pytest.mark.ray, pytest.mark.slow]


def _start_head(tmp_path: Path) -> tuple[subprocess.Popen, str]:
    ports = {name: free_port() for name in ("port", "dashboard-port", "dashboard-agent-listen-port",
                                            "dashboard-agent-grpc-port", "metrics-export-port",
                                            "runtime-env-agent-port", "ray-client-server-port",
                                            "node-manager-port", "object-manager-port")}
    cmd = [str(Path(sys.executable).parent / "ray"), "start", "--head", "--block", "--node-ip-address", "127.0.0.1",
           "--dashboard-host", "127.0.0.1", "--include-dashboard", "true", "--num-cpus", "2",
           "--object-store-memory", str(256 * 1024 * 1024), "--disable-usage-stats",
           *[f"--{name}={port}" for name, port in ports.items()]]
    head = subprocess.Popen(cmd, env=subprocess_env(), cwd=tmp_path, stdout=(tmp_path / "head.log").open("wb"),
                            stderr=subprocess.STDOUT, start_new_session=True)
    return head, f"http://127.0.0.1:{ports['dashboard-port']}"


def _stop_head(head: subprocess.Popen) -> None:
    """SIGTERM the head's process group (Ray's own graceful signal), SIGKILL what is left after 2 s."""
    for sig, grace in ((signal.SIGTERM, 2), (signal.SIGKILL, 10)):
        try:
            os.killpg(head.pid, sig)
        except ProcessLookupError:
            return
        try:
            head.wait(grace)
        except subprocess.TimeoutExpired:
            continue


def _wait_for_job_server(address: str, head: subprocess.Popen, tmp_path: Path) -> None:
    import urllib.request

    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert head.poll() is None, (tmp_path / "head.log").read_text()[-3000:]
        try:
            urllib.request.urlopen(f"{address}/api/version", timeout=2)
            return
        except Exception:  # noqa: BLE001 - not up yet (or 401 without a token: then it is up)
            if _answers(address):
                return
        time.sleep(0.5)
    pytest.fail("the job server did not come up")


def _answers(address: str) -> bool:
    import urllib.error
    import urllib.request

    try:
        urllib.request.urlopen(f"{address}/api/version", timeout=2)
    except urllib.error.HTTPError:
        return True  # it answered (an auth refusal counts)
    except Exception:  # noqa: BLE001
        return False
    return True


def test_submit_follow_runs_the_evaluation_as_a_job(ray_token, dev_manifest, reference, tmp_path):
    """submit --follow -- run ...: prints the job id, streams logs, succeeds, writes the in-process bytes."""
    from emberbench.results.manifest import write_manifest

    write_manifest(dev_manifest, tmp_path / "m.json")
    head, address = _start_head(tmp_path)
    try:
        _wait_for_job_server(address, head, tmp_path)
        cmd = [sys.executable, "-m", "emberbench.cli.main", "submit", "--address", address, "--follow",
               "--working-dir", str(ROOT), "--", "run", "--manifest", str(tmp_path / "m.json"), "--policy", "greedy",
               "--model-id", "g", "--out", str(tmp_path / "g.json"), "--store", str(tmp_path / "st")]
        proc = subprocess.run(cmd, env=subprocess_env(), cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    finally:
        _stop_head(head)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    job = re.search(r"submitted job (\S+)", proc.stdout)
    assert job is not None, proc.stdout
    assert "60/60 episodes (60 run now, 0 resumed)" in proc.stdout  # the job's own output, streamed
    assert f"job {job.group(1)} SUCCEEDED" in proc.stdout
    assert (tmp_path / "g.json").read_bytes() == reference("greedy", "g")
    assert proc.stderr == ""  # Ray's notes on packing the working folder stay off stderr


def test_submit_without_a_token_is_refused(ray_token, tmp_path, monkeypatch):
    """The job server of a token-auth head refuses a client with the wrong token (clear one-line error)."""
    head, address = _start_head(tmp_path)
    try:
        _wait_for_job_server(address, head, tmp_path)
        env = subprocess_env()
        env["RAY_AUTH_TOKEN"] = "0" * 64
        proc = subprocess.run([sys.executable, "-m", "emberbench.cli.main", "submit", "--address", address, "--",
                               "suite", "list"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    finally:
        _stop_head(head)
    assert proc.returncode == 1
    assert "submitted job" not in proc.stdout
    assert "Traceback" not in proc.stderr and proc.stderr.startswith("error: ")
    assert "token" in proc.stderr
