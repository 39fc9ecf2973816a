"""The rig's services, mixed into :class:`tests.rig.Rig`: the S3 test server and the Ray nodes.

Ray on the rig is kept small for a shared machine: one CPU per worker host,
none on the head and the client, no dashboard unless a test asks for the
job server (:meth:`Services.restart_ray`), no log monitor (it polls
every worker's log files: a quarter of an idle rig's CPU), a 100 MiB object
store. The agents' ports are fixed: with port 0 a raylet waits at most 15 s
for its agents to report theirs, and on a loaded machine a starting agent
took longer (ray-project/ray#65983); each host has its own ports anyway. The
cluster's token is placed on every Ray host as ``~/.ray/auth_token`` (0600),
as a secret manager would.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Sequence
from pathlib import Path

from tests.s3server import BUCKET

from .errors import RigError
from .launch import HOME
from .state import Process

REPO = Path(__file__).resolve().parents[2]
RAY_PORT = 6379
S3_PORT = 9000
OBJECT_STORE_BYTES = 100 * 1024 * 1024
"""Ray's minimum is 75 MiB; objects here are small (batches, the suite)."""
AGENT_PORTS = {"dashboard-agent-listen-port": 52365, "dashboard-agent-grpc-port": 52366,
               "metrics-export-port": 52367, "runtime-env-agent-port": 52368}
HEALTH_CHECK = {"health_check_period_ms": 1000, "health_check_timeout_ms": 1000,
                "health_check_failure_threshold": 5, "gcs_rpc_server_reconnect_timeout_s": 3}
"""The head declares a silent node dead after about 5 s (Ray's default is about 30 s), and a node or
driver that has lost the head gives up after 3 s (Ray's default is 60 s): the fault tests stay short."""
DASHBOARD_PORT = 8265
"""The head's dashboard, with the job server (``emberbench submit``), when the rig runs it."""
READY = {"s3": "ready http://", "ray": "Ray runtime started."}
"""What a service prints once it serves."""

_NODES_PROBE = """
import json, logging, sys, time
import ray
ray.init(address=sys.argv[1], logging_level=logging.ERROR, log_to_driver=False)
want, deadline = sorted(json.loads(sys.argv[2])), time.monotonic() + float(sys.argv[3])
while True:
    alive = sorted(n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"])
    if alive == want or time.monotonic() > deadline:
        break
    time.sleep(0.5)
print(json.dumps(alive))
sys.exit(0 if alive == want else 3)
"""


class Services:
    """Starting the S3 server and Ray on the rig's hosts (needs the host and process methods of :class:`Rig`)."""

    @property
    def ray_address(self) -> str:
        return f"{self.address('head')}:{RAY_PORT}"

    @property
    def job_server(self) -> str:
        """The head's job server URL (served only while the head runs its dashboard)."""
        return f"http://{self.address('head')}:{DASHBOARD_PORT}"

    @property
    def s3_endpoint(self) -> str:
        return f"http://{self.address('s3')}:{S3_PORT}"

    def s3_locator(self, prefix: str) -> str:
        """A store locator on the rig's S3 server (the endpoint travels in the locator)."""
        return f"s3://{BUCKET}/{prefix}?endpoint={self.s3_endpoint}"

    def _start_services(self, workers: list[str]) -> None:
        token = secrets.token_hex(32)
        for host in ["head", *workers, "client"]:
            self._install_token(host, token)
        self._credentials.update({"s3": True, "head": False, "client": True, **dict.fromkeys(workers, True)})
        s3 = self.start_s3(wait=False)
        self.start_nodes(["head"])
        self.start_nodes([*workers, "client"])
        self._wait_ready(s3)
        self.wait_nodes(["head", *workers, "client"])

    def start_nodes(self, hosts: list[str], attempts: int = 3) -> None:
        """Start Ray on ``hosts`` together; a node that fails to start is started again, alone.

        ``ray start`` gives a new node 30 s to register, and on a loaded
        machine several nodes starting at once can take longer (each starts
        three Python processes); alone, a node gets the CPU it needs.
        """
        started = {host: self.start_ray(host, wait=False) for host in hosts}
        failed = []
        for host, proc in started.items():
            try:
                self._wait_ready(proc)
            except RigError as exc:
                failed.append(host)
                self._note(f"{exc}; starting ray on {host} again, alone")
        for host in failed:
            for attempt in range(2, attempts + 1):
                self.kill_host(host)
                try:
                    self.start_ray(host)
                    break
                except RigError as exc:
                    if attempt == attempts:
                        raise
                    self._note(f"{exc}; starting ray on {host} again (attempt {attempt + 1} of {attempts})")

    def add_worker(self, host: str, *, credentials: bool = True, wait: bool = True) -> Process:
        """A new worker host joining the cluster (``credentials=False``: it has no S3 credentials)."""
        self.add_host(host)
        self._install_token(host, self._token())
        self._credentials[host] = credentials
        proc = self.start_ray(host, wait=wait)
        return proc

    def start_s3(self, *, wait: bool = True) -> Process:
        """The S3 test server on the s3 host (moto, the bucket made), its request log in ``logs/s3-s3.log``."""
        proc = self.start("s3", "s3", ["python", "-m", "tests.s3server", "--host", self.address("s3"),
                                       "--port", str(S3_PORT)], env={"PYTHONPATH": str(REPO)})
        if wait:
            self._wait_ready(proc)
        return proc

    def start_ray(self, host: str, *, wait: bool = True) -> Process:
        """``ray start --block`` on ``host``: the head (no CPU), the client (no CPU) or a worker (one CPU)."""
        common = ["--node-ip-address", self.address(host), "--object-store-memory", str(OBJECT_STORE_BYTES),
                  "--include-log-monitor", "false", "--disable-usage-stats", "--block",
                  *(f"--{name}={port}" for name, port in AGENT_PORTS.items())]
        if host == "head":
            dashboard = ["--include-dashboard", "true", "--dashboard-host", self.address("head"),
                         "--dashboard-port", str(DASHBOARD_PORT)] if self.dashboard else ["--include-dashboard", "false"]
            argv = ["ray", "start", "--head", "--port", str(RAY_PORT), "--num-cpus", "0", *dashboard,
                    "--system-config", json.dumps(HEALTH_CHECK), *common]
        else:
            argv = ["ray", "start", "--address", self.ray_address, "--num-cpus", "0" if host == "client" else "1",
                    *common]
        proc = self.start(host, "ray", argv)
        if wait:
            self._wait_ready(proc)
        return proc

    def restart_ray(self, *, dashboard: bool | None = None) -> None:
        """Start the whole Ray cluster again (a new head, every node joining it), with or without the dashboard.

        What is left of Ray on any host is killed first (after a lost head,
        the nodes have given up or are about to); the S3 host is not touched.
        """
        if dashboard is not None:
            self.dashboard = dashboard
        nodes = [h for h in self.state.hosts if h not in ("s3",)]
        for host in nodes:
            self.kill_host(host)
        self.start_nodes(["head"])
        rest = [h for h in nodes if h != "head"]
        self.start_nodes(rest)
        self.wait_nodes(["head", *rest])

    def wait_nodes(self, hosts: Sequence[str], timeout: float = 90.0) -> None:
        """Wait until exactly the Ray nodes of ``hosts`` are alive (asked from the client host).

        Raises:
            RigError: other nodes after ``timeout`` seconds (the message lists them).
        """
        want = [self.address(h) for h in hosts]
        proc = self.run("client", ["python", "-c", _NODES_PROBE, self.ray_address, json.dumps(want), str(timeout)],
                        timeout=timeout + 60)
        if proc.returncode != 0:
            seen = proc.stdout.strip().splitlines()[-1:] or [last_line(proc.stderr)]
            raise RigError(f"Ray nodes alive: {seen[0]}, expected {sorted(want)}")

    def _install_token(self, host: str, token: str) -> None:
        """The cluster's token as the host's ``~/.ray/auth_token`` (0600 in a 0700 folder), as a secret manager would."""
        folder = self.host_path(host, f"{HOME}/.ray")
        folder.mkdir(mode=0o700, exist_ok=True)
        path = folder / "auth_token"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(token)

    def _token(self) -> str:
        return self.host_path("head", f"{HOME}/.ray/auth_token").read_text()


def last_line(text: str) -> str:
    """The last non-empty line of a log or an error output (at most 300 characters)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else "(no output)"
