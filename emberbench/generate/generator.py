"""Generating one scenario from a recipe, a suite seed and an index, with redraws.

Scenario ``i`` of a suite generated with seed ``S`` is a pure function of
(recipe, S, i): its first draw uses the key ``scenario_key(S, i, 0)``; if the
draw cannot be placed or fails the scenario validation, the next sub-seed
``scenario_key(S, i, 1)`` draws it again, and so on. Nothing is dropped
silently: after :data:`MAX_ATTEMPTS` failed draws in a row the recipe is
reported as unsatisfiable, with the last reason. Because a scenario does not
depend on the count, the first ``n`` scenarios of a larger suite are the
scenarios of the smaller one.
"""

from __future__ import annotations

from dataclasses import dataclass
from ..errors import GenerationError, ScenarioError
from ..sim.scenario import ExitSpec, PersonSpec, Scenario
from .draws import Draws, scenario_key
from .features import Draw, describe, families_of
from .layouts import LAYOUTS
from .placement import Redraw, place_exits, place_fire, place_people
from .recipe import LAYOUT_MIN_EXITS, Recipe

MAX_ATTEMPTS = 64
"""Draws of one scenario before the recipe is declared unsatisfiable."""


@dataclass(frozen=True, slots=True, eq=False)
class GeneratedScenario:
    """One generated, validated scenario.

    Attributes:
        index: its index in the generation order (part of its id).
        scenario: the validated scenario.
        families: its families, in declaration order (features.FAMILIES).
        attempts: how many draws it took (1 when the first draw was valid).
    """

    index: int
    scenario: Scenario
    families: tuple[str, ...]
    attempts: int


def scenario_id(recipe: Recipe, index: int, layout: str) -> str:
    """The id of generated scenario ``index``: ``<id_prefix>-<index, 4 digits or more>-<layout>``."""
    return f"{recipe.id_prefix}-{index:04d}-{layout}"


def generate_scenario(recipe: Recipe, seed: int, index: int) -> GeneratedScenario:
    """Scenario ``index`` of the suite generated from ``recipe`` with ``seed``.

    Raises:
        GenerationError: :data:`MAX_ATTEMPTS` draws in a row failed.
    """
    last = ""
    for attempt in range(MAX_ATTEMPTS):
        key = scenario_key(seed, index, attempt)
        try:
            scenario, families = _draw(recipe, key, index)
        except (Redraw, ScenarioError) as exc:
            last = str(exc)
            continue
        return GeneratedScenario(index, scenario, families, attempt + 1)
    raise GenerationError(
        f"recipe {recipe.name!r}: scenario {index} failed all {MAX_ATTEMPTS} draws (the last: {last}); "
        "the recipe's constraints cannot be met together"
    )


def _draw(recipe: Recipe, key: int, index: int) -> tuple[Scenario, tuple[str, ...]]:
    """One draw of a scenario; raises Redraw or ScenarioError when it cannot be used."""
    p = Draws(key, "params")
    layout = p.weighted(recipe.layouts)
    rows, cols = p.between(recipe.rows.lo, recipe.rows.hi), p.between(recipe.cols.lo, recipe.cols.hi)
    exit_count = p.between(max(recipe.exit_count.lo, LAYOUT_MIN_EXITS[layout]), recipe.exit_count.hi)
    widths = [p.between(recipe.exit_width.lo, recipe.exit_width.hi) for _ in range(exit_count)]
    exit_mode = p.weighted(recipe.exit_placement)
    density = p.between(recipe.people_density.lo, recipe.people_density.hi)
    people_mode = p.weighted(recipe.people_placement)
    ignitions = p.between(recipe.ignitions.lo, recipe.ignitions.hi)
    fire_mode = p.weighted(recipe.fire_placement)
    spread = p.weighted([(s, s.weight) for s in recipe.spread])
    per_side = p.between(recipe.steps_per_side.lo, recipe.steps_per_side.hi)
    max_steps = min(max(per_side * (rows + cols), recipe.steps_min), recipe.steps_max)

    cv = LAYOUTS[layout](Draws(key, "layout"), rows, cols)
    exits = place_exits(Draws(key, "exits"), cv, widths, exit_mode)
    exit_cells = [c for g in exits for c in g.cells]
    free = cv.floor_cells()
    count = min(max(len(free) * density // 100, recipe.people_count.lo), recipe.people_count.hi)
    people = sorted(place_people(Draws(key, "people"), cv, free, count, people_mode, exit_cells))
    fire = sorted(place_fire(Draws(key, "fire"), cv, free, people, exits, ignitions, fire_mode))
    draw = Draw(layout, people_mode, exit_mode, fire_mode, spread.numerator, spread.denominator, max_steps)
    sid = scenario_id(recipe, index, layout)
    ids = [eid for g in exits for eid in g.ids()]
    # The fields are built in the format's shape, so only the content rules can fail; the Scenario
    # constructor runs every one of them (reachability included).
    scenario = Scenario(
        id=sid, description=describe(draw, cv, exits, len(people), len(fire)), map=cv.map_rows(),
        exits=tuple(ExitSpec(eid, r, c) for eid, (r, c) in zip(ids, exit_cells)),
        people=tuple(PersonSpec(f"p{i:03d}", r, c) for i, (r, c) in enumerate(people, start=1)),
        fire=tuple(fire), spread_numerator=spread.numerator, spread_denominator=spread.denominator,
        max_steps=max_steps, seed=0, allow_unreachable=False,
    )
    return scenario, families_of(draw, cv, exits, people, fire)
