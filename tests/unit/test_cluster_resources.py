"""GPUs and custom resources of Ray episode workers: checked, passed to every actor, fitted to the cluster."""

from __future__ import annotations

import pytest

from emberbench.cluster.resources import WorkerResources
from emberbench.errors import ClusterError
from emberbench.evaluation.drive import DriveOptions


class FakeActorClass:
    """Stands in for ``ray.remote(EpisodeWorker)``: records the options and constructor arguments of each actor."""

    def __init__(self) -> None:
        self.options_seen: list[dict] = []
        self.args_seen: list[tuple] = []

    def options(self, **options):  # noqa: ANN003, ANN201
        self.options_seen.append(options)
        return self

    def remote(self, *args):  # noqa: ANN002, ANN201
        self.args_seen.append(args)
        return object()


@pytest.mark.parametrize(("resources", "expected"), [
    (WorkerResources(), {"num_cpus": 1}),
    (WorkerResources(gpus=1), {"num_cpus": 1, "num_gpus": 1.0}),
    (WorkerResources(gpus=0.25, resources=(("model_slot", 1), ("accelerator_type:A100", 0.5))),
     {"num_cpus": 1, "num_gpus": 0.25, "resources": {"accelerator_type:A100": 0.5, "model_slot": 1.0}}),
])
def test_every_worker_actor_is_created_with_the_resources(monkeypatch, suite, resources, expected) -> None:  # noqa: ANN001
    """The executor's actors ask Ray for one CPU plus the GPUs and custom resources given, keep their restart
    policy, and are built with the driver options."""
    import emberbench.cluster.executor as executor_module

    fake = FakeActorClass()
    monkeypatch.setattr(executor_module, "remote_class", lambda cls: fake)
    drive = DriveOptions(batch_size=8)
    ex = executor_module.RayExecutor(suite, "greedy", workers=3, drive=drive, resources=resources)
    for _ in range(3):
        ex._new_actor()
    assert fake.options_seen == [{**expected, "max_restarts": -1, "max_task_retries": 0,
                                  "scheduling_strategy": "SPREAD", "enable_task_events": False}] * 3
    assert all(args[-1] == drive for args in fake.args_seen)


@pytest.mark.parametrize(("gpus", "resources", "message"), [
    (-1, {}, "from 0 to 1024"),
    (1.5, {}, "above 1 must be a whole number"),
    (float("nan"), {}, "from 0 to 1024"),
    (True, {}, "must be a number"),
    (0, {"GPU": 1}, "not a custom resource"),
    (0, {"CPU": 1}, "not a custom resource"),
    (0, {"bad name": 1}, "is not a resource name"),
    (0, {"slot": 2.5}, "above 1 must be a whole number"),
    (0, {"slot": "1"}, "must be a number"),
])
def test_bad_resources_are_refused(gpus, resources, message) -> None:  # noqa: ANN001
    """Quantities Ray would refuse, and names that are not custom resources, fail before Ray is asked."""
    with pytest.raises(ClusterError, match=message):
        WorkerResources.from_mapping(gpus, resources)


@pytest.mark.parametrize(("asked", "requested", "offered", "expected"), [
    (WorkerResources(), None, {"CPU": 8}, 8),
    (WorkerResources(gpus=1), None, {"CPU": 8, "GPU": 2}, 2),
    (WorkerResources(gpus=0.5), None, {"CPU": 8, "GPU": 2}, 4),
    (WorkerResources(gpus=0.5), 3, {"CPU": 8, "GPU": 2}, 3),
    (WorkerResources(resources=(("slot", 2),)), None, {"CPU": 8, "slot": 5}, 2),
])
def test_workers_are_fitted_to_the_cluster(asked, requested, offered, expected) -> None:  # noqa: ANN001
    """Without --workers, as many workers as the scarcest resource allows (at most the default)."""
    assert asked.fit_workers(requested, int(offered["CPU"]), offered) == expected


def test_workers_that_cannot_fit_are_refused() -> None:
    """No node with a GPU, or more workers asked than fit: refused, not left waiting forever."""
    with pytest.raises(ClusterError, match="no node of the Ray cluster can hold an episode worker"):
        WorkerResources(gpus=1).fit_workers(None, 2, {"CPU": 2})
    with pytest.raises(ClusterError, match="--workers 3 do not fit"):
        WorkerResources(gpus=1).fit_workers(3, 8, {"CPU": 8, "GPU": 2})
