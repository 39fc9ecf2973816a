"""The shipped suite emberbench-v1-generated 1.0.0: pinned by hash, rebuilt byte for byte, selectable by id."""

from __future__ import annotations

import sys

import pytest

from emberbench.generate import generate_suite, load_generation, load_recipe
from emberbench.generate.writer import json_file_bytes, scenario_file_bytes
from emberbench.generate.features import FAMILY_IDS
from emberbench.sim.suite import GENERATED_SUITE_ID, PUBLIC_SUITE_ID, load_suite, shipped_suite_path
from tests.conftest import ROOT

GENERATED_SUITE_HASH = "7f68487d85fdbb7b135f581fcdea63ff854ebf2bb06fcd26ae185f4e760f4e0f"
PUBLIC_SUITE_HASH = "6f72960cf522e9443eaac6774993d7cd52962c43ba57fb7e762440d13a8aec26"


@pytest.fixture(scope="module")
def generated():
    """The shipped generated suite, loaded by id."""
    return load_suite(GENERATED_SUITE_ID)


def test_generated_suite_hash_is_pinned(generated) -> None:  # noqa: ANN001
    """The generated suite hashes to the pinned value and the public suite is unchanged beside it."""
    assert (generated.id, generated.version, generated.hash) == (GENERATED_SUITE_ID, "1.0.0", GENERATED_SUITE_HASH)
    assert load_suite(PUBLIC_SUITE_ID).hash == PUBLIC_SUITE_HASH == load_suite().hash


def test_generated_suite_shape(generated) -> None:  # noqa: ANN001
    """At least 200 scenarios of the standard recipe, every layout, families in declaration order."""
    assert len(generated.scenarios) >= 200
    assert all(s.id.startswith("std-") for s in generated.scenarios)
    family_ids = [f.id for f in generated.families]
    assert family_ids == [f for f in FAMILY_IDS if f in family_ids]
    assert {"office", "hall", "corridors", "campus", "single-exit", "multi-exit", "dead-end",
            "fire-near-exit", "bottleneck", "crowd"} <= set(family_ids)
    record = load_generation(shipped_suite_path(GENERATED_SUITE_ID))
    assert record is not None and record.suite_hash == generated.hash
    assert (record.recipe.name, record.count, record.seed, record.tiers) == ("standard", 200, 1, None)


def test_rebuild_gives_identical_bytes() -> None:
    """Generating with the build script's parameters reproduces every shipped file byte for byte."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import build_generated_suite as build
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    suite = generate_suite(load_recipe(build.RECIPE), build.COUNT, build.SEED, suite_id=build.SUITE_ID,
                           suite_version=build.SUITE_VERSION)
    shipped = shipped_suite_path(GENERATED_SUITE_ID)
    expected = {f"scenarios/{s.id}.json": scenario_file_bytes(s) for s in suite.scenarios}
    expected["suite.json"] = json_file_bytes(suite.manifest)
    expected["generation.json"] = json_file_bytes(suite.generation)
    assert sorted(expected) == sorted(str(p.relative_to(shipped)) for p in shipped.rglob("*.json"))
    for rel, data in expected.items():
        assert (shipped / rel).read_bytes() == data, rel


def test_generated_suite_stays_small_for_the_wheel() -> None:
    """The shipped files stay near one megabyte (they compress to about a fifth)."""
    size = sum(p.stat().st_size for p in shipped_suite_path(GENERATED_SUITE_ID).rglob("*.json"))
    assert size < 1_200_000
