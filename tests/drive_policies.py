"""Policies for the tests of batched and concurrent driving, importable by Ray workers as ``tests.drive_policies``.

Each plays like the built-in ``greedy`` policy unless said otherwise, so
their artifacts can be compared with greedy's.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from emberbench.policies.baselines import GreedyPolicy
from emberbench.policies.forms import SlotPolicies
from emberbench.policies.served.usage import ModelUsage

ROOT = Path(__file__).resolve().parents[1]
STEP_SECONDS = 0.05
FAIL_SHAPE = (15, 28)
"""v1-pub-09-threatened-nearest-exit, the only 15 x 28 map of the public suite."""


EXAMPLES = ROOT / "docs" / "examples" / "policies"


def example(name: str) -> Any:
    """A module of docs/examples/policies, imported under its own name (the examples import each other)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


numpy_mlp = example("numpy_mlp")
NumpyMLP = numpy_mlp.NumpyMLP
LOAD_COUNTER = "emberbench-test-weight-loads"


class LoadCounter:
    """A named Ray actor (made by a test) that collects the process id of every weight load."""

    def __init__(self) -> None:
        self.loads: list[int] = []

    def add(self, pid: int) -> None:
        self.loads.append(pid)

    def get(self) -> list[int]:
        return self.loads


def _report_load(before: int) -> None:
    """Tell the load counter, if there is one, that this process loaded the weights."""
    if len(numpy_mlp.LOADS) == before:
        return
    try:
        import ray

        counter = ray.get_actor(LOAD_COUNTER)
    except (ImportError, ValueError):
        return
    ray.get(counter.add.remote(os.getpid()))


class CountedMLP:
    """NumpyMLP that reports each weight load to the load counter."""

    def __new__(cls) -> Any:  # type: ignore[misc]
        before = len(numpy_mlp.LOADS)
        policy = NumpyMLP()
        _report_load(before)
        return policy

    @staticmethod
    def batch_factory() -> Any:
        before = len(numpy_mlp.LOADS)
        policy = NumpyMLP.batch_factory()
        _report_load(before)
        return policy


class InFlight:
    """Counts the steps being answered at once in this process, and the most seen."""

    lock = threading.Lock()
    now = 0
    peak = 0

    @classmethod
    def enter(cls) -> None:
        with cls.lock:
            cls.now += 1
            cls.peak = max(cls.peak, cls.now)

    @classmethod
    def leave(cls) -> None:
        with cls.lock:
            cls.now -= 1

    @classmethod
    def reset(cls) -> None:
        with cls.lock:
            cls.now = cls.peak = 0


class SleepyGreedy:
    """Greedy, after waiting STEP_SECONDS per step (a slow model)."""

    def __init__(self) -> None:
        self.inner = GreedyPolicy()

    def __call__(self, obs: Any) -> Any:
        InFlight.enter()
        try:
            time.sleep(STEP_SECONDS)
        finally:
            InFlight.leave()
        return self.inner(obs)


class AsyncSleepyGreedy:
    """Greedy, after awaiting STEP_SECONDS per step (an asynchronous policy)."""

    def __init__(self) -> None:
        self.inner = GreedyPolicy()

    async def __call__(self, obs: Any) -> Any:
        InFlight.enter()
        try:
            await asyncio.sleep(STEP_SECONDS)
        finally:
            InFlight.leave()
        return self.inner(obs)


class FailsOnTarget:
    """Greedy, but an invalid action (no move at all) at step 3 of every episode on the 15 x 28 map."""

    def __init__(self) -> None:
        self.inner = GreedyPolicy()

    def __call__(self, obs: Any) -> Any:
        if (obs.height, obs.width) == FAIL_SHAPE and obs.step == 3:
            return {}
        return self.inner(obs)

    @classmethod
    def batch_factory(cls) -> SlotPolicies:
        return SlotPolicies(cls)


class CountingGreedy:
    """Greedy that reports a usage as a served model would: one request and 10 + 2 tokens per step."""

    def __init__(self) -> None:
        self.inner = GreedyPolicy()
        self.steps = 0

    def __call__(self, obs: Any) -> Any:
        self.steps += 1
        return self.inner(obs)

    def usage(self) -> ModelUsage:
        return ModelUsage(steps=self.steps, requests=self.steps, prompt_tokens=10 * self.steps,
                          completion_tokens=2 * self.steps, latency_ms=self.steps, max_latency_ms=1)
