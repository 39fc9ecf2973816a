"""Calibration and tier-filtered generation on Ray give exactly the in-process bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from emberbench.canonical import canonical_bytes
from emberbench.generate import TierFilter, calibrate_suite, generate_suite, load_recipe, write_suite
from emberbench.suite import load_suite
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
