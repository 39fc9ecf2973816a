"""Any valid recipe either generates valid scenarios or fails with one GenerationError, never a crash."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from emberbench.errors import GenerationError, RecipeError
from emberbench.generate import generate_scenario, recipe_from_dict
from emberbench.generate.recipe import EXIT_PLACEMENTS, FIRE_PLACEMENTS, LAYOUT_KINDS, PEOPLE_PLACEMENTS
from emberbench.sim.scenario_rules import scenario_problems


def ranges(lo: int, hi: int) -> st.SearchStrategy[list[int]]:
    """An inclusive [a, b] range inside [lo, hi]."""
    return st.tuples(st.integers(lo, hi), st.integers(lo, hi)).map(lambda t: sorted(t))


def weights(kinds: tuple[str, ...]) -> st.SearchStrategy[dict[str, int]]:
    """Weights for a non-empty subset of kinds, one of them positive."""
    return st.dictionaries(st.sampled_from(kinds), st.integers(0, 3), min_size=1).filter(lambda w: any(w.values()))


recipes = st.fixed_dictionaries({
    "recipe_format": st.just("1.0"), "name": st.just("prop"), "description": st.just("property test"),
    "id_prefix": st.just("p"), "layouts": weights(LAYOUT_KINDS), "rows": ranges(5, 40), "cols": ranges(5, 40),
    "people": st.fixed_dictionaries({"count": ranges(1, 60), "density_percent": ranges(1, 50),
                                     "placement": weights(PEOPLE_PLACEMENTS)}),
    "exits": st.fixed_dictionaries({"count": ranges(1, 6), "width": ranges(1, 4), "placement": weights(EXIT_PLACEMENTS)}),
    "fire": st.fixed_dictionaries({
        "ignitions": ranges(1, 4), "placement": weights(FIRE_PLACEMENTS),
        "spread": st.lists(st.integers(1, 8).flatmap(lambda den: st.fixed_dictionaries({
            "numerator": st.integers(0, den), "denominator": st.just(den), "weight": st.integers(1, 3)})),
            min_size=1, max_size=3)}),
    "max_steps": st.fixed_dictionaries({"per_side": ranges(1, 5), "min": st.integers(1, 50),
                                        "max": st.integers(50, 300)}),
})


@given(recipes, st.integers(0, (1 << 64) - 1), st.integers(0, 50))
def test_generation_succeeds_or_fails_cleanly(data: dict, seed: int, index: int) -> None:
    """A recipe that validates gives a scenario with no problem, or a GenerationError; nothing else."""
    try:
        recipe = recipe_from_dict(data)
    except RecipeError:
        assume(False)
        return
    try:
        g = generate_scenario(recipe, seed, index)
    except GenerationError as exc:
        assert "failed all 64 draws" in str(exc)
        return
    assert scenario_problems(g.scenario.to_dict()) == []
    assert recipe.rows.lo <= g.scenario.height <= recipe.rows.hi
