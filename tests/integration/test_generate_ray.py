"""Calibration and tier-filtered generation on Ray give exactly the in-process bytes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from emberbench.io.canonical import canonical_bytes
from emberbench.generate import TierFilter, calibrate_suite, generate_suite, load_recipe, write_suite
from emberbench.sim.suite import load_suite
from tests.conftest import ROOT

pytestmark = pytest.mark.ray


def test_calibration_on_ray_matches_the_golden_file(ray_cluster, tmp_path: Path) -> None:  # noqa: ANN001
    """The golden calibration (computed in process) comes out byte for byte from Ray tasks."""
    from emberbench.cluster import RayMapper

    write_suite(generate_suite(load_recipe("dev"), 3, 5, suite_id="tiny"), tmp_path / "suite")
    suite = load_suite(tmp_path / "suite")
    calibration = calibrate_suite(suite, [0, 1], mapper=RayMapper(ray_cluster.workers, jobs_per_task=1))
    golden = (ROOT / "tests" / "golden" / "calibration-1.0.json").read_bytes()
    assert canonical_bytes(calibration.to_dict()) + b"\n" == golden


def test_tier_filtered_generation_on_ray_matches_in_process(ray_cluster) -> None:  # noqa: ANN001
    """Keeping only hard and extreme scenarios picks the same candidates wherever they are calibrated."""
    from emberbench.cluster import RayMapper

    recipe, tiers = load_recipe("dev"), TierFilter("hard", "extreme", (0,))
    local = generate_suite(recipe, 3, 21, tiers=tiers)
    remote = generate_suite(recipe, 3, 21, tiers=tiers, mapper=RayMapper(ray_cluster.workers))
    assert remote.hash == local.hash and len(local.scenarios) == 3
    assert local.generation["tiers"]["min_tier"] == "hard"


def _sleep_then_clock(seconds: float) -> tuple[float, float]:
    """A mapper job: sleep, then say when it ended (wall clock, comparable between local processes)."""
    time.sleep(seconds)
    return seconds, time.time()


def test_mapper_sends_new_tasks_while_a_long_one_runs(ray_cluster) -> None:  # noqa: ANN001
    """One long task does not hold back the rest: later jobs run and end before it, results stay in order."""
    from emberbench.cluster import RayMapper

    jobs = [2.0] + [0.01] * 11
    mapper = RayMapper(ray_cluster.workers, jobs_per_task=1, in_flight_per_worker=2)
    results = mapper(_sleep_then_clock, iter(jobs))
    assert [seconds for seconds, _ in results] == jobs
    first_end = results[0][1]
    # Only 4 tasks fit in flight at first; job 8 can start only once others finished and made room.
    assert results[8][1] < first_end
