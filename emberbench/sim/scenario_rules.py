"""The rules of the scenario format, written once, as generators of problems.

Both validators run these generators: the single-error loaders
(:func:`emberbench.sim.scenario.scenario_from_dict`, :func:`~emberbench.sim.scenario.load_scenario`
and the :class:`~emberbench.sim.scenario.Scenario` constructor) raise the first
problem, and :func:`scenario_problems` (``emberbench suite validate``) lists
them all. Problems come out in the order the rules are documented
(docs/scenario-format.md), so the first one is exactly the message the
single-error loader gives.

After a problem the generators keep going with whatever can still be
checked: a field that is missing or of the wrong shape is skipped, not
guessed at, and reachability is only checked when the map, exits and people
are all well formed (otherwise it would report consequences of earlier
problems, not problems of its own).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..io.versions import SCENARIO_FORMAT_VERSION

ID_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,79}$")
NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
MAX_SIDE = 256
MAX_STEPS_LIMIT = 10_000
MAX_DENOMINATOR = 1 << 32
SCENARIO_KEYS = frozenset(
    {"scenario_format", "id", "description", "map", "exits", "people", "fire",
     "spread", "max_steps", "seed", "allow_unreachable"}
)
WALL = "#"
FLOOR = "."
_CELL_KEYS = frozenset({"id", "row", "col"})
_SPREAD_KEYS = frozenset({"numerator", "denominator"})


class _Skip:
    """Marks a field too broken to check (its structural problem was already reported)."""

    def __repr__(self) -> str:
        return "SKIP"


SKIP: Any = _Skip()


@dataclass(frozen=True, slots=True)
class Entry:
    """An exit or a person as read (its fields are not validated yet)."""

    id: Any
    row: Any
    col: Any


@dataclass(frozen=True, slots=True)
class ContentView:
    """The fields the content rules check; ``SKIP`` where the structure was broken.

    Attributes:
        exits, people, fire: the well-formed entries, in order.
        partial: names of the lists (``exits``, ``people``, ``fire``) that
            lost entries to structural problems.
    """

    id: Any
    description: Any
    map: Any
    exits: tuple[Any, ...]
    people: tuple[Any, ...]
    fire: tuple[Any, ...]
    spread_numerator: Any
    spread_denominator: Any
    max_steps: Any
    seed: Any
    allow_unreachable: Any
    partial: frozenset[str] = frozenset()


def is_int(value: object) -> bool:
    """True for an ``int`` that is not a ``bool``."""
    return isinstance(value, int) and not isinstance(value, bool)


# -- structure ---------------------------------------------------------------


def _keys(obj: object, expected: frozenset[str], what: str, problems: list[str]) -> bool:
    """Report a non-object, unknown keys and missing keys; True when every expected key is there."""
    if not isinstance(obj, dict):
        problems.append(f"{what} must be a JSON object, got {type(obj).__name__}")
        return False
    unknown = sorted(set(obj) - expected)
    if unknown:
        problems.append(f"unknown key(s) in {what}: {', '.join(unknown)}")
    missing = sorted(expected - set(obj))
    if missing:
        problems.append(f"missing key(s) in {what}: {', '.join(missing)}")
    return not missing


def _entries(obj: dict[str, Any], key: str, problems: list[str]) -> tuple[tuple[Entry, ...], bool]:
    if key not in obj:
        return (), True
    value = obj[key]
    if not isinstance(value, list):
        problems.append(f"{key} must be a list")
        return (), True
    out = []
    for i, e in enumerate(value):
        if _keys(e, _CELL_KEYS, f"{key}[{i}]", problems):
            out.append(Entry(e["id"], e["row"], e["col"]))
    return tuple(out), len(out) != len(value)


def read_structure(data: object) -> tuple[list[str], ContentView | None]:
    """Check the shape of a scenario object; return its structural problems and a view for the content rules.

    The view is None when ``data`` is not an object at all. Messages carry no
    location prefix.
    """
    problems: list[str] = []
    if not _keys(data, SCENARIO_KEYS, "scenario", problems) and not isinstance(data, dict):
        return problems, None
    assert isinstance(data, dict)
    get = data.get
    if "scenario_format" in data and data["scenario_format"] != SCENARIO_FORMAT_VERSION:
        problems.append(f"unsupported scenario_format {data['scenario_format']!r} "
                        f"(this version reads {SCENARIO_FORMAT_VERSION!r})")
    partial = set()
    exits, broken = _entries(data, "exits", problems)
    if broken or "exits" not in data:
        partial.add("exits")
    people, broken = _entries(data, "people", problems)
    if broken or "people" not in data:
        partial.add("people")
    fire: list[tuple[int, int]] = []
    raw_fire = get("fire", [])
    if not isinstance(raw_fire, list):
        problems.append("fire must be a list")
        partial.add("fire")
    else:
        for i, c in enumerate(raw_fire):
            if isinstance(c, list) and len(c) == 2 and all(is_int(v) for v in c):
                fire.append((c[0], c[1]))
            else:
                problems.append(f"fire[{i}] must be a [row, col] pair of integers, got {c!r}")
                partial.add("fire")
    num = den = SKIP
    if "spread" in data and _keys(data["spread"], _SPREAD_KEYS, "spread", problems):
        num, den = data["spread"]["numerator"], data["spread"]["denominator"]
    mapping = get("map", SKIP)
    if mapping is not SKIP and (not isinstance(mapping, list) or not all(isinstance(r, str) for r in mapping)):
        problems.append("map must be a list of strings")
        mapping = SKIP
    view = ContentView(
        id=get("id", SKIP), description=get("description", SKIP),
        map=SKIP if mapping is SKIP else tuple(mapping), exits=exits, people=people, fire=tuple(fire),
        spread_numerator=num, spread_denominator=den, max_steps=get("max_steps", SKIP), seed=get("seed", SKIP),
        allow_unreachable=get("allow_unreachable", SKIP), partial=frozenset(partial),
    )
    return problems, view


# -- content -------------------------------------------------------------------


def content_problems(s: Any) -> Iterator[str]:
    """Every content problem of ``s`` (a :class:`ContentView` or a scenario), in rule order."""
    partial: frozenset[str] = getattr(s, "partial", frozenset())
    if s.id is not SKIP and (not isinstance(s.id, str) or not ID_RE.fullmatch(s.id)):
        yield f"invalid scenario id {s.id!r} (lowercase letters, digits and '-', at most 80)"
    if s.description is not SKIP and (not isinstance(s.description, str) or not s.description.strip()
                                      or len(s.description) > 500):
        yield "description must be a non-empty string of at most 500 characters"
    rows = s.map
    usable = rows is not SKIP
    height = width = 0
    if usable:
        if not rows:
            yield "map has no rows"
            usable = False
        else:
            width = len(rows[0])
            for r, row in enumerate(rows):
                if len(row) != width:
                    yield f"ragged map: row {r} has {len(row)} cells, row 0 has {width}"
                    usable = False
                bad = sorted(set(row) - {WALL, FLOOR})
                if bad:
                    yield f"map row {r} has unknown cell character(s) {''.join(bad)!r} (use '#' or '.')"
            height = len(rows)
            if not (1 <= height <= MAX_SIDE and 1 <= width <= MAX_SIDE):
                yield f"map is {height}x{width}; each side must be in [1, {MAX_SIDE}]"
                usable = False
    cells_ok = usable and not partial

    def place(what: str, r: object, c: object) -> Iterator[str]:
        """Problems of one cell; leaves ``last_cell`` set to the cell when it is usable."""
        nonlocal cells_ok
        last_cell[0] = None
        if not (is_int(r) and is_int(c)):
            cells_ok = False
            yield f"{what} row and col must be integers"
            return
        if not usable:
            return
        if not (0 <= r < height and 0 <= c < width):  # type: ignore[operator]
            cells_ok = False
            yield f"{what} at ({r}, {c}) is outside the {height}x{width} map"
            return
        if rows[r][c] == WALL:
            cells_ok = False
            yield f"{what} at ({r}, {c}) is on a wall"
            return
        last_cell[0] = (r, c)

    last_cell: list[tuple[int, int] | None] = [None]
    if not s.exits and "exits" not in partial:
        cells_ok = False
        yield "scenario has no exit"
    exit_cells: dict[tuple[int, int], str] = {}
    seen: set[str] = set()
    for e in s.exits:
        yield from _name("exit", e.id, seen)
        yield from place(f"exit {e.id!r}", e.row, e.col)
        cell = last_cell[0]
        if cell is not None:
            if cell in exit_cells:
                yield f"exits {exit_cells[cell]!r} and {e.id!r} share cell ({cell[0]}, {cell[1]})"
            else:
                exit_cells[cell] = e.id
    fire_cells: set[tuple[int, int]] = set()
    for r, c in s.fire:
        yield from place("fire cell", r, c)
        cell = last_cell[0]
        if cell is not None:
            if cell in fire_cells:
                yield f"duplicate fire cell ({r}, {c})"
            fire_cells.add(cell)
    if not s.people and "people" not in partial:
        cells_ok = False
        yield "scenario has no people"
    seen = set()
    occupied: dict[tuple[int, int], str] = {}
    for p in s.people:
        yield from _name("person", p.id, seen)
        yield from place(f"person {p.id!r}", p.row, p.col)
        cell = last_cell[0]
        if cell is None:
            continue
        if cell in exit_cells:
            yield f"person {p.id!r} starts on exit {exit_cells[cell]!r} at {cell}"
        if cell in fire_cells:
            yield f"person {p.id!r} starts on a burning cell {cell}"
        if cell in occupied:
            yield f"people {occupied[cell]!r} and {p.id!r} share start cell {cell}"
        else:
            occupied[cell] = p.id
    num, den = s.spread_numerator, s.spread_denominator
    if num is not SKIP and (not (is_int(num) and is_int(den)) or not (1 <= den <= MAX_DENOMINATOR
                                                                    and 0 <= num <= den)):
        yield (f"spread must have integers 0 <= numerator <= denominator and 1 <= denominator <= 2**32, "
               f"got {num!r}/{den!r}")
    if s.max_steps is not SKIP and (not is_int(s.max_steps) or not 1 <= s.max_steps <= MAX_STEPS_LIMIT):
        yield f"max_steps must be an integer in [1, {MAX_STEPS_LIMIT}], got {s.max_steps!r}"
    if s.seed is not SKIP and (not is_int(s.seed) or not 0 <= s.seed < (1 << 64)):
        yield f"seed must be an integer in [0, 2**64 - 1], got {s.seed!r}"
    if s.allow_unreachable is not SKIP and not isinstance(s.allow_unreachable, bool):
        yield "allow_unreachable must be true or false"
    if s.allow_unreachable is False and cells_ok:
        yield from _reachability(rows, s.exits, s.people)


def _name(kind: str, name: object, seen: set[str]) -> Iterator[str]:
    """A well-formed ``kind`` id not seen before (then remembered)."""
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        yield f"invalid {kind} id {name!r}"
        return
    if name in seen:
        yield f"duplicate {kind} id {name!r}"
    seen.add(name)


def open_cells(rows: tuple[str, ...]) -> np.ndarray:
    """A bool array (rows x cols): True where the map is not a wall."""
    height, width = len(rows), len(rows[0])
    codes = np.frombuffer("".join(rows).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    return codes.reshape(height, width) != ord(WALL)


def regions(open_: np.ndarray) -> np.ndarray:
    """Label the walls-only regions (four-neighbour moves) of a bool map; -1 on walls.

    Each row is cut into runs of open cells, and runs that touch vertically
    are merged by repeated hooking: every run takes the smallest label among
    the runs it touches, then labels jump to their label's label until they
    settle. Everything is a numpy pass over runs (far fewer than cells), so
    a 256x256 map costs milliseconds. A region's label is the smallest run
    number in it, so labels do not depend on any visiting order.
    """
    height, width = open_.shape
    starts = open_.copy()
    starts[:, 1:] &= ~open_[:, :-1]
    run_of = np.cumsum(starts.ravel()).reshape(height, width) - 1
    runs = int(run_of[-1, -1]) + 1 if open_.size else 0
    if runs == 0:
        return np.full(open_.shape, -1, dtype=np.int64)
    touching = open_[:-1] & open_[1:]
    upper, lower = run_of[:-1][touching], run_of[1:][touching]
    label = np.arange(runs, dtype=np.int64)
    while True:
        a, b = label[upper], label[lower]
        low = np.minimum(a, b)
        hooked = label.copy()
        np.minimum.at(hooked, a, low)
        np.minimum.at(hooked, b, low)
        while True:
            jumped = hooked[hooked]
            if np.array_equal(jumped, hooked):
                break
            hooked = jumped
        if np.array_equal(hooked, label):
            break
        label = hooked
    return np.where(open_, label[run_of.clip(0)], -1)


def _reachability(rows: tuple[str, ...], exits: Any, people: Any) -> Iterator[str]:
    """Every person must reach some exit and every exit some person (walls only, fire ignored)."""
    label = regions(open_cells(rows))
    exit_regions = {int(label[e.row, e.col]) for e in exits}
    reached = set()
    for p in people:
        region = int(label[p.row, p.col])
        if region not in exit_regions:
            yield (f"person {p.id!r} at ({p.row}, {p.col}) cannot reach any exit "
                   "(set allow_unreachable to permit this)")
        else:
            reached.add(region)
    for e in exits:
        if int(label[e.row, e.col]) not in reached:
            yield f"exit {e.id!r} cannot be reached by anyone (set allow_unreachable to permit this)"


def scenario_problems(data: object, *, where: str = "scenario") -> list[str]:
    """Every problem of a parsed scenario object, each prefixed with ``where``; empty when it is valid.

    The first problem is exactly the message :func:`emberbench.sim.scenario.scenario_from_dict`
    raises for the same object.
    """
    problems, view = read_structure(data)
    if view is not None:
        problems.extend(content_problems(view))
    return [f"{where}: {p}" for p in problems]
