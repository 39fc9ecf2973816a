"""What each episode worker asks Ray for: one CPU, and optionally GPUs and custom resources.

``--gpus-per-worker`` and ``--resources`` (docs/cluster.md) become the
options of every episode worker actor (:meth:`WorkerResources.actor_options`),
so Ray places each worker on a node that has them and, for GPUs, sets the
worker's ``CUDA_VISIBLE_DEVICES`` to the devices it was given. Ray never
starts an actor whose resources no node has; it waits. So before any worker
starts, the number of workers is fitted to what the cluster offers
(:meth:`WorkerResources.fit_workers`): a default worker count shrinks to fit,
an explicit ``--workers`` that cannot fit is refused.

Ray's rule for quantities holds here too: a quantity above 1 is a whole
number; below 1 it is a fraction of one unit (``0.5`` GPU: two workers share
one device).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from emberbench.errors import ClusterError

MAX_QUANTITY = 1024.0
RESERVED = frozenset({"CPU", "GPU", "memory", "object_store_memory"})
"""Resource names with options of their own (a worker takes one CPU; GPUs come from --gpus-per-worker)."""
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.:/-]{0,127}")


def _quantity(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ClusterError(f"{what} must be a number, got {value!r:.60}")
    number = float(value)
    if not (math.isfinite(number) and 0 <= number <= MAX_QUANTITY):
        raise ClusterError(f"{what} must be a number from 0 to {MAX_QUANTITY:g}, got {value!r:.60}")
    if number > 1 and not number.is_integer():
        raise ClusterError(f"{what} above 1 must be a whole number (Ray's rule), got {value!r:.60}")
    return number


@dataclass(frozen=True, slots=True)
class WorkerResources:
    """The resources of one episode worker besides its CPU.

    Attributes:
        gpus: GPUs per worker (0: none; a fraction shares a device).
        resources: custom resources per worker, ``(name, quantity)`` sorted by name.

    Raises:
        ClusterError: a quantity out of range, a reserved or malformed name.
    """

    gpus: float = 0.0
    resources: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "gpus", _quantity(self.gpus, "--gpus-per-worker"))
        checked = []
        for name, quantity in self.resources:
            if not isinstance(name, str) or _NAME_RE.fullmatch(name) is None:
                raise ClusterError(f"--resources: {name!r:.60} is not a resource name "
                                   "(letters, digits and _ . : / -, starting with a letter or _)")
            if name in RESERVED:
                raise ClusterError(f"--resources: {name!r} is not a custom resource (each worker takes one CPU; "
                                   "ask for GPUs with --gpus-per-worker)")
            amount = _quantity(quantity, f"--resources {name!r}")
            if amount > 0:
                checked.append((name, amount))
        object.__setattr__(self, "resources", tuple(sorted(checked)))

    @classmethod
    def from_mapping(cls, gpus: float = 0.0, resources: Mapping[str, Any] | None = None) -> WorkerResources:
        """From ``--gpus-per-worker`` and the parsed ``--resources`` object."""
        if resources is not None and not isinstance(resources, Mapping):
            raise ClusterError("--resources must be a JSON object of resource name to quantity, "
                               f"got {type(resources).__name__}")
        return cls(gpus, tuple((resources or {}).items()))

    def actor_options(self) -> dict[str, Any]:
        """The resource options of one worker actor (``num_cpus``, and ``num_gpus``/``resources`` when asked)."""
        options: dict[str, Any] = {"num_cpus": 1}
        if self.gpus:
            options["num_gpus"] = self.gpus
        if self.resources:
            options["resources"] = dict(self.resources)
        return options

    def describe(self) -> str:
        """``1 CPU, 0.5 GPU, 1 model_slot`` (for messages)."""
        parts = ["1 CPU"] + ([f"{self.gpus:g} GPU"] if self.gpus else [])
        return ", ".join(parts + [f"{amount:g} {name}" for name, amount in self.resources])

    def fit_workers(self, requested: int | None, default: int, offered: Mapping[str, float]) -> int:
        """How many workers to start, given what the cluster offers in total (``ray.cluster_resources()``).

        Args:
            requested: ``--workers``, or None.
            default: the workers a run would start without resources (every CPU).
            offered: the cluster's total resources.

        Raises:
            ClusterError: no worker fits, or ``requested`` workers do not.
        """
        fits = math.inf
        for name, amount in (("GPU", self.gpus), *self.resources):
            if amount:
                fits = min(fits, math.floor(float(offered.get(name, 0.0)) / amount + 1e-9))
        if fits < 1:
            raise ClusterError(f"no node of the Ray cluster can hold an episode worker ({self.describe()}): "
                               f"it offers {_offer(offered, self)}")
        if requested is not None and requested > fits:
            raise ClusterError(f"--workers {requested} do not fit: each takes {self.describe()}, and the Ray "
                               f"cluster offers {_offer(offered, self)}")
        wanted = default if requested is None else requested
        return int(min(wanted, fits))


def _offer(offered: Mapping[str, float], asked: WorkerResources) -> str:
    names = ["GPU"] + [name for name, _ in asked.resources]
    return ", ".join(f"{float(offered.get(name, 0.0)):g} {name}" for name in names)


NO_EXTRA = WorkerResources()


__all__ = ["NO_EXTRA", "RESERVED", "WorkerResources"]
