"""A deterministic corpus of broken scenario objects, shared by the validation tests.

Each entry is ``(label, data)``: the valid base scenario with one or two
things changed. ``tests/golden/scenario-error-messages.json`` holds the message
the single-error loader gave for each entry before the rules became
collectable; the tests hold every later version to exactly those messages.
"""

from __future__ import annotations

import copy
from typing import Any

BASE: dict[str, Any] = {
    "scenario_format": "1.0",
    "id": "ok",
    "description": "valid base",
    "map": ["######", "#....#", "#....#", "#....#", "######"],
    "exits": [{"id": "a", "row": 1, "col": 4}, {"id": "b", "row": 3, "col": 1}],
    "people": [{"id": "p1", "row": 1, "col": 1}, {"id": "p2", "row": 2, "col": 2}],
    "fire": [[3, 4]],
    "spread": {"numerator": 1, "denominator": 2},
    "max_steps": 10,
    "seed": 0,
    "allow_unreachable": False,
}

_BAD_VALUES: tuple[Any, ...] = (None, True, -1, 1.5, "x", [], {}, [[1]], 1 << 70, ["#"])


def _set(data: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(data)
    target = out
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return out


_DELETE = object()

_PATHS: tuple[tuple[Any, ...], ...] = (
    ("scenario_format",), ("id",), ("description",), ("map",), ("exits",), ("people",), ("fire",),
    ("spread",), ("max_steps",), ("seed",), ("allow_unreachable",),
    ("exits", 0), ("exits", 0, "id"), ("exits", 0, "row"), ("exits", 0, "col"),
    ("people", 1), ("people", 1, "id"), ("people", 1, "row"), ("people", 1, "col"),
    ("fire", 0), ("spread", "numerator"), ("spread", "denominator"), ("map", 2),
)

_SPECIAL: tuple[tuple[str, dict[str, Any]], ...] = (
    ("extra key", {**BASE, "extra": 1}),
    ("ragged", _set(BASE, ("map", 2), "#...#")),
    ("bad char", _set(BASE, ("map", 2), "#.x.X#")),
    ("no rows", _set(BASE, ("map",), [])),
    ("too wide", _set(BASE, ("map",), ["." * 300])),
    ("empty rows", _set(BASE, ("map",), ["", ""])),
    ("no exits", _set(BASE, ("exits",), [])),
    ("no people", _set(BASE, ("people",), [])),
    ("dup exit id", _set(BASE, ("exits", 1, "id"), "a")),
    ("dup exit cell", _set(BASE, ("exits", 1), {"id": "b", "row": 1, "col": 4})),
    ("exit on wall", _set(BASE, ("exits", 0, "col"), 5)),
    ("exit outside", _set(BASE, ("exits", 0, "row"), 9)),
    ("fire on wall", _set(BASE, ("fire",), [[0, 0]])),
    ("fire outside", _set(BASE, ("fire",), [[0, 9]])),
    ("dup fire", _set(BASE, ("fire",), [[3, 4], [3, 4]])),
    ("person on wall", _set(BASE, ("people", 0, "col"), 0)),
    ("person on exit", _set(BASE, ("people", 0, "col"), 4)),
    ("person on fire", _set(BASE, ("people", 1), {"id": "p2", "row": 3, "col": 4})),
    ("dup person id", _set(BASE, ("people", 1, "id"), "p1")),
    ("shared cell", _set(BASE, ("people", 1), {"id": "p2", "row": 1, "col": 1})),
    ("long description", _set(BASE, ("description",), "d" * 501)),
    ("blank description", _set(BASE, ("description",), "   ")),
    ("bad spread", _set(BASE, ("spread",), {"numerator": 3, "denominator": 2})),
    ("huge denominator", _set(BASE, ("spread",), {"numerator": 1, "denominator": (1 << 32) + 1})),
    ("max steps high", _set(BASE, ("max_steps",), 10_001)),
    ("unreachable person", _set(BASE, ("map",), ["######", "#.#..#", "###..#", "#....#", "######"])),
    ("unreachable exit", _set(_set(BASE, ("map",), ["######", "#..#.#", "#..#.#", "#..#.#", "######"]),
                              ("exits",), [{"id": "a", "row": 1, "col": 1}, {"id": "b", "row": 3, "col": 4}])),
    ("two problems", _set(_set(BASE, ("max_steps",), 0), ("people", 0, "col"), 0)),
    ("three problems", _set(_set(_set(BASE, ("seed",), -1), ("exits", 0, "id"), "bad id"), ("fire",), [[0, 0]])),
    ("structure and content", _set(_set(BASE, ("spread",), {"p": 1}), ("max_steps",), 0)),
    ("bad id and ragged", _set(_set(BASE, ("id",), "Bad"), ("map", 1), "#")),
)


def mutations() -> list[tuple[str, dict[str, Any]]]:
    """Every broken scenario of the corpus, labelled, in a fixed order."""
    out: list[tuple[str, dict[str, Any]]] = []
    for path in _PATHS:
        out.append((f"delete {'.'.join(map(str, path))}", _set(BASE, path, _DELETE)))
        for i, value in enumerate(_BAD_VALUES):
            out.append((f"set {'.'.join(map(str, path))} #{i}", _set(BASE, path, value)))
    out.extend(_SPECIAL)
    return out
