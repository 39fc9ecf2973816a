"""Which executor plays a run's episodes when the user did not say: in this process, or on Ray.

Starting an embedded Ray instance costs seconds (about 9-14 s on a
two-core machine, docs/cluster.md, "Choosing the executor"), while a
built-in policy plays an episode of the public suite in about 20 ms. Ray
only pays for itself when there is enough work left to spread, so the
rule is:

1. ``--executor local`` or ``--executor ray`` always wins;
2. a cluster asked for (``--address``, ``$RAY_ADDRESS``, ``--workers`` or
   ``--runtime-env``) means Ray;
3. nothing left to play (a finished run, resumed): in process;
4. fewer than :data:`LOCAL_BELOW` episodes left: in process;
5. otherwise: Ray.

The choice never changes what is written: every executor produces the same
bytes (docs/evaluation.md).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

LOCAL_BELOW = 200
"""Runs with fewer episodes left than this play in process when no executor is named."""


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


def choose_executor(pending: int, *, requested: ExecutorKind | None = None,
                    cluster_asked: str | None = None) -> ExecutorChoice:
    """Choose where ``pending`` episodes run.

    Args:
        pending: episodes the run still has to play (resumed ones excluded).
        requested: the executor the user named, if any (it always wins).
        cluster_asked: the option that asks for Ray (``--address``...), if any.

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
    if pending < LOCAL_BELOW:
        return ExecutorChoice(ExecutorKind.LOCAL, f"{pending} episodes to play, fewer than {LOCAL_BELOW}")
    return ExecutorChoice(ExecutorKind.RAY, f"{pending} episodes to play, {LOCAL_BELOW} or more")


__all__ = ["LOCAL_BELOW", "ExecutorChoice", "ExecutorKind", "choose_executor"]
