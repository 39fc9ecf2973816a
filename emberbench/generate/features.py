"""What a generated scenario is: its families and its one-sentence description.

Families come from two places. The recipe's draw gives the layout family
(``office``, ``hall``, ``corridors``, ``campus``); everything else is measured
on the finished scenario, with the thresholds below, so a family means the
same whatever recipe produced the scenario. :data:`FAMILIES` fixes the
declaration order of every generated suite. docs/scenario-format.md lists
the same rules.
"""

from __future__ import annotations

from dataclasses import dataclass

from .canvas import Canvas, dead_end_corridors, within
from .placement import ExitGroup

BOTTLENECK_PEOPLE_PER_EXIT_CELL = 20
"""``bottleneck``: at least this many people per exit cell."""
CROWD_PEOPLE = 100
CROWD_FLOOR_CELLS_PER_PERSON = 8
"""``crowd``: at least 100 people, or one person per 8 floor cells or fewer."""
FIRE_NEAR_EXIT_STEPS = 4
"""``fire-near-exit``: a fire origin at most this many steps (walls only) from an exit cell."""
FIRE_NEAR_CROWD_STEPS = 2
"""``fire-near-crowd``: a person at most this many steps from a fire origin."""
DEAD_END_MIN_LENGTH = 3
"""``dead-end``: a one-cell-wide corridor at least this long ending at a wall."""
LARGE_SIDE = 64
"""``large``: both sides at least this long."""

FAMILIES: tuple[tuple[str, str], ...] = (
    ("office", "Office floors: rooms with doors off shared corridors."),
    ("hall", "Open halls with scattered obstacles."),
    ("corridors", "Long corridors with side branches, dead ends and end rooms."),
    ("campus", "Multi-wing buildings: wings joined by doors, several exits."),
    ("single-exit", "Exactly one exit."),
    ("multi-exit", "Two or more exits: the choice of exit matters."),
    ("bottleneck", f"At least {BOTTLENECK_PEOPLE_PER_EXIT_CELL} people per exit cell."),
    ("crowd", f"At least {CROWD_PEOPLE} people, or a person per {CROWD_FLOOR_CELLS_PER_PERSON} floor cells."),
    ("dead-end", f"A one-cell-wide corridor of {DEAD_END_MIN_LENGTH} or more cells ends at a wall."),
    ("fire-near-exit", f"A fire origin within {FIRE_NEAR_EXIT_STEPS} steps of an exit."),
    ("fire-near-crowd", f"A person within {FIRE_NEAR_CROWD_STEPS} steps of a fire origin."),
    ("deterministic-fire", "Fire that spreads with probability 0 or 1."),
    ("stochastic-fire", "Fire whose spread depends on the seed."),
    ("large", f"Maps of at least {LARGE_SIDE}x{LARGE_SIDE} cells."),
)
FAMILY_IDS = tuple(f for f, _ in FAMILIES)

_LAYOUT_PHRASE = {
    "office": "An office floor of {size} cells with {offices} offices along {corridors} corridor{s_corridors}",
    "hall": "An open hall of {size} cells with {obstacles} obstacle{s_obstacles}",
    "corridors": "A corridor network of {size} cells with {spines} long corridor{s_spines} and "
                 "{branches} side branch{es_branches}",
    "campus": "A campus of {size} cells in {wings} wings",
}
_PEOPLE_PHRASE = {"uniform": "spread over the floor", "rooms": "clustered in rooms",
                  "near-exits": "gathered near the exits"}
_EXIT_PHRASE = {"spread": "on different sides", "random": "placed at random", "one-side": "all on one side"}
_FIRE_PHRASE = {"random": "at random", "near-exit": "near an exit", "near-crowd": "next to the people",
                "far": "far from the exits"}


@dataclass(frozen=True, slots=True)
class Draw:
    """What the generator drew for one scenario (the recipe's choices, before measuring)."""

    layout: str
    people_mode: str
    exit_mode: str
    fire_mode: str
    numerator: int
    denominator: int
    max_steps: int


def families_of(draw: Draw, cv: Canvas, exits: list[ExitGroup], people: list[tuple[int, int]],
                fire: list[tuple[int, int]]) -> tuple[str, ...]:
    """The scenario's families, in :data:`FAMILIES` order."""
    exit_cells = [c for g in exits for c in g.cells]
    floor = int(cv.open.sum()) - len(exit_cells)
    found = {draw.layout, "single-exit" if len(exits) == 1 else "multi-exit"}
    if len(people) >= BOTTLENECK_PEOPLE_PER_EXIT_CELL * len(exit_cells):
        found.add("bottleneck")
    if len(people) >= CROWD_PEOPLE or len(people) * CROWD_FLOOR_CELLS_PER_PERSON >= floor:
        found.add("crowd")
    if dead_end_corridors(cv.open, set(exit_cells), DEAD_END_MIN_LENGTH):
        found.add("dead-end")
    near_exit = within(cv.open, exit_cells, FIRE_NEAR_EXIT_STEPS)
    if any(c in near_exit for c in fire):
        found.add("fire-near-exit")
    near_fire = within(cv.open, fire, FIRE_NEAR_CROWD_STEPS)
    if any(c in near_fire for c in people):
        found.add("fire-near-crowd")
    found.add("deterministic-fire" if draw.numerator in (0, draw.denominator) else "stochastic-fire")
    if cv.rows >= LARGE_SIDE and cv.cols >= LARGE_SIDE:
        found.add("large")
    return tuple(f for f in FAMILY_IDS if f in found)


def _plural(n: int, one: str, many: str) -> str:
    return one if n == 1 else many


def describe(draw: Draw, cv: Canvas, exits: list[ExitGroup], people: int, fire: int) -> str:
    """One sentence saying what was generated (layout, people, exits, fire, step limit)."""
    notes = dict(cv.notes)
    plurals = {f"s_{k}": _plural(v, "", "s") for k, v in notes.items()}
    plurals.update({f"es_{k}": _plural(v, "", "es") for k, v in notes.items()})
    layout = _LAYOUT_PHRASE[draw.layout].format(size=f"{cv.rows}x{cv.cols}", **notes, **plurals)
    widths = sorted({len(g.cells) for g in exits})
    width = f"width {widths[0]}" if len(widths) == 1 else f"widths {widths[0]} to {widths[-1]}"
    exit_text = (f"one exit of {width}" if len(exits) == 1
                 else f"{len(exits)} exits of {width} {_EXIT_PHRASE[draw.exit_mode]}")
    if draw.numerator == 0:
        spread = "that never spreads"
    elif draw.numerator == draw.denominator:
        spread = "spreading to every neighbouring cell each step"
    else:
        spread = f"spreading with probability {draw.numerator}/{draw.denominator} per step"
    return (f"{layout}, {people} {_plural(people, 'person', 'people')} {_PEOPLE_PHRASE[draw.people_mode]}, "
            f"{exit_text}, and {fire} fire origin{_plural(fire, '', 's')} {_FIRE_PHRASE[draw.fire_mode]} "
            f"{spread}, within {draw.max_steps} steps.")

