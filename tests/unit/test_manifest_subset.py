"""Subset manifests keep the manifest order rules; scored manifests draw fresh secret seeds."""

from __future__ import annotations

import pytest

from emberbench.errors import ManifestError
from emberbench.results.manifest import (
    MAX_SEED,
    build_manifest,
    check_manifest,
    draw_scored_seeds,
    load_manifest,
    select_scenarios,
    write_manifest,
)


def test_subset_keeps_suite_order_and_index_rules(suite, tmp_path) -> None:  # noqa: ANN001
    """Scenarios named in any order are scheduled in suite order, seeds inner as given, index = position."""
    named = ["v1-pub-12-smouldering-two-exits", "v1-pub-02-fire-at-near-exit"]
    ids = select_scenarios(suite, named, ["trapped"])
    assert ids == ["v1-pub-02-fire-at-near-exit", "v1-pub-08-sealed-room", "v1-pub-12-smouldering-two-exits"]
    m = build_manifest(suite, [7, 3], scenario_ids=list(reversed(ids)))
    assert [(e.index, e.scenario_id, e.seed) for e in m.episodes] == [
        (i, sid, seed) for i, (sid, seed) in enumerate((s, x) for s in ids for x in (7, 3))]
    assert all(e.scenario_hash == suite.scenario(e.scenario_id).content_hash for e in m.episodes)
    check_manifest(m, suite)
    write_manifest(m, tmp_path / "m.json")
    assert load_manifest(tmp_path / "m.json", suite).hash == m.hash


def test_a_subset_differs_from_the_full_manifest_and_the_full_one_is_unchanged(suite) -> None:  # noqa: ANN001
    """Selecting every scenario is the full manifest; a strict subset has another hash."""
    full = build_manifest(suite, [0, 1, 2])
    assert full.hash == "67c8b1be5db622966303cb709a107d6dca770a6219ea931ecb72e1a4e4aaef16"
    assert build_manifest(suite, [0, 1, 2], scenario_ids=[s.id for s in suite.scenarios]).hash == full.hash
    assert build_manifest(suite, [0, 1, 2], scenario_ids=["v1-pub-01-single-exit-sparse"]).hash != full.hash


def test_families_select_their_members(suite) -> None:  # noqa: ANN001
    """A family selects its members, and two families their union, once each."""
    ids = select_scenarios(suite, families=["single-exit", "exit-threatened"])
    assert ids == [s.id for s in suite.scenarios
                   if {"single-exit", "exit-threatened"} & set(suite.families_of(s.id))]


@pytest.mark.parametrize(("scenarios", "families", "message"), [
    (["nope"], [], "has no scenario 'nope'"),
    ([], ["castles"], "has no family 'castles'"),
])
def test_unknown_names_are_errors(suite, scenarios, families, message) -> None:  # noqa: ANN001
    """An unknown scenario or family is one clear error, not an empty or partial manifest."""
    with pytest.raises(ManifestError, match=message):
        select_scenarios(suite, scenarios, families)


def test_an_empty_selection_is_an_error(suite) -> None:  # noqa: ANN001
    """A selection with no scenario cannot make a manifest."""
    with pytest.raises(ManifestError, match="holds no scenario"):
        build_manifest(suite, [0], scenario_ids=[])


def test_scored_seeds_are_fresh_distinct_and_in_range() -> None:
    """Scored seeds come from the OS: distinct, 64-bit, and different on every draw."""
    seeds = draw_scored_seeds(50)
    assert len(set(seeds)) == 50 and all(0 <= s <= MAX_SEED for s in seeds)
    assert draw_scored_seeds(4) != draw_scored_seeds(4)
    with pytest.raises(ManifestError, match="in \\[1, 10000\\]"):
        draw_scored_seeds(0)
