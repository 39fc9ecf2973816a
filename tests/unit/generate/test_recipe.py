"""Recipes: the shipped ones load, the format is strict, and impossible constraints give one clear error."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from emberbench.errors import RecipeError
from emberbench.generate import SHIPPED_RECIPES, load_recipe, recipe_from_dict
from tests.conftest import ROOT

SMALL: dict[str, Any] = {
    "recipe_format": "1.0", "name": "small", "description": "A small test recipe.", "id_prefix": "t",
    "layouts": {"hall": 1, "office": 1}, "rows": [12, 16], "cols": [12, 16],
    "people": {"count": [2, 10], "density_percent": [2, 8], "placement": {"uniform": 1, "rooms": 1}},
    "exits": {"count": [1, 2], "width": [1, 2], "placement": {"spread": 1}},
    "fire": {"ignitions": [1, 2], "placement": {"random": 1, "far": 1},
             "spread": [{"numerator": 1, "denominator": 4, "weight": 1}]},
    "max_steps": {"per_side": [2, 3], "min": 20, "max": 100},
}


def changed(path: str, value: Any) -> dict[str, Any]:
    """SMALL with the dotted ``path`` set to ``value`` (``DELETE`` removes it)."""
    data = copy.deepcopy(SMALL)
    *parents, last = path.split(".")
    target = data
    for key in parents:
        target = target[key]
    if value is DELETE:
        del target[last]
    else:
        target[last] = value
    return data


DELETE = object()


@pytest.mark.parametrize("name", SHIPPED_RECIPES)
def test_shipped_recipes_load_and_round_trip(name: str) -> None:
    """Each shipped recipe validates, and its to_dict is the file's object (so its hash is the file's)."""
    recipe = load_recipe(name)
    shipped = json.loads((ROOT / "emberbench" / "suites" / "recipes" / f"{name}.json").read_text())
    assert recipe.name == name and recipe.to_dict() == shipped
    assert recipe_from_dict(recipe.to_dict()).hash == recipe.hash


def test_a_recipe_file_loads_by_path(tmp_path) -> None:  # noqa: ANN001
    """--recipe accepts a file as well as a shipped name."""
    path = tmp_path / "r.json"
    path.write_text(json.dumps(SMALL))
    assert load_recipe(path).name == "small"


def test_future_recipe_version_is_refused() -> None:
    """A recipe of a later format version is refused, naming the version."""
    with pytest.raises(RecipeError, match="unsupported recipe_format '2.0'"):
        load_recipe(ROOT / "tests" / "golden" / "recipe-future.json")


STRUCTURE = [
    (changed("extra", 1), "unknown key(s) in recipe: extra"),
    (changed("fire.spread", []), "fire.spread must be a list of 1 to 16"),
    (changed("layouts", {"castle": 1}), "layouts has unknown kind(s) castle"),
    (changed("layouts", {"hall": 0}), "layouts must give at least one kind a positive weight"),
    (changed("rows", [12]), "rows must be a [lo, hi] pair of integers"),
    (changed("rows", [12, 300]), "rows must be an integer in [5, 256], got 300"),
    (changed("people.count", [9, 3]), "people.count is [9, 3]: the lower bound is above the upper bound"),
    (changed("people.density_percent", [1, 60]), "people.density_percent must be an integer in [1, 50]"),
    (changed("fire.spread", [{"numerator": 5, "denominator": 4, "weight": 1}]), "fire.spread[0].numerator"),
    (changed("id_prefix", "Bad Prefix"), "id_prefix 'Bad Prefix' must be lowercase letters"),
    (changed("max_steps.min", True), "max_steps.min must be an integer in [1, 10000], got True"),
    (changed("exits.placement", DELETE), "missing key(s) in exits: placement"),
]

IMPOSSIBLE = [
    (changed("rows", [8, 16]), "layout 'office' needs maps of at least 11x9 cells, but the recipe allows 8x12"),
    (changed("layouts", {"campus": 1}), "layout 'campus' needs maps of at least 20x20 cells"),
    ({**changed("layouts", {"campus": 1}), "rows": [20, 30], "cols": [20, 30], "exits": {
        "count": [1, 1], "width": [1, 1], "placement": {"spread": 1}}},
     "layout 'campus' needs at least 2 exits, but exits.count allows at most 1"),
    (changed("exits", {"count": [12, 12], "width": [6, 6], "placement": {"random": 1}}),
     "12 exits of width 6 need 83 border cells, but the smallest map (12x12) has 40"),
    (changed("people.count", [60, 80]), "people.count starts at 60, more than half of the 100 inner cells"),
    (changed("max_steps.max", 10), "max_steps.min 20 is above max_steps.max 10"),
]


@pytest.mark.parametrize(("data", "message"), STRUCTURE + IMPOSSIBLE,
                         ids=[m[:40] for _, m in STRUCTURE + IMPOSSIBLE])
def test_bad_recipes_give_one_clear_error(data: dict, message: str) -> None:
    """Each malformed or unsatisfiable recipe raises one RecipeError naming the recipe and the problem."""
    with pytest.raises(RecipeError) as info:
        recipe_from_dict(data, where="r.json")
    text = str(info.value)
    assert message in text and text.startswith("r.json") and "\n" not in text


def test_weights_do_not_depend_on_key_order() -> None:
    """A recipe's weighted choices come out in the fixed kind order, whatever the JSON key order."""
    a = recipe_from_dict(changed("layouts", {"office": 2, "hall": 1}))
    b = recipe_from_dict(changed("layouts", {"hall": 1, "office": 2}))
    assert a.layouts == b.layouts == (("office", 2), ("hall", 1)) and a.hash == b.hash


def test_unknown_shipped_name_is_read_as_a_path() -> None:
    """A name that is not a shipped recipe is a file path, and a missing file is one clear error."""
    with pytest.raises(RecipeError, match="cannot read"):
        load_recipe("no-such-recipe")
