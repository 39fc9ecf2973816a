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
The rules themselves live in :mod:`emberbench.sim.scenario_rules`, which can also
list every problem of a scenario at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ..io.canonical import digest
from ..errors import ScenarioError
from ..io.input_policy import SCENARIO, load_json
from .scenario_rules import (
    FLOOR,
    ID_RE,
    MAX_DENOMINATOR,
    MAX_SIDE,
    MAX_STEPS_LIMIT,
    NAME_RE,
    SCENARIO_KEYS,
    WALL,
    content_problems,
    read_structure,
)
from ..io.versions import SCENARIO_FORMAT_VERSION

__all__ = [
    "FLOOR", "ID_RE", "MAX_DENOMINATOR", "MAX_SIDE", "MAX_STEPS_LIMIT", "NAME_RE", "SCENARIO_KEYS", "WALL",
    "ExitSpec", "PersonSpec", "Scenario", "load_scenario", "read_scenario_file", "scenario_from_dict",
]


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
        _validate(self)
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

    def __getstate__(self) -> list[Any]:
        """Pickled without the memoised derived values: a process rebuilds what it uses (Ray tasks ship less)."""
        return [{} if f.name == "_cache" else getattr(self, f.name) for f in fields(self)]

    def __setstate__(self, state: list[Any]) -> None:
        for f, value in zip(fields(self), state):
            object.__setattr__(self, f.name, value)

    def cached(self, key: str, build: Any) -> Any:
        """Memoise a derived, immutable value (such as the compiled grid) on this scenario."""
        try:
            return self._cache[key]
        except KeyError:
            value = self._cache[key] = build(self)
            return value


def scenario_from_dict(data: object, *, where: str = "scenario") -> Scenario:
    """Build a :class:`Scenario` from its JSON object, validating everything.

    Args:
        data: the parsed JSON object.
        where: names the source (a file path) in error messages.

    Raises:
        ScenarioError: naming ``where`` and the first problem found
            (:func:`emberbench.sim.scenario_rules.scenario_problems` lists them all).
    """
    problems, view = read_structure(data)
    if problems:
        raise ScenarioError(f"{where}: {problems[0]}")
    assert view is not None
    try:
        return Scenario(
            id=view.id, description=view.description, map=view.map,
            exits=tuple(ExitSpec(e.id, e.row, e.col) for e in view.exits),
            people=tuple(PersonSpec(p.id, p.row, p.col) for p in view.people), fire=view.fire,
            spread_numerator=view.spread_numerator, spread_denominator=view.spread_denominator,
            max_steps=view.max_steps, seed=view.seed, allow_unreachable=view.allow_unreachable,
        )
    except ScenarioError as exc:
        raise ScenarioError(f"{where}: {exc}") from None


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file."""
    return scenario_from_dict(read_scenario_file(path), where=str(Path(path)))


def read_scenario_file(path: str | Path) -> Any:
    """Read and strictly parse a scenario file under the input policy (no validation: see
    :func:`scenario_from_dict`).

    Raises:
        ScenarioError: the file breaks the input policy (not a regular file,
            over the cap, not strict JSON); the message names it.
    """
    return load_json(Path(path), SCENARIO, error=ScenarioError)


def _validate(s: Scenario) -> None:
    """Check every content rule of the scenario format; raise ScenarioError on the first failure."""
    for problem in content_problems(s):
        raise ScenarioError(problem)
