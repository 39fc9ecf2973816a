"""Which executor plays a run's episodes when the user did not say: in this process, or on Ray.

Ray pays for itself only when the time it saves by playing episodes on
several CPUs exceeds what starting it costs. So the choice compares two
estimates, made once resume has counted the episodes left:

* **in process**, ``T``: the seconds those episodes take here, from their
  scenarios' sizes, the policy and measured constants
  (:func:`estimate_seconds`);
* **on Ray**, ``S + T * r / W``: Ray's start-up ``S``
  (:data:`RAY_START_SECONDS`: an embedded instance and its workers), the same
  work spread over ``W`` workers (one per CPU this process may use) at Ray's
  CPU cost ratio ``r`` (:data:`RAY_CPU_RATIO`).

The rule:

1. ``--executor local`` or ``--executor ray`` always wins;
2. a cluster asked for (``--address``, ``$RAY_ADDRESS``, ``--workers``,
   ``--runtime-env``, worker resources) means Ray;
3. nothing left to play (a finished run, resumed): in process;
4. a single CPU: in process (Ray would play one episode at a time too);
5. otherwise Ray if its estimate is at most :data:`RAY_GAIN` of the
   in-process one, else in process. The break-even work is
   ``S / (RAY_GAIN - r / W)``: about 28 s of work on 2 CPUs, 15 s on 4,
   12.5 s on 8, never below ``S / RAY_GAIN``.

The constants were measured on the shared 2-core development machine, at a
load average of 2.5-3.5 (its usual load), with ``scripts/bench_cluster.py
crossover``; docs/cluster.md, "Choosing the executor", gives the figures and
says how to measure them again. The choice never changes what is
written: every executor produces the same bytes (docs/evaluation.md).
"""

from __future__ import annotations

import enum
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

RAY_START_SECONDS = 9.0
"""Wall seconds from nothing to an embedded Ray instance whose 2 episode workers are ready (7.9-9.5 s measured)."""
RAY_CPU_RATIO = 1.05
"""CPU seconds of a run's work on Ray (every process) over the same work in process."""
RAY_GAIN = 0.85
"""Ray is chosen only when its estimate is at most this fraction of the in-process one (room for estimate error)."""
CELLS_SCALE = 2000
"""A scenario's cost per step grows as ``1 + cells / CELLS_SCALE`` (fitted on the public and standard scenarios)."""
STEP_SECONDS = {"stay": 51e-6, "greedy": 51e-6, "fire-aware": 190e-6, "random": 61e-6}
"""Seconds of one built-in policy's episode per step of ``max_steps``, at ``1 + cells / CELLS_SCALE`` = 1."""
OTHER_STEP_SECONDS = STEP_SECONDS["fire-aware"]
"""A Python policy of unknown cost (``module:factory``, an entry point): as much as the built-in planner."""
AGENT_STEP_SECONDS = 1e-3
AGENT_EPISODE_SECONDS = 0.05
"""A ``cmd:`` agent: a pipe round trip per step, and a process started per episode."""
SERVED_STEP_SECONDS = 0.5
"""A served model (``openai:``): a request per step."""
EPISODE_SECONDS = 0.5e-3
"""What the coordinator spends per episode besides playing it (record, store put, journal)."""
DEFAULT_EPISODE_SECONDS = 0.0097
"""An episode of unknown cost: ``greedy``'s average on the public suite by the constants above."""


class ExecutorKind(str, enum.Enum):
    """The executors a run can use."""

    LOCAL = "local"
    RAY = "ray"


@dataclass(frozen=True, slots=True)
class ExecutorChoice:
    """The executor chosen for a run, and why (one short clause, shown to the user)."""

    kind: ExecutorKind
    reason: str

    def describe(self) -> str:
        """``executor: in process (…)`` or ``executor: Ray (…)``."""
        where = "in process" if self.kind is ExecutorKind.LOCAL else "Ray"
        return f"executor: {where} ({self.reason})"


def local_cpus() -> int:
    """CPUs this process may use (its affinity set; the machine's count where that is unknown)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def step_seconds(policy: str) -> tuple[float, float]:
    """``(seconds per step, seconds per episode)`` of a policy spec, from the constants above."""
    if policy in STEP_SECONDS:
        return STEP_SECONDS[policy], 0.0
    if policy.startswith("cmd:"):
        return AGENT_STEP_SECONDS, AGENT_EPISODE_SECONDS
    if policy.startswith("openai:"):
        return SERVED_STEP_SECONDS, 0.0
    return OTHER_STEP_SECONDS, 0.0


def waits(policy: str) -> bool:
    """Whether the policy mostly waits (an agent's process, a served model): ``--concurrency`` overlaps those."""
    return policy.startswith(("cmd:", "openai:"))


def estimate_seconds(suite: Any, entries: Sequence[Any], policy: str, *, concurrency: int = 1) -> float:
    """Seconds ``entries`` (manifest entries of ``suite``) take to play in this process under ``policy``.

    Each episode costs its scenario's ``max_steps * (1 + cells / CELLS_SCALE)``
    times the policy's seconds per step, plus the policy's and the
    coordinator's cost per episode; a policy that waits plays
    ``concurrency`` episodes at once.
    """
    per_step, per_episode = step_seconds(policy)
    share = max(1, concurrency) if waits(policy) else 1
    sizes: dict[str, float] = {}
    steps = 0.0
    for entry in entries:
        size = sizes.get(entry.scenario_id)
        if size is None:
            scenario = suite.scenario(entry.scenario_id)
            size = sizes[entry.scenario_id] = scenario.max_steps * (1 + scenario.height * scenario.width / CELLS_SCALE)
        steps += size
    return (steps * per_step + len(entries) * per_episode) / share + len(entries) * EPISODE_SECONDS


def break_even_seconds(cpus: int) -> float:
    """The in-process work above which Ray is chosen on ``cpus`` CPUs (infinite on one CPU)."""
    room = RAY_GAIN - RAY_CPU_RATIO / max(1, cpus)
    return float("inf") if cpus < 2 or room <= 0 else RAY_START_SECONDS / room


def choose_executor(pending: int, *, requested: ExecutorKind | None = None, cluster_asked: str | None = None,
                    work_seconds: float | None = None, cpus: int | None = None) -> ExecutorChoice:
    """Choose where ``pending`` episodes run (the rule in the module docstring).

    Args:
        pending: episodes the run still has to play (resumed ones excluded).
        requested: the executor the user named, if any (it always wins).
        cluster_asked: the option that asks for Ray (``--address``...), if any.
        work_seconds: the estimated in-process seconds of those episodes
            (:func:`estimate_seconds`); None: ``pending`` greedy episodes of
            the public suite's average length.
        cpus: the CPUs an embedded Ray instance would use (default: this process's).

    Raises:
        ValueError: ``pending`` is negative.
    """
    if pending < 0:
        raise ValueError(f"pending episodes must be 0 or more, got {pending}")
    if requested is not None:
        return ExecutorChoice(ExecutorKind(requested), f"--executor {ExecutorKind(requested).value}")
    if cluster_asked is not None:
        return ExecutorChoice(ExecutorKind.RAY, f"{cluster_asked} given")
    if pending == 0:
        return ExecutorChoice(ExecutorKind.LOCAL, "every episode is already done")
    cpus = local_cpus() if cpus is None else cpus
    work = pending * DEFAULT_EPISODE_SECONDS if work_seconds is None else work_seconds
    what = f"{pending} episodes, {_about(work)} of work"
    if cpus < 2:
        return ExecutorChoice(ExecutorKind.LOCAL, f"{what}; one CPU, so Ray would not be faster")
    on_ray = RAY_START_SECONDS + work * RAY_CPU_RATIO / cpus
    if on_ray <= RAY_GAIN * work:
        return ExecutorChoice(ExecutorKind.RAY, f"{what}; {_about(on_ray)} on {cpus} Ray workers")
    return ExecutorChoice(ExecutorKind.LOCAL, f"{what}; Ray pays off from {_seconds(break_even_seconds(cpus))}")


def _seconds(value: float) -> str:
    return f"{value:.1f} s" if value < 10 else f"{value:.0f} s"


def _about(value: float) -> str:
    return "under 0.1 s" if value < 0.05 else f"about {_seconds(value)}"


__all__ = ["RAY_START_SECONDS", "ExecutorChoice", "ExecutorKind", "break_even_seconds", "choose_executor",
           "estimate_seconds", "local_cpus"]
