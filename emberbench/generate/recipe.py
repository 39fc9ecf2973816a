"""Generation recipes (``recipe_format`` 1.0): what the scenario generator may draw, strictly validated.

A recipe is a JSON object (docs/scenario-format.md#recipes). Every number
range is an inclusive ``[lo, hi]`` pair of integers; every choice is an
object of weights keyed by kind, and kinds are always visited in the fixed
order of this module's tuples, never in the order of the JSON object, so a
recipe's draws cannot depend on how its keys were written.

Validation has two stages: the shape (keys, types, caps), then the
constraints that no map could satisfy (a layout that needs bigger maps than
the recipe allows, more exits than the smallest border holds...). Either
raises one :class:`RecipeError` naming the recipe and the problem.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ..io.canonical import digest
from ..errors import RecipeError
from ..io.input_policy import SMALL_JSON, load_json
from ..io.versions import RECIPE_FORMAT_VERSION

LAYOUT_KINDS = ("office", "hall", "corridors", "campus")
PEOPLE_PLACEMENTS = ("uniform", "rooms", "near-exits")
EXIT_PLACEMENTS = ("spread", "random", "one-side")
FIRE_PLACEMENTS = ("random", "near-exit", "near-crowd", "far")
SHIPPED_RECIPES = ("dev", "standard", "large")

LAYOUT_MIN_SIZE = {"office": (11, 9), "hall": (6, 6), "corridors": (7, 10), "campus": (20, 20)}
"""Smallest (rows, cols) each layout can build."""
LAYOUT_MIN_EXITS = {"office": 1, "hall": 1, "corridors": 1, "campus": 2}
"""A campus is a building with several exits."""

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
PREFIX_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")

_TOP = ("recipe_format", "name", "description", "id_prefix", "layouts", "rows", "cols", "people", "exits",
        "fire", "max_steps")
_CAPS = {
    "rows": (5, 256), "cols": (5, 256), "people.count": (1, 5000), "people.density_percent": (1, 50),
    "exits.count": (1, 12), "exits.width": (1, 6), "fire.ignitions": (1, 12), "max_steps.per_side": (1, 50),
}


@dataclass(frozen=True, slots=True)
class IntRange:
    """An inclusive range of integers."""

    lo: int
    hi: int

    def to_list(self) -> list[int]:
        """The ``[lo, hi]`` pair."""
        return [self.lo, self.hi]


@dataclass(frozen=True, slots=True)
class SpreadOption:
    """One spread probability the generator may draw, with its weight."""

    numerator: int
    denominator: int
    weight: int


@dataclass(frozen=True, slots=True)
class Recipe:
    """A validated recipe. ``hash`` is the SHA-256 of its canonical JSON.

    Weighted choices are tuples of ``(kind, weight)`` in the module's fixed
    kind order, with zero weights left out.
    """

    name: str
    description: str
    id_prefix: str
    layouts: tuple[tuple[str, int], ...]
    rows: IntRange
    cols: IntRange
    people_count: IntRange
    people_density: IntRange
    people_placement: tuple[tuple[str, int], ...]
    exit_count: IntRange
    exit_width: IntRange
    exit_placement: tuple[tuple[str, int], ...]
    ignitions: IntRange
    fire_placement: tuple[tuple[str, int], ...]
    spread: tuple[SpreadOption, ...]
    steps_per_side: IntRange
    steps_min: int
    steps_max: int

    @property
    def hash(self) -> str:
        """SHA-256 of the recipe's canonical JSON."""
        return digest(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        """The recipe's JSON object (zero weights are written as they were read: left out)."""
        return {
            "recipe_format": RECIPE_FORMAT_VERSION,
            "name": self.name,
            "description": self.description,
            "id_prefix": self.id_prefix,
            "layouts": dict(self.layouts),
            "rows": self.rows.to_list(),
            "cols": self.cols.to_list(),
            "people": {"count": self.people_count.to_list(), "density_percent": self.people_density.to_list(),
                       "placement": dict(self.people_placement)},
            "exits": {"count": self.exit_count.to_list(), "width": self.exit_width.to_list(),
                      "placement": dict(self.exit_placement)},
            "fire": {"ignitions": self.ignitions.to_list(), "placement": dict(self.fire_placement),
                     "spread": [{"numerator": s.numerator, "denominator": s.denominator, "weight": s.weight}
                                for s in self.spread]},
            "max_steps": {"per_side": self.steps_per_side.to_list(), "min": self.steps_min,
                          "max": self.steps_max},
        }


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


class _Reader:
    """Reads one recipe object; every failure names the recipe source and the key path."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, message: str) -> RecipeError:
        return RecipeError(f"{self.where}: {message}")

    def obj(self, value: object, keys: tuple[str, ...], path: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(f"{path} must be a JSON object")
        unknown, missing = sorted(set(value) - set(keys)), [k for k in keys if k not in value]
        if unknown:
            raise self.fail(f"unknown key(s) in {path}: {', '.join(unknown)}")
        if missing:
            raise self.fail(f"missing key(s) in {path}: {', '.join(missing)}")
        return value

    def text(self, value: object, path: str, pattern: re.Pattern[str] | None = None, limit: int = 500) -> str:
        if not isinstance(value, str) or not value.strip() or len(value) > limit:
            raise self.fail(f"{path} must be a non-empty string of at most {limit} characters")
        if pattern is not None and not pattern.fullmatch(value):
            raise self.fail(f"{path} {value!r} must be lowercase letters, digits and '-' (at most 40)")
        return value

    def int_in(self, value: object, path: str, lo: int, hi: int) -> int:
        if not _is_int(value) or not lo <= value <= hi:  # type: ignore[operator]
            raise self.fail(f"{path} must be an integer in [{lo}, {hi}], got {value!r}")
        return value  # type: ignore[return-value]

    def range(self, value: object, path: str) -> IntRange:
        lo, hi = _CAPS[path]
        if not (isinstance(value, list) and len(value) == 2 and all(_is_int(v) for v in value)):
            raise self.fail(f"{path} must be a [lo, hi] pair of integers, got {value!r}")
        for v in value:
            self.int_in(v, path, lo, hi)
        if value[0] > value[1]:
            raise self.fail(f"{path} is {value}: the lower bound is above the upper bound")
        return IntRange(value[0], value[1])

    def weights(self, value: object, path: str, kinds: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
        if not isinstance(value, dict) or not value:
            raise self.fail(f"{path} must be a non-empty object of weights by kind ({', '.join(kinds)})")
        unknown = sorted(set(value) - set(kinds))
        if unknown:
            raise self.fail(f"{path} has unknown kind(s) {', '.join(unknown)} (known: {', '.join(kinds)})")
        out = tuple((k, self.int_in(value[k], f"{path}.{k}", 0, 1000)) for k in kinds if k in value)
        if not any(w for _, w in out):
            raise self.fail(f"{path} must give at least one kind a positive weight")
        return tuple((k, w) for k, w in out if w)

    def spread(self, value: object) -> tuple[SpreadOption, ...]:
        if not isinstance(value, list) or not 1 <= len(value) <= 16:
            raise self.fail("fire.spread must be a list of 1 to 16 {numerator, denominator, weight} objects")
        out = []
        for i, item in enumerate(value):
            path = f"fire.spread[{i}]"
            item = self.obj(item, ("numerator", "denominator", "weight"), path)
            den = self.int_in(item["denominator"], f"{path}.denominator", 1, 1 << 32)
            num = self.int_in(item["numerator"], f"{path}.numerator", 0, den)
            out.append(SpreadOption(num, den, self.int_in(item["weight"], f"{path}.weight", 1, 1000)))
        return tuple(out)


def recipe_from_dict(data: object, *, where: str = "recipe") -> Recipe:
    """Validate a parsed recipe object and return the :class:`Recipe`.

    Raises:
        RecipeError: the first problem, prefixed with ``where``.
    """
    rd = _Reader(where)
    if isinstance(data, dict) and data.get("recipe_format", RECIPE_FORMAT_VERSION) != RECIPE_FORMAT_VERSION:
        raise rd.fail(f"unsupported recipe_format {data['recipe_format']!r} (this version reads "
                      f"{RECIPE_FORMAT_VERSION!r})")
    top = rd.obj(data, _TOP, "recipe")
    name = rd.text(top["name"], "name", NAME_RE, 40)
    rd.where = f"{where} (recipe {name!r})"
    people = rd.obj(top["people"], ("count", "density_percent", "placement"), "people")
    exits = rd.obj(top["exits"], ("count", "width", "placement"), "exits")
    fire = rd.obj(top["fire"], ("ignitions", "placement", "spread"), "fire")
    steps = rd.obj(top["max_steps"], ("per_side", "min", "max"), "max_steps")
    recipe = Recipe(
        name=name, description=rd.text(top["description"], "description"),
        id_prefix=rd.text(top["id_prefix"], "id_prefix", PREFIX_RE, 40),
        layouts=rd.weights(top["layouts"], "layouts", LAYOUT_KINDS),
        rows=rd.range(top["rows"], "rows"), cols=rd.range(top["cols"], "cols"),
        people_count=rd.range(people["count"], "people.count"),
        people_density=rd.range(people["density_percent"], "people.density_percent"),
        people_placement=rd.weights(people["placement"], "people.placement", PEOPLE_PLACEMENTS),
        exit_count=rd.range(exits["count"], "exits.count"), exit_width=rd.range(exits["width"], "exits.width"),
        exit_placement=rd.weights(exits["placement"], "exits.placement", EXIT_PLACEMENTS),
        ignitions=rd.range(fire["ignitions"], "fire.ignitions"),
        fire_placement=rd.weights(fire["placement"], "fire.placement", FIRE_PLACEMENTS),
        spread=rd.spread(fire["spread"]), steps_per_side=rd.range(steps["per_side"], "max_steps.per_side"),
        steps_min=rd.int_in(steps["min"], "max_steps.min", 1, 10_000),
        steps_max=rd.int_in(steps["max"], "max_steps.max", 1, 10_000),
    )
    _check_satisfiable(recipe, rd)
    return recipe


def _check_satisfiable(r: Recipe, rd: _Reader) -> None:
    """Refuse constraints that no map drawn from the recipe could meet."""
    if r.steps_min > r.steps_max:
        raise rd.fail(f"max_steps.min {r.steps_min} is above max_steps.max {r.steps_max}")
    for kind, _ in r.layouts:
        need_rows, need_cols = LAYOUT_MIN_SIZE[kind]
        if r.rows.lo < need_rows or r.cols.lo < need_cols:
            raise rd.fail(f"layout {kind!r} needs maps of at least {need_rows}x{need_cols} cells, but the "
                          f"recipe allows {r.rows.lo}x{r.cols.lo}")
        if r.exit_count.hi < LAYOUT_MIN_EXITS[kind]:
            raise rd.fail(f"layout {kind!r} needs at least {LAYOUT_MIN_EXITS[kind]} exits, but exits.count "
                          f"allows at most {r.exit_count.hi}")
    border = 2 * ((r.rows.lo - 2) + (r.cols.lo - 2))
    cells = r.exit_count.lo * (r.exit_width.lo + 1) - 1
    if cells > border:
        raise rd.fail(f"{r.exit_count.lo} exits of width {r.exit_width.lo} need {cells} border cells, but the "
                      f"smallest map ({r.rows.lo}x{r.cols.lo}) has {border}")
    floor = (r.rows.lo - 2) * (r.cols.lo - 2)
    if r.people_count.lo > floor // 2:
        raise rd.fail(f"people.count starts at {r.people_count.lo}, more than half of the {floor} inner cells "
                      f"of the smallest map ({r.rows.lo}x{r.cols.lo})")


def recipes_path() -> Path:
    """Folder of the shipped recipes (package data)."""
    return Path(str(resources.files("emberbench") / "suites" / "recipes"))


def load_recipe(name_or_path: str | os.PathLike[str]) -> Recipe:
    """A shipped recipe by name (``dev``, ``standard``, ``large``) or a recipe file, validated.

    Raises:
        RecipeError: the file cannot be read under the input policy, is not
            strict JSON, or is not a valid recipe.
    """
    text = os.fspath(name_or_path)
    path = recipes_path() / f"{text}.json" if text in SHIPPED_RECIPES else Path(text)
    data = load_json(path, SMALL_JSON, error=RecipeError)
    return recipe_from_dict(data, where=str(path) if text not in SHIPPED_RECIPES else f"shipped recipe {text}")
