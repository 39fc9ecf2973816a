"""What a policy sees: the immutable observation (version 1.0) and its JSON.

An observation holds the step counter, the step limit, the map with the fire
*as it is now*, the exits and the people still inside. It holds no seed, no
random state, no scenario id or hash, no episode index and no future fire
(see docs/v1-fairness-spec.md). Every value inside is one of the types in
:data:`OBSERVATION_TYPES`.

Grid characters: ``#`` wall, ``.`` floor, ``E`` exit, ``*`` burning (a
burning floor or exit cell).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from ..io.canonical import canonical_json
from ..io.versions import OBSERVATION_VERSION


class ExitView(NamedTuple):
    """An exit's id and cell."""

    id: str
    row: int
    col: int


class PersonView(NamedTuple):
    """A person still inside: id and current cell."""

    id: str
    row: int
    col: int


@dataclass(frozen=True, slots=True)
class Observation:
    """The state a policy sees at the start of a step.

    Attributes:
        step: steps completed so far (0 at the start).
        max_steps: the episode's step limit.
        height, width: map size.
        grid: one string per row (``#``, ``.``, ``E``, ``*``).
        exits: every exit in scenario order (burning ones included).
        people: the people still inside, in scenario order.
    """

    step: int
    max_steps: int
    height: int
    width: int
    grid: tuple[str, ...]
    exits: tuple[ExitView, ...]
    people: tuple[PersonView, ...]
    version: str = OBSERVATION_VERSION

    def to_dict(self) -> dict[str, Any]:
        """The JSON object sent to out-of-process models."""
        return {
            "observation_version": self.version,
            "step": self.step,
            "max_steps": self.max_steps,
            "height": self.height,
            "width": self.width,
            "grid": list(self.grid),
            "exits": [{"id": e.id, "row": e.row, "col": e.col} for e in self.exits],
            "people": [{"id": p.id, "row": p.row, "col": p.col} for p in self.people],
        }

    def to_json(self) -> str:
        """Canonical JSON of :meth:`to_dict` (one line, no newline)."""
        return canonical_json(self.to_dict())

    def burning(self) -> frozenset[tuple[int, int]]:
        """The set of burning cells as (row, col) pairs."""
        return frozenset(
            (r, c) for r, row in enumerate(self.grid) for c, ch in enumerate(row) if ch == "*"
        )


OBSERVATION_TYPES = (Observation, ExitView, PersonView, tuple, str, int)
