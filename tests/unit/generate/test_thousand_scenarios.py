"""Every one of 1,000 generated scenarios of each shipped recipe validates (generation only, no play)."""

from __future__ import annotations

import pytest

from emberbench.generate import generate_scenario, load_recipe
from emberbench.sim.scenario_rules import scenario_problems

COUNT = 1000


def _check_recipe(name: str, seed: int) -> None:
    recipe = load_recipe(name)
    for i in range(COUNT):
        g = generate_scenario(recipe, seed, i)
        assert scenario_problems(g.scenario.to_dict(), where=g.scenario.id) == []
        assert g.scenario.id.startswith(f"{recipe.id_prefix}-{i:04d}-")


def test_dev_recipe_thousand_scenarios_validate() -> None:
    """1,000 dev scenarios: each passes every rule of the scenario format, reachability included."""
    _check_recipe("dev", 17)


@pytest.mark.slow
def test_standard_recipe_thousand_scenarios_validate() -> None:
    """1,000 standard scenarios: each passes every rule of the scenario format, reachability included."""
    _check_recipe("standard", 17)


@pytest.mark.slow
def test_large_recipe_thousand_scenarios_validate() -> None:
    """1,000 large scenarios (up to 256x256): each passes every rule of the scenario format."""
    _check_recipe("large", 17)
