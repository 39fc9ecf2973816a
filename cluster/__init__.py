"""The Ray cluster runner: the only package that imports ``ray``.

The same evaluation as :mod:`emberbench`, on every core of one machine (an
embedded Ray instance) or on a Ray cluster, with byte-identical output. Ray
itself is imported only when a session starts (:mod:`cluster.session`), so
importing this package is cheap. See docs/cluster.md.

Public surface:

* :func:`ray_session` starts or joins Ray (token authentication, loopback);
* :class:`RayExecutor` plays episodes on Ray actors for the core's
  coordinator (:func:`emberbench.evaluation.runner.run_evaluation`);
* :class:`RayAuthenticator` replays records in parallel, same verdicts;
* :class:`RayMapper` runs the statistics' (group, metric) jobs as Ray tasks;
* :func:`run_on_ray`, :func:`verify_on_ray`, :func:`audit_on_ray`,
  :func:`aggregate_on_ray`, :func:`paired_on_ray`, :func:`verify_run_on_ray`: one
  call per CLI command;
* :func:`ray_executor`: a session and its episode workers, opened by the
  runner only when a run has enough work for Ray;
* :func:`ray_mapper`: a :class:`RayMapper` for the scenario generator's
  calibration jobs, for the length of a ``with`` block;
* :mod:`cluster.submit`: Ray Job submission of a CLI command.
"""

from __future__ import annotations

from .auth import RayAuthenticator
from .commands import (
    aggregate_on_ray,
    audit_on_ray,
    paired_on_ray,
    ray_executor,
    ray_mapper,
    run_on_ray,
    verify_on_ray,
    verify_run_on_ray,
)
from .executor import ExecutorStats, RayExecutor
from .reducer import RayMapper
from .session import ClusterInfo, ray_session

__all__ = [
    "ClusterInfo",
    "ExecutorStats",
    "RayAuthenticator",
    "RayExecutor",
    "RayMapper",
    "aggregate_on_ray",
    "audit_on_ray",
    "paired_on_ray",
    "ray_executor",
    "ray_mapper",
    "ray_session",
    "run_on_ray",
    "verify_on_ray",
    "verify_run_on_ray",
]
