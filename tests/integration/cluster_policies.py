"""Policies for the cluster fault tests, importable by Ray workers as ``tests.integration.cluster_policies``.

Each plays exactly like the built-in ``greedy`` policy, except on the
*target* scenario (v1-pub-04-dead-end-corridor, the only 9 x 30 map of the
public suite), recognised from the first observation's size.
"""

from __future__ import annotations

import os
import signal
from typing import Any

from emberbench.policies.baselines import GreedyPolicy

TARGET_SCENARIO = "v1-pub-04-dead-end-corridor"
TARGET_SHAPE = (9, 30)
POISON_SWITCH = "emberbench-test-poison-switch"


class PoisonSwitch:
    """A named Ray actor (made remote by a test) that arms ``poison``; without it ``poison`` is armed.

    It lets a test "fix" the poison policy between two runs without changing
    its spec, as a user fixing their own code would.
    """

    def __init__(self) -> None:
        self.armed = True

    def disarm(self) -> None:
        self.armed = False

    def is_armed(self) -> bool:
        return self.armed


def _poison_armed() -> bool:
    import ray

    try:
        switch = ray.get_actor(POISON_SWITCH)
    except ValueError:
        return True
    return bool(ray.get(switch.is_armed.remote()))


class _Wrapped:
    def __init__(self, on_target: str) -> None:
        self.inner = GreedyPolicy()
        self.on_target = on_target

    def __call__(self, obs: Any) -> Any:
        if (obs.height, obs.width) == TARGET_SHAPE:
            if self.on_target == "kill" and _poison_armed():
                os.kill(os.getpid(), signal.SIGKILL)  # the worker process dies mid-episode
            if self.on_target == "raise":
                raise ValueError(f"policy gave up at step {obs.step}")
        return self.inner(obs)


def poison() -> _Wrapped:
    """Greedy, but SIGKILLs its own process on the target scenario."""
    return _Wrapped("kill")


def raising() -> _Wrapped:
    """Greedy, but raises ValueError on the target scenario."""
    return _Wrapped("raise")


def fixed() -> _Wrapped:
    """The poison policy after the fix: greedy everywhere."""
    return _Wrapped("none")


_SHARED = _Wrapped("none")


def shared() -> _Wrapped:
    """A broken factory: the same policy object for every episode (refused by the runner)."""
    return _SHARED
