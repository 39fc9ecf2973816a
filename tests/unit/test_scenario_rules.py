"""The collecting scenario validator: every problem listed, the first one exactly the loader's message."""

from __future__ import annotations

import copy
import json

import pytest

from emberbench.errors import ScenarioError
from emberbench.sim.scenario import scenario_from_dict
from emberbench.sim.scenario_rules import scenario_problems
from tests.conftest import ROOT
from tests.unit.scenario_mutations import BASE, mutations

GOLDEN = json.loads((ROOT / "tests" / "golden" / "scenario-error-messages.json").read_text())
CORPUS = mutations()


def test_corpus_and_golden_list_the_same_cases() -> None:
    """Every corpus case has a recorded message (the golden file was written from this corpus)."""
    assert sorted(label for label, _ in CORPUS) == sorted(GOLDEN)


@pytest.mark.parametrize(("label", "data"), CORPUS, ids=[label for label, _ in CORPUS])
def test_single_error_message_is_unchanged(label: str, data: dict) -> None:
    """scenario_from_dict raises exactly the message recorded before the rules became collectable."""
    expected = GOLDEN[label]
    if expected is None:
        scenario_from_dict(data, where="bad.json")
        return
    with pytest.raises(ScenarioError) as info:
        scenario_from_dict(data, where="bad.json")
    assert str(info.value) == expected


@pytest.mark.parametrize(("label", "data"), CORPUS, ids=[label for label, _ in CORPUS])
def test_collecting_validator_starts_with_the_loader_message(label: str, data: dict) -> None:
    """scenario_problems lists the loader's message first, and nothing for a valid object."""
    problems = scenario_problems(data, where="bad.json")
    expected = GOLDEN[label]
    assert problems[:1] == ([] if expected is None else [expected])


@pytest.mark.parametrize(("data", "expected"), [
    ({**BASE, "extra": 1, "max_steps": 0, "seed": -1}, [
        "unknown key(s) in scenario: extra", "max_steps must be an integer in [1, 10000], got 0",
        "seed must be an integer in [0, 2**64 - 1], got -1"]),
    ({**BASE, "id": "Bad", "map": ["######", "#", "#....#", "#....#", "######"], "fire": [[0, 0]]}, [
        "invalid scenario id 'Bad' (lowercase letters, digits and '-', at most 80)",
        "ragged map: row 1 has 1 cells, row 0 has 6"]),
    ({**BASE, "people": [{"id": "p1", "row": 1, "col": 4}, {"id": "p1", "row": 1, "col": 4}]}, [
        "person 'p1' starts on exit 'a' at (1, 4)", "duplicate person id 'p1'",
        "person 'p1' starts on exit 'a' at (1, 4)", "people 'p1' and 'p1' share start cell (1, 4)"]),
    ({**BASE, "spread": {"p": 1}, "exits": [{"id": "a", "row": 1}, {"id": "bad id", "row": 3, "col": 0}]}, [
        "missing key(s) in exits[0]: col", "unknown key(s) in spread: p", "missing key(s) in spread: denominator, numerator",
        "invalid exit id 'bad id'", "exit 'bad id' at (3, 0) is on a wall"]),
    ({**BASE, "map": ["######", "#.#..#", "###..#", "#.#..#", "######"],
      "people": [{"id": "p1", "row": 1, "col": 1}, {"id": "p2", "row": 2, "col": 3}]}, [
        "person 'p1' at (1, 1) cannot reach any exit (set allow_unreachable to permit this)",
        "exit 'b' cannot be reached by anyone (set allow_unreachable to permit this)"]),
], ids=["three independent", "id and ragged map", "people clash", "structure and names", "reachability"])
def test_collecting_validator_lists_every_problem(data: dict, expected: list[str]) -> None:
    """Independent problems are all listed, in rule order, each once per occurrence."""
    assert scenario_problems(data, where="s") == [f"s: {m}" for m in expected]


def test_reachability_is_skipped_after_a_cell_problem() -> None:
    """A person on a wall is reported once, not again as a person who cannot reach an exit."""
    data = copy.deepcopy(BASE)
    data["people"][0]["col"] = 0
    assert scenario_problems(data, where="s") == ["s: person 'p1' at (1, 0) is on a wall"]


def test_not_an_object() -> None:
    """A non-object is one problem and nothing else is checked."""
    assert scenario_problems([1], where="s") == ["s: scenario must be a JSON object, got list"]
