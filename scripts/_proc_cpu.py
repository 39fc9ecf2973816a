"""CPU seconds of a command and of every process it starts, Ray's included (Linux, for the benchmarks).

A benchmark runs each measured command as a child process and samples
``/proc`` every :data:`SAMPLE_SECONDS` for the CPU time (user + system) of
every descendant, keeping the last value seen of each process. Children's
times (``cutime``) are not used: Ray's raylet does not wait for its workers
(they are reaped without their times being passed on), so the only complete
count is one process at a time. The child prints ``@mark NAME`` at the
points that matter and waits for a line on its stdin; the benchmark samples
at that instant (so the child's own time and every live process are exact
there) and answers. A process that ends between two samples loses the time
it spent since the last one (at most one interval; Ray's processes are idle
when they are stopped), which is why the marks come before anything is
stopped.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

SAMPLE_SECONDS = 0.2
_TICK = os.sysconf("SC_CLK_TCK")


def kind_of(cmdline: str) -> str:
    """A short name for the role of a process, from its command line."""
    rules = (("gcs_server", "gcs"), ("raylet/raylet", "raylet"), ("DashboardAgent", "dashboard agent"),
             ("dashboard/agent.py", "dashboard agent"), ("RuntimeEnvAgent", "runtime-env agent"),
             ("runtime_env/agent", "runtime-env agent"), ("dashboard.py", "dashboard"),
             ("log_monitor", "log monitor"), ("monitor.py", "autoscaler monitor"),
             ("reaper.py", "reaper"), ("ray::IDLE", "idle worker"), ("ray::", "worker"),
             ("default_worker.py", "worker"), ("record_puts", "record helper"))
    for needle, kind in rules:
        if needle in cmdline:
            return kind
    return "other: " + cmdline[:60]


@dataclass
class Tree:
    """Every process below this one: last CPU time seen per process, and its role."""

    driver: int = 0
    own: dict[tuple[int, int], float] = field(default_factory=dict)  # (pid, start tick) -> CPU seconds
    names: dict[tuple[int, int], str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    _stop: threading.Event = field(default_factory=threading.Event)

    def sample(self) -> float:
        """Read every descendant's CPU time now; return the tree's total so far."""
        stats: dict[int, tuple[int, int, float]] = {}  # pid -> (ppid, start, cpu)
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            stats[int(entry)] = (int(fields[1]), int(fields[19]), (int(fields[11]) + int(fields[12])) / _TICK)
        children: dict[int, list[int]] = {}
        for pid, (ppid, _, _) in stats.items():
            children.setdefault(ppid, []).append(pid)
        todo = list(children.get(os.getpid(), []))
        with self.lock:
            while todo:
                pid = todo.pop()
                todo.extend(children.get(pid, []))
                _, start, cpu = stats[pid]
                key = (pid, start)
                self.own[key] = max(cpu, self.own.get(key, 0.0))
                if key not in self.names or self.names[key].startswith("other: "):  # a fork not yet exec'd
                    try:
                        with open(f"/proc/{pid}/cmdline", "rb") as handle:
                            cmd = handle.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
                    except OSError:
                        cmd = "?"
                    self.names[key] = "driver" if pid == self.driver else kind_of(cmd)
            return sum(self.own.values())

    def by_kind(self) -> dict[str, float]:
        with self.lock:
            out: dict[str, float] = {}
            for key, cpu in self.own.items():
                name = self.names.get(key, "?")
                out[name] = out.get(name, 0.0) + cpu
            return out

    def sample_every(self, seconds: float) -> threading.Thread:
        def loop() -> None:
            while not self._stop.wait(seconds):
                self.sample()

        thread = threading.Thread(target=loop, daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        self._stop.set()


@dataclass(frozen=True, slots=True)
class Measured:
    """What one measured command cost.

    Attributes:
        cpu: CPU seconds of every process at each mark (``{"up": ..., "end": ..., "exit": ...}``).
        wall: wall seconds from the start to each mark.
        kinds: CPU seconds by process role at each mark.
        lines: what the child printed besides its marks.
    """

    cpu: dict[str, float]
    wall: dict[str, float]
    kinds: dict[str, dict[str, float]]
    lines: tuple[str, ...]

    def window(self, a: str = "up", b: str = "end") -> float:
        return self.cpu[b] - self.cpu[a]

    def window_wall(self, a: str = "up", b: str = "end") -> float:
        return self.wall[b] - self.wall[a]

    def kinds_between(self, a: str, b: str) -> dict[str, float]:
        names = set(self.kinds[a]) | set(self.kinds[b])
        return {n: self.kinds[b].get(n, 0.0) - self.kinds[a].get(n, 0.0) for n in names}


def measure(argv: Sequence[str], *, env: dict[str, str] | None = None, cwd: str | None = None) -> Measured:
    """Run ``argv`` (in ``cwd``), a child that prints ``@mark NAME`` lines (and waits for an answer after each),
    and return the CPU and wall time at each mark."""
    tree = Tree()
    start = time.perf_counter()
    proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=cwd,
                            text=True)
    tree.driver = proc.pid
    sampler = tree.sample_every(SAMPLE_SECONDS)
    cpu: dict[str, float] = {}
    wall: dict[str, float] = {}
    kinds: dict[str, dict[str, float]] = {}
    lines = []
    assert proc.stdout is not None and proc.stdin is not None
    try:
        for line in proc.stdout:
            if line.startswith("@mark "):
                name = line.split()[1]
                cpu[name], wall[name] = tree.sample(), time.perf_counter() - start
                kinds[name] = tree.by_kind()
                proc.stdin.write("go\n")
                proc.stdin.flush()
            else:
                lines.append(line.rstrip("\n"))
        code = proc.wait()
    finally:
        tree.stop()
        sampler.join()
    if code != 0:
        raise SystemExit(f"{' '.join(argv)} exited {code}:\n" + "\n".join(lines[-20:]))
    return Measured(cpu, wall, kinds, tuple(lines))


def mark(name: str) -> None:
    """In the child: have the benchmark sample every process now, and wait until it has."""
    import sys

    print(f"@mark {name}", flush=True)
    sys.stdin.readline()
