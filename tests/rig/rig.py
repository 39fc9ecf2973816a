"""A multi-host test cluster on one machine: test hosts in network namespaces on one bridge.

Layout (addresses in the rig's /24, default ``10.213.47.0/24``)::

    namespace  <prefix>-net     the bridge br0, one port per host; no address
    host s3      .10            the S3 test server (tests/s3server.py), port 9000
    host head    .11            the Ray head (GCS on 6379), no CPU for episodes
    host w1, w2  .21, .22       Ray worker nodes, one CPU each
    host client  .30            a Ray node without CPUs, where drivers (``emberbench run``) start

A Ray driver needs a Ray node on its own machine, so the client host runs one
with no CPU: nothing is scheduled there, and the client plays the part of a
user's workstation or a cluster's login node. Each host has its own init,
process list, /tmp, HOME, working folder and /dev/shm, and sees the rest of
the machine read-only (:mod:`tests.rig.launch`); the services are started by
:mod:`tests.rig.services`. Everything made is recorded in the state file
first (:mod:`tests.rig.state`) and undone by :meth:`Rig.down`: every process
of every rig namespace is killed, the namespaces are deleted (with the bridge
and the veths inside them), the rig root is removed. Nothing is ever ended by
name (no ``ray stop``, no ``pkill``): the rig finds its processes by
namespace.

Faults for tests: :meth:`Rig.kill_host` (the host dies: every process,
SIGKILL), :meth:`Rig.stop_host` (it shuts down: SIGTERM, then SIGKILL),
:meth:`Rig.set_link` (its cable pulled out or plugged back in),
:meth:`Rig.start_ray`, :meth:`Rig.start_nodes`, :meth:`Rig.start_s3` (a
service back, the host booted again if it was down), :meth:`Rig.restart_ray`
(after the head was lost: the whole cluster started again),
:meth:`Rig.add_worker` / :meth:`Rig.remove_host`. A run to fault mid-way is
started with :meth:`Rig.popen`.
"""

from __future__ import annotations

import atexit
import ipaddress
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import net, state
from .errors import RigError, RigUnavailable
from .launch import BOOTED, HostFolders, boot_command, exec_command, host_env
from .services import RAY_PORT, READY, S3_PORT, Services, last_line
from .state import Host, Process, RigState

_HOST_NUMBER = {"s3": 10, "head": 11, "client": 30}
_WORKER_BASE = 20
_READY = {"host": BOOTED, **READY}


@dataclass(frozen=True, slots=True)
class RigConfig:
    """What to build.

    Attributes:
        prefix: every namespace is ``<prefix>-<host>``; a rerun cleans up every namespace with this prefix.
        subnet: the rig's private /24; it must not be used by the machine.
        root: the rig's folder (state file, logs, the hosts' folders); default ``/tmp/<prefix>-rig``.
        workers: Ray worker hosts (``w1``, ``w2``...).
        services: start the S3 server and Ray; False builds hosts and network only.
        keep_files: leave the logs and the hosts' folders under ``root`` on teardown (to debug a failure).
        dashboard: the head runs Ray's dashboard, whose job server ``emberbench submit`` talks to (idle,
            it costs about 3 % of a core).
    """

    prefix: str = "ebrig"
    subnet: str = "10.213.47.0/24"
    root: Path | None = None
    workers: int = 2
    services: bool = True
    keep_files: bool = False
    dashboard: bool = True

    @property
    def folder(self) -> Path:
        return self.root or Path(f"/tmp/{self.prefix}-rig")


class Rig(Services):
    """Build, drive and tear down the multi-host rig (see the module docstring).

    Use as a context manager (the rig is torn down on exit, on an exception,
    and on SIGTERM) or call :meth:`up` and :meth:`down` (``owned=False`` leaves
    the rig up after this process ends, for ``cluster_rig.py up``).
    """

    def __init__(self, config: RigConfig | None = None) -> None:
        self.config = config or RigConfig()
        self.root = self.config.folder
        self.state_path = self.root / "state.json"
        net_ = ipaddress.ip_network(self.config.subnet)
        if net_.prefixlen != 24 or not net_.is_private:
            raise RigError(f"subnet {self.config.subnet}: the rig needs one private /24")
        self._net = net_
        self.state = RigState(prefix=self.config.prefix, subnet=str(net_))
        self._children: dict[int, subprocess.Popen[bytes]] = {}
        self._log_start: dict[int, int] = {}  # pid -> size of its log when it started (logs are appended to)
        self._started: list[Process] = []  # every process this rig object started, for remains()
        self._credentials: dict[str, bool] = {}
        self._lock = threading.RLock()
        self._previous_sigterm: Any = None
        self.dashboard = self.config.dashboard  # the head runs Ray's dashboard (and job server) when started next

    # -- naming ------------------------------------------------------------------

    @property
    def bridge_netns(self) -> str:
        return f"{self.config.prefix}-net"

    def netns(self, host: str) -> str:
        return f"{self.config.prefix}-{host}"

    def address(self, host: str) -> str:
        """The host's address (every host but the bridge has one)."""
        if host in self.state.hosts:
            return self.state.hosts[host].ip
        number = _HOST_NUMBER.get(host) or (_WORKER_BASE + int(host[1:]) if host[:1] == "w" and host[1:].isdigit() else 0)
        if not 1 < number < 255:
            raise RigError(f"unknown host {host!r} (s3, head, client, w1, w2...)")
        return str(self._net.network_address + number)

    @property
    def workers(self) -> list[str]:
        return sorted((h for h in self.state.hosts if h.startswith("w")), key=lambda h: int(h[1:]))

    def folders(self, host: str) -> HostFolders:
        return HostFolders(self.root / "hosts" / host)

    def host_path(self, host: str, inside: str) -> Path:
        """Where the machine sees the file that ``host`` sees at ``inside`` (under /tmp, /home/ember or /srv)."""
        return self.folders(host).outside(inside)

    # -- life cycle ------------------------------------------------------------------

    def __enter__(self) -> Rig:
        self.up(owned=True)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.down()

    def up(self, *, owned: bool = True) -> Rig:
        """Tear down what an earlier rig left, then build the hosts, the network and the services.

        Args:
            owned: this process tears the rig down when it ends (at exit and
                on SIGTERM); False leaves it up for a later ``down``.

        Raises:
            RigUnavailable: not root, no iproute2, the subnet in use here, or
                a rig of this prefix owned by a live process.
            RigError: something failed while building (everything made is torn down first).
        """
        net.require_tools()
        used = net.subnet_users(self.config.subnet)
        if used:
            raise RigUnavailable(f"subnet {self.config.subnet} is in use on this machine ({used[0]})")
        self._refuse_live_owner()
        self.clean()
        self._watch(True)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            self.root.chmod(0o700)
            (self.root / "logs").mkdir(exist_ok=True)
            me = os.getpid()
            self.state = RigState(prefix=self.config.prefix, subnet=str(self._net),
                                  owner={"pid": me, "start": net.start_time(me) or 0} if owned else None)
            self._save()
            self._add_namespace(self.bridge_netns)
            net.ip("-n", self.bridge_netns, "link", "add", "br0", "type", "bridge")
            net.ip("-n", self.bridge_netns, "link", "set", "br0", "up")
            workers = [f"w{i}" for i in range(1, self.config.workers + 1)]
            for host in ["s3", "head", *workers, "client"]:
                self.add_host(host)
            if self.config.services:
                self._start_services(workers)
        except BaseException as exc:
            self._watch(False)
            self.down()
            if isinstance(exc, RigError | KeyboardInterrupt | SystemExit):
                raise
            raise RigError(f"the rig could not start: {type(exc).__name__}: {exc}") from exc
        if not owned:
            self._watch(False)
        return self

    def _note(self, line: str) -> None:
        """A line in ``logs/rig.log`` (what the rig had to retry, for whoever reads a slow run)."""
        with open(self.root / "logs" / "rig.log", "a") as log:
            log.write(f"{time.strftime('%H:%M:%S')} {line}\n")

    def down(self) -> None:
        """Kill every process of the rig, delete its namespaces (and devices), remove its folder.

        Works from the state file and, for anything it misses, the prefix; an
        unreadable state file does not stop the teardown. Safe to call again.

        Raises:
            RigError: something survived (the message names it).
        """
        with self._lock:
            self._watch(False)
            self.clean()

    def clean(self) -> None:
        """Tear down whatever a rig of this prefix left (this one, or an earlier one that crashed)."""
        try:
            recorded = state.load(self.state_path)
        except RigError:
            recorded = None  # unreadable: the prefix still finds the namespaces
        doomed = set(recorded.namespaces if recorded else []) | set(self.state.namespaces)
        doomed |= {ns for ns in net.namespaces() if ns.startswith(f"{self.config.prefix}-")}
        processes = [*(recorded.processes if recorded else []), *self.state.processes]
        net.kill_recorded((p.pid, p.start) for p in processes)
        for ns in sorted(doomed):
            net.delete_netns(ns)
        self._reap(all_=True)
        survivors = [p.pid for p in processes if net.same_process(p.pid, p.start)]
        if survivors:
            raise RigError(f"rig processes {survivors} survived the teardown")
        self._remove_files()
        self.state = RigState(prefix=self.config.prefix, subnet=str(self._net))

    def _remove_files(self) -> None:
        """Remove what the rig wrote under its root (never anything else there), then the root if empty."""
        self.state_path.unlink(missing_ok=True)
        if self.config.keep_files:
            return
        for name in ("hosts", "logs"):
            shutil.rmtree(self.root / name, ignore_errors=True)
        try:
            self.root.rmdir()
        except OSError:
            pass

    def _refuse_live_owner(self) -> None:
        try:
            recorded = state.load(self.state_path)
        except RigError:
            return
        owner = recorded.owner if recorded else None
        if owner and owner["pid"] != os.getpid() and net.same_process(owner["pid"], owner["start"]):
            raise RigUnavailable(f"a rig with prefix {self.config.prefix!r} is in use by process {owner['pid']} "
                                 f"(scripts/cluster_rig.py down ends it)")

    def _watch(self, on: bool) -> None:
        """While the rig is owned here: tear it down at exit and on SIGTERM (then end as SIGTERM would)."""
        if on:
            atexit.register(self.down)
            if threading.current_thread() is threading.main_thread() and self._previous_sigterm is None:
                self._previous_sigterm = signal.signal(signal.SIGTERM, self._on_sigterm)
            return
        atexit.unregister(self.down)
        if self._previous_sigterm is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self._previous_sigterm)
            self._previous_sigterm = None

    def _on_sigterm(self, signum: int, frame: object) -> None:
        previous = self._previous_sigterm
        try:
            self.down()
        finally:
            signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)

    # -- hosts and network ---------------------------------------------------------------

    def _add_namespace(self, ns: str) -> None:
        self.state.namespaces.append(ns)
        self._save()  # recorded before it exists: a crash in between leaves nothing unrecorded
        net.ip("netns", "add", ns)
        net.ip("-n", ns, "link", "set", "lo", "up")

    def add_host(self, host: str) -> Host:
        """Create a host: its namespace, its veth on the bridge, its address and its folders."""
        ns, ip = self.netns(host), self.address(host)
        if host in self.state.hosts:
            raise RigError(f"host {host} exists already")
        self._add_namespace(ns)
        net.ip("-n", self.bridge_netns, "link", "add", host, "type", "veth", "peer", "name", "eth0", "netns", ns)
        net.ip("-n", self.bridge_netns, "link", "set", host, "master", "br0")
        net.ip("-n", self.bridge_netns, "link", "set", host, "up")
        net.ip("-n", ns, "addr", "add", f"{ip}/{self._net.prefixlen}", "dev", "eth0")
        net.ip("-n", ns, "link", "set", "eth0", "up")
        self.folders(host).make()
        self.state.hosts[host] = Host(netns=ns, ip=ip, port=host)
        self._save()
        self.boot(host)
        return self.state.hosts[host]

    def boot(self, host: str) -> Process:
        """Start the host's init (its mounts, hostname and process list); done by :meth:`add_host`,
        and again by a service started on a host that was killed or stopped."""
        log = self.root / "logs" / f"{host}-host.log"
        with open(log, "ab") as out:
            offset = out.tell()
            child = subprocess.Popen(boot_command(self.netns(host), f"{self.config.prefix}-{host}",
                                                  self.folders(host), self.root),
                                     env={"PATH": host_env(credentials=False)["PATH"]}, stdin=subprocess.DEVNULL,
                                     stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        proc = self._record(child, host, "host", log, offset)
        self._wait_ready(proc, timeout=30.0)
        return proc

    def _init_pid(self, host: str) -> int | None:
        """The host's init (pid 1 inside the host), None if the host is down."""
        for proc in self.state.processes:
            if proc.host == host and proc.role == "host" and net.same_process(proc.pid, proc.start):
                kids = net.children(proc.pid)
                return kids[0] if kids else None
        return None

    def _infrastructure(self, host: str) -> frozenset[int]:
        """The host's boot process and init: not services, and never sent SIGTERM (that would end the host at once)."""
        boot = [p.pid for p in self.state.processes if p.host == host and p.role == "host"]
        return frozenset(boot + [kid for pid in boot for kid in net.children(pid)])

    def remove_host(self, host: str) -> None:
        """Stop a host's processes (SIGTERM, then SIGKILL) and delete it."""
        self.stop_host(host)
        net.delete_netns(self.netns(host))
        with self._lock:
            del self.state.hosts[host]
            self.state.namespaces.remove(self.netns(host))
            self._save()
        shutil.rmtree(self.folders(host).base, ignore_errors=True)

    def set_link(self, host: str, up: bool) -> None:
        """Plug the host's cable in or pull it out (its port on the bridge goes up or down)."""
        net.ip("-n", self.bridge_netns, "link", "set", self.state.hosts[host].port, "up" if up else "down")

    def kill_host(self, host: str) -> None:
        """The host dies: SIGKILL to every process in it (its /tmp, HOME and working folder stay)."""
        net.empty_netns(self.netns(host))
        self._forget(host)

    def stop_host(self, host: str, grace: float = 10.0) -> None:
        """The host shuts down: SIGTERM to every process in it, SIGKILL to what is left after ``grace`` seconds."""
        net.empty_netns(self.netns(host), grace=grace, spare=self._infrastructure(host))
        self._forget(host)

    def _forget(self, host: str) -> None:
        self._reap(all_=False)
        with self._lock:
            self.state.processes = [p for p in self.state.processes if p.host != host]
            self._save()

    # -- processes -------------------------------------------------------------------

    def env(self, host: str, extra: dict[str, str] | None = None) -> dict[str, str]:
        """The environment commands get on ``host`` (S3 credentials where the host has them)."""
        return host_env(credentials=self._credentials.get(host, True), extra=extra)

    def command(self, host: str, argv: Sequence[str]) -> list[str]:
        """The machine's command line that runs ``argv`` on ``host`` (booted again first if it was down)."""
        if host not in self.state.hosts:
            raise RigError(f"no host {host!r} in this rig")
        init = self._init_pid(host)
        if init is None:
            self.boot(host)
            init = self._init_pid(host)
        if init is None:
            raise RigError(f"host {host} did not boot")
        return exec_command(init, list(argv))

    def run(self, host: str, argv: Sequence[str], *, timeout: float, env: dict[str, str] | None = None,
            input: bytes | None = None) -> subprocess.CompletedProcess[str]:
        """Run a command on ``host`` and wait for it (its whole process group is killed on timeout).

        Raises:
            RigError: it did not finish within ``timeout`` seconds.
        """
        proc = subprocess.Popen(self.command(host, argv), env=self.env(host, env), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            _killpg(proc.pid)
            proc.communicate()
            raise RigError(f"{argv[0]} on {host} did not finish within {timeout:g} s") from None
        finally:
            if proc.returncode is None:
                _killpg(proc.pid)
                proc.wait()
        return subprocess.CompletedProcess(argv, proc.returncode, out.decode(errors="replace"),
                                           err.decode(errors="replace"))

    def popen(self, host: str, argv: Sequence[str], *, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        """Start a command on ``host`` without waiting (a run to fault mid-way); its output is piped.

        The caller waits for it, and kills its process group (:func:`kill_group`) if it gives up.
        """
        return subprocess.Popen(self.command(host, argv), env=self.env(host, env), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, text=True,
                                errors="replace")

    def start(self, host: str, role: str, argv: Sequence[str], *, env: dict[str, str] | None = None) -> Process:
        """Start a long-lived process on ``host`` (output to ``logs/<host>-<role>.log``), recorded in the state."""
        log = self.root / "logs" / f"{host}-{role}.log"
        command = self.command(host, argv)
        with open(log, "ab") as out:
            offset = out.tell()
            child = subprocess.Popen(command, env=self.env(host, env), stdin=subprocess.DEVNULL,
                                     stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        return self._record(child, host, role, log, offset)

    def _record(self, child: subprocess.Popen[bytes], host: str, role: str, log: Path, offset: int) -> Process:
        self._children[child.pid] = child
        self._log_start[child.pid] = offset
        proc = Process(host=host, role=role, pid=child.pid, start=net.start_time(child.pid) or 0,
                       log=str(log.relative_to(self.root)))
        self._started.append(proc)
        with self._lock:
            self.state.processes.append(proc)
            self._save()
        return proc

    def _wait_ready(self, proc: Process, timeout: float = 120.0) -> None:
        marker = _READY[proc.role]
        log = self.root / proc.log
        deadline = time.monotonic() + timeout
        while True:
            with open(log, "rb") as handle:
                handle.seek(self._log_start.get(proc.pid, 0))
                text = handle.read().decode(errors="replace")
            if marker in text:
                return
            child = self._children.get(proc.pid)
            if child is not None and child.poll() is not None:
                raise RigError(f"{proc.role} on {proc.host} exited ({child.returncode}): {last_line(text)}")
            if time.monotonic() > deadline:
                raise RigError(f"{proc.role} on {proc.host} not ready within {timeout:g} s: {last_line(text)}")
            time.sleep(0.2)

    def _reap(self, *, all_: bool) -> None:
        for pid, child in list(self._children.items()):
            if all_ and child.poll() is None:
                _killpg(pid)
                child.wait()
            if child.poll() is not None:
                del self._children[pid]

    def _save(self) -> None:
        with self._lock:
            state.save(self.state_path, self.state)

    # -- checks ----------------------------------------------------------------------------

    def leftovers(self) -> list[str]:
        """What should not be there: namespaces of the prefix the rig did not record, and processes
        in the rig's namespaces that no recorded service started (a test's command that outlived it).
        """
        found = [f"namespace {ns}" for ns in net.namespaces()
                 if ns.startswith(f"{self.config.prefix}-") and ns not in self.state.namespaces]
        services = {p.pid for p in self.state.processes if p.role != "host" and net.same_process(p.pid, p.start)}
        for host, info in sorted(self.state.hosts.items()):
            infrastructure = self._infrastructure(host)
            for pid in net.netns_pids(info.netns):
                if pid not in infrastructure and not _descends(pid, services):
                    found.append(f"process {pid} on {host}: {_cmdline(pid)}")
        return found

    def remains(self) -> list[str]:
        """After :meth:`down`: namespaces of the prefix, and live processes this object ever started (should be none)."""
        found = [f"namespace {ns}" for ns in net.namespaces() if ns.startswith(f"{self.config.prefix}-")]
        found += [f"process {p.pid} ({p.role} on {p.host})" for p in self._started if net.same_process(p.pid, p.start)]
        return found

    def status(self) -> dict[str, Any]:
        """The recorded rig, with each process's liveness (for ``cluster_rig.py status``)."""
        try:
            recorded = state.load(self.state_path)
        except RigError as exc:
            return {"error": str(exc)}
        if recorded is None:
            live = [ns for ns in net.namespaces() if ns.startswith(f"{self.config.prefix}-")]
            return {"up": False, "stray_namespaces": live}
        live_ns = set(net.namespaces())
        return {"up": True, "root": str(self.root), "owner": recorded.owner,
                "ray_address": f"{recorded.hosts['head'].ip}:{RAY_PORT}" if "head" in recorded.hosts else None,
                "s3_endpoint": f"http://{recorded.hosts['s3'].ip}:{S3_PORT}" if "s3" in recorded.hosts else None,
                "hosts": {h: {"ip": v.ip, "netns": v.netns, "exists": v.netns in live_ns,
                              "processes": [{"role": p.role, "pid": p.pid,
                                             "alive": net.same_process(p.pid, p.start)}
                                            for p in recorded.processes if p.host == h]}
                          for h, v in sorted(recorded.hosts.items())}}

    @classmethod
    def attach(cls, config: RigConfig | None = None) -> Rig:
        """A handle on the rig already up under ``config`` (from its state file), for ``cluster_rig.py exec``."""
        rig = cls(config)
        recorded = state.load(rig.state_path)
        if recorded is None:
            raise RigError(f"no rig is up under {rig.root}")
        rig.state = recorded
        rig._credentials = {h: h != "head" for h in recorded.hosts}
        return rig


def _descends(pid: int, ancestors: set[int]) -> bool:
    seen = 0
    while pid and pid > 1 and seen < 64:
        if pid in ancestors:
            return True
        pid, seen = net.parent(pid) or 0, seen + 1
    return False


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace").strip()[:200]
    except OSError:
        return "?"


def kill_group(proc: subprocess.Popen[Any]) -> None:
    """Kill a command started by :meth:`Rig.popen` (its whole process group) and reap it."""
    if proc.poll() is None:
        _killpg(proc.pid)
    proc.communicate()


def _killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
