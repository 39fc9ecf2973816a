"""EMBERBench as a Gymnasium environment: ``EmberBench-v1`` (needs ``pip install 'emberbench[gym]'``).

Importing this package registers ``EmberBench-v1`` with Gymnasium::

    import gymnasium
    import emberbench.gym  # registers EmberBench-v1

    env = gymnasium.make("EmberBench-v1", scenario="v1-pub-05-four-exits-crowd")
    envs = gymnasium.make_vec("EmberBench-v1", num_envs=64)  # the lockstep vector environment

docs/gym.md describes the observation, the action, the reward, seeding and
how a policy trained here is evaluated with ``emberbench run``.
"""

from __future__ import annotations

try:
    import gymnasium
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise ImportError("emberbench.gym needs Gymnasium: pip install 'emberbench[gym]'") from exc

from .env import DEFAULT_SCENARIO, EmberBenchEnv, Reward
from .layout import ArrayPolicy, Layout, ObservationEncoder
from .vector import EmberBenchVectorEnv

ENV_ID = "EmberBench-v1"

__all__ = ["DEFAULT_SCENARIO", "ENV_ID", "ArrayPolicy", "EmberBenchEnv", "EmberBenchVectorEnv", "Layout",
           "ObservationEncoder", "Reward"]

if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="emberbench.gym.env:EmberBenchEnv",
                       vector_entry_point="emberbench.gym.vector:EmberBenchVectorEnv")
