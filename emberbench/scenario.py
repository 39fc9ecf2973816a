"""Scenarios: the JSON format, its strict validation, and the content hash.

A scenario file is one JSON object (see docs/scenario-format.md)::

    {"scenario_format": "1.0", "id": "...", "description": "...",
     "map": ["#####", "#...#", ...],            # '#' wall, '.' floor
     "exits": [{"id": "east", "row": 1, "col": 4}],
     "people": [{"id": "p001", "row": 1, "col": 1}],
     "fire": [[2, 2]],                           # initially burning cells
     "spread": {"numerator": 1, "denominator": 2},
     "max_steps": 60, "seed": 0, "allow_unreachable": false}

The content hash is the SHA-256 of the scenario's canonical JSON; the suite
manifest pins it. Validation errors name the file (or the id) and the problem.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .canonical import digest, parse_json_strict
from .errors import CanonicalFormError, ScenarioError
from .versions import SCENARIO_FORMAT_VERSION

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


@dataclass(frozen=True, slots=True)
class ExitSpec:
    """An exit cell with its id."""

    id: str
    row: int
    col: int


@dataclass(frozen=True, slots=True)
class PersonSpec:
    """A person's id and start cell."""

    id: str
    row: int
    col: int


@dataclass(frozen=True, slots=True, eq=False)
class Scenario:
    """A validated scenario. Construct with :func:`scenario_from_dict` or :func:`load_scenario`.

    Equality and hashing use the content hash, so two scenarios are equal
    exactly when their canonical JSON is identical.
    """

    id: str
    description: str
    map: tuple[str, ...]
    exits: tuple[ExitSpec, ...]
    people: tuple[PersonSpec, ...]
    fire: tuple[tuple[int, int], ...]
    spread_numerator: int
    spread_denominator: int
    max_steps: int
    seed: int
    allow_unreachable: bool
    content_hash: str = field(default="", init=False, repr=False)
    _cache: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        _validate(self, self.id)
        object.__setattr__(self, "content_hash", digest(self.to_dict()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scenario) and other.content_hash == self.content_hash

    def __hash__(self) -> int:
        return hash(self.content_hash)

    @property
    def height(self) -> int:
        """Number of rows."""
        return len(self.map)

    @property
    def width(self) -> int:
        """Number of columns."""
        return len(self.map[0])

    @property
    def population(self) -> int:
        """Number of people at the start."""
        return len(self.people)

    @property
    def deterministic_fire(self) -> bool:
        """True when the fire spreads with probability 0 or 1 (no randomness)."""
        return self.spread_numerator in (0, self.spread_denominator)

    def to_dict(self) -> dict[str, Any]:
        """The scenario's JSON object (its canonical JSON defines the content hash)."""
        return {
            "scenario_format": SCENARIO_FORMAT_VERSION,
            "id": self.id,
            "description": self.description,
            "map": list(self.map),
            "exits": [{"id": e.id, "row": e.row, "col": e.col} for e in self.exits],
            "people": [{"id": p.id, "row": p.row, "col": p.col} for p in self.people],
            "fire": [[r, c] for r, c in self.fire],
            "spread": {"numerator": self.spread_numerator, "denominator": self.spread_denominator},
            "max_steps": self.max_steps,
            "seed": self.seed,
            "allow_unreachable": self.allow_unreachable,
        }

    def cached(self, key: str, build: Any) -> Any:
        """Memoise a derived, immutable value (such as the compiled grid) on this scenario."""
        try:
            return self._cache[key]
        except KeyError:
            value = self._cache[key] = build(self)
            return value


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _keys(obj: object, expected: frozenset[str], what: str, where: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise ScenarioError(f"{where}: {what} must be a JSON object, got {type(obj).__name__}")
    unknown = sorted(set(obj) - expected)
    if unknown:
        raise ScenarioError(f"{where}: unknown key(s) in {what}: {', '.join(unknown)}")
    missing = sorted(expected - set(obj))
    if missing:
        raise ScenarioError(f"{where}: missing key(s) in {what}: {', '.join(missing)}")
    return obj


def _cell(value: object, what: str, where: str) -> tuple[int, int]:
    if not (isinstance(value, list) and len(value) == 2 and all(_is_int(v) for v in value)):
        raise ScenarioError(f"{where}: {what} must be a [row, col] pair of integers, got {value!r}")
    return value[0], value[1]


def scenario_from_dict(data: object, *, where: str = "scenario") -> Scenario:
    """Build a :class:`Scenario` from its JSON object, validating everything.

    Args:
        data: the parsed JSON object.
        where: names the source (a file path) in error messages.

    Raises:
        ScenarioError: naming ``where`` and the first problem found.
    """
    obj = _keys(data, SCENARIO_KEYS, "scenario", where)
    if obj["scenario_format"] != SCENARIO_FORMAT_VERSION:
        raise ScenarioError(
            f"{where}: unsupported scenario_format {obj['scenario_format']!r} "
            f"(this version reads {SCENARIO_FORMAT_VERSION!r})"
        )
    exits = []
    for i, e in enumerate(_list(obj["exits"], "exits", where)):
        e = _keys(e, frozenset({"id", "row", "col"}), f"exits[{i}]", where)
        exits.append(ExitSpec(e["id"], e["row"], e["col"]))
    people = []
    for i, p in enumerate(_list(obj["people"], "people", where)):
        p = _keys(p, frozenset({"id", "row", "col"}), f"people[{i}]", where)
        people.append(PersonSpec(p["id"], p["row"], p["col"]))
    fire = tuple(_cell(c, f"fire[{i}]", where) for i, c in enumerate(_list(obj["fire"], "fire", where)))
    spread = _keys(obj["spread"], frozenset({"numerator", "denominator"}), "spread", where)
    mapping = obj["map"]
    if not isinstance(mapping, list) or not all(isinstance(r, str) for r in mapping):
        raise ScenarioError(f"{where}: map must be a list of strings")
    try:
        return Scenario(
            id=obj["id"], description=obj["description"], map=tuple(mapping),
            exits=tuple(exits), people=tuple(people), fire=fire,
            spread_numerator=spread["numerator"], spread_denominator=spread["denominator"],
            max_steps=obj["max_steps"], seed=obj["seed"],
            allow_unreachable=obj["allow_unreachable"],
        )
    except ScenarioError as exc:
        raise ScenarioError(f"{where}: {exc}") from None


def _list(value: object, what: str, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise ScenarioError(f"{where}: {what} must be a list")
    return value


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file."""
    p = Path(path)
    try:
        text = p.read_bytes()
    except OSError as exc:
        raise ScenarioError(f"{p}: cannot read scenario file: {exc.strerror}") from None
    try:
        data = parse_json_strict(text, where=str(p))
    except CanonicalFormError as exc:
        raise ScenarioError(str(exc)) from None
    return scenario_from_dict(data, where=str(p))


def _validate(s: Scenario, sid: object) -> None:
    """Check every rule of the scenario format; raise ScenarioError on the first failure."""
    if not isinstance(s.id, str) or not ID_RE.match(s.id):
        raise ScenarioError(f"invalid scenario id {s.id!r} (lowercase letters, digits and '-', at most 80)")
    if not isinstance(s.description, str) or not s.description.strip() or len(s.description) > 500:
        raise ScenarioError("description must be a non-empty string of at most 500 characters")
    if not s.map:
        raise ScenarioError("map has no rows")
    width = len(s.map[0])
    for r, row in enumerate(s.map):
        if len(row) != width:
            raise ScenarioError(f"ragged map: row {r} has {len(row)} cells, row 0 has {width}")
        bad = sorted(set(row) - {WALL, FLOOR})
        if bad:
            raise ScenarioError(f"map row {r} has unknown cell character(s) {''.join(bad)!r} (use '#' or '.')")
    height = len(s.map)
    if not (1 <= height <= MAX_SIDE and 1 <= width <= MAX_SIDE):
        raise ScenarioError(f"map is {height}x{width}; each side must be in [1, {MAX_SIDE}]")

    def in_bounds(what: str, r: object, c: object) -> None:
        if not (_is_int(r) and _is_int(c)):
            raise ScenarioError(f"{what} row and col must be integers")
        if not (0 <= r < height and 0 <= c < width):
            raise ScenarioError(f"{what} at ({r}, {c}) is outside the {height}x{width} map")
        if s.map[r][c] == WALL:
            raise ScenarioError(f"{what} at ({r}, {c}) is on a wall")

    if not s.exits:
        raise ScenarioError("scenario has no exit")
    exit_cells: dict[tuple[int, int], str] = {}
    seen: set[str] = set()
    for e in s.exits:
        _new_name("exit", e.id, seen)
        in_bounds(f"exit {e.id!r}", e.row, e.col)
        if (e.row, e.col) in exit_cells:
            raise ScenarioError(f"exits {exit_cells[(e.row, e.col)]!r} and {e.id!r} share cell ({e.row}, {e.col})")
        exit_cells[(e.row, e.col)] = e.id
    fire_cells: set[tuple[int, int]] = set()
    for r, c in s.fire:
        in_bounds("fire cell", r, c)
        if (r, c) in fire_cells:
            raise ScenarioError(f"duplicate fire cell ({r}, {c})")
        fire_cells.add((r, c))
    if not s.people:
        raise ScenarioError("scenario has no people")
    seen = set()
    occupied: dict[tuple[int, int], str] = {}
    for p in s.people:
        _new_name("person", p.id, seen)
        in_bounds(f"person {p.id!r}", p.row, p.col)
        cell = (p.row, p.col)
        if cell in exit_cells:
            raise ScenarioError(f"person {p.id!r} starts on exit {exit_cells[cell]!r} at {cell}")
        if cell in fire_cells:
            raise ScenarioError(f"person {p.id!r} starts on a burning cell {cell}")
        if cell in occupied:
            raise ScenarioError(f"people {occupied[cell]!r} and {p.id!r} share start cell {cell}")
        occupied[cell] = p.id
    num, den = s.spread_numerator, s.spread_denominator
    if not (_is_int(num) and _is_int(den)) or not (1 <= den <= MAX_DENOMINATOR and 0 <= num <= den):
        raise ScenarioError(
            f"spread must have integers 0 <= numerator <= denominator and 1 <= denominator <= 2**32, "
            f"got {num!r}/{den!r}"
        )
    if not _is_int(s.max_steps) or not 1 <= s.max_steps <= MAX_STEPS_LIMIT:
        raise ScenarioError(f"max_steps must be an integer in [1, {MAX_STEPS_LIMIT}], got {s.max_steps!r}")
    if not _is_int(s.seed) or not 0 <= s.seed < (1 << 64):
        raise ScenarioError(f"seed must be an integer in [0, 2**64 - 1], got {s.seed!r}")
    if not isinstance(s.allow_unreachable, bool):
        raise ScenarioError("allow_unreachable must be true or false")
    if not s.allow_unreachable:
        _check_reachability(s, exit_cells)


def _new_name(kind: str, name: object, seen: set[str]) -> None:
    """Require a well-formed ``kind`` id not seen before, and remember it."""
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise ScenarioError(f"invalid {kind} id {name!r}")
    if name in seen:
        raise ScenarioError(f"duplicate {kind} id {name!r}")
    seen.add(name)


def _check_reachability(s: Scenario, exit_cells: dict[tuple[int, int], str]) -> None:
    """Every person must reach some exit and every exit some person (walls only)."""
    height, width = len(s.map), len(s.map[0])
    component = [[-1] * width for _ in range(height)]
    label = 0
    for r0 in range(height):
        for c0 in range(width):
            if s.map[r0][c0] == WALL or component[r0][c0] >= 0:
                continue
            component[r0][c0] = label
            queue = deque([(r0, c0)])
            while queue:
                r, c = queue.popleft()
                for nr, nc in ((r - 1, c), (r, c + 1), (r + 1, c), (r, c - 1)):
                    if 0 <= nr < height and 0 <= nc < width and s.map[nr][nc] != WALL and component[nr][nc] < 0:
                        component[nr][nc] = label
                        queue.append((nr, nc))
            label += 1
    exit_components = {component[r][c] for (r, c) in exit_cells}
    person_components = set()
    for p in s.people:
        comp = component[p.row][p.col]
        if comp not in exit_components:
            raise ScenarioError(
                f"person {p.id!r} at ({p.row}, {p.col}) cannot reach any exit "
                "(set allow_unreachable to permit this)"
            )
        person_components.add(comp)
    for e in s.exits:
        if component[e.row][e.col] not in person_components:
            raise ScenarioError(f"exit {e.id!r} cannot be reached by anyone (set allow_unreachable to permit this)")
