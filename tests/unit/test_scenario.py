"""Scenario validation: every rule has a table row with its expected message."""

from __future__ import annotations

import copy
import json

import pytest

from emberbench.errors import ScenarioError
from emberbench.sim.scenario import load_scenario, scenario_from_dict

BASE = {
    "scenario_format": "1.0",
    "id": "ok",
    "description": "valid base",
    "map": ["#####", "#...#", "#...#", "#####"],
    "exits": [{"id": "a", "row": 1, "col": 3}],
    "people": [{"id": "p1", "row": 1, "col": 1}, {"id": "p2", "row": 2, "col": 1}],
    "fire": [[2, 3]],
    "spread": {"numerator": 1, "denominator": 2},
    "max_steps": 10,
    "seed": 0,
    "allow_unreachable": False,
}


def mutate(path: list, value: object, *, delete: bool = False) -> dict:
    data = copy.deepcopy(BASE)
    target = data
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


INVALID = [
    (mutate(["extra"], 1), "unknown key(s) in scenario: extra"),
    (mutate(["seed"], None, delete=True), "missing key(s) in scenario: seed"),
    (mutate(["scenario_format"], "9.0"), "unsupported scenario_format '9.0'"),
    (mutate(["map"], ["#####", "#..#", "#####"]), "ragged map: row 1 has 4 cells, row 0 has 5"),
    (mutate(["map"], ["#####", "#.x.#", "#...#", "#####"]), "unknown cell character(s) 'x'"),
    (mutate(["exits"], []), "scenario has no exit"),
    (mutate(["exits"], [{"id": "a", "row": 1, "col": 3}, {"id": "a", "row": 2, "col": 2}]), "duplicate exit id 'a'"),
    (mutate(["exits", 0, "col"], 4), "exit 'a' at (1, 4) is on a wall"),
    (mutate(["exits", 0, "row"], 9), "exit 'a' at (9, 3) is outside the 4x5 map"),
    (mutate(["people", 0, "col"], 0), "person 'p1' at (1, 0) is on a wall"),
    (mutate(["people", 0, "col"], 3), "person 'p1' starts on exit 'a' at (1, 3)"),
    (mutate(["people", 1], {"id": "p2", "row": 2, "col": 3}), "person 'p2' starts on a burning cell (2, 3)"),
    (mutate(["people", 1, "id"], "p1"), "duplicate person id 'p1'"),
    (mutate(["people", 1], {"id": "p2", "row": 1, "col": 1}), "people 'p1' and 'p2' share start cell (1, 1)"),
    (mutate(["people"], []), "scenario has no people"),
    (mutate(["spread", "numerator"], 3), "spread must have integers 0 <= numerator <= denominator"),
    (mutate(["spread", "denominator"], 0), "spread must have integers 0 <= numerator <= denominator"),
    (mutate(["max_steps"], 0), "max_steps must be an integer in [1, 10000]"),
    (mutate(["max_steps"], 2.0), "max_steps must be an integer in [1, 10000]"),
    (mutate(["seed"], -1), "seed must be an integer in [0, 2**64 - 1]"),
    (mutate(["seed"], True), "seed must be an integer in [0, 2**64 - 1]"),
    (mutate(["id"], "Bad Id"), "invalid scenario id 'Bad Id'"),
    (mutate(["fire"], [[2, 3], [2, 3]]), "duplicate fire cell (2, 3)"),
    (mutate(["fire"], [[0, 0]]), "fire cell at (0, 0) is on a wall"),
    (mutate(["fire"], [[1]]), "fire[0] must be a [row, col] pair of integers"),
    (mutate(["map"], ["#####", "#.#.#", "#.#.#", "#####"]), "person 'p1' at (1, 1) cannot reach any exit"),
    (mutate(["allow_unreachable"], "yes"), "allow_unreachable must be true or false"),
]


@pytest.mark.parametrize(("data", "message"), INVALID, ids=[m[:40] for _, m in INVALID])
def test_invalid_scenarios_are_rejected_with_their_message(data: dict, message: str) -> None:
    """Each broken rule raises ScenarioError with a message naming the problem."""
    with pytest.raises(ScenarioError) as info:
        scenario_from_dict(data, where="bad.json")
    assert message in str(info.value)
    assert str(info.value).startswith("bad.json: ")


def test_unreachable_people_allowed_when_declared() -> None:
    """allow_unreachable permits a person walled off from every exit."""
    data = mutate(["map"], ["#####", "#.#.#", "#.#.#", "#####"])
    data["allow_unreachable"] = True
    assert scenario_from_dict(data).population == 2


def test_exit_nobody_can_reach_is_rejected() -> None:
    """An exit in a region with no person is an error unless allowed."""
    data = copy.deepcopy(BASE)
    data["map"] = ["#######", "#..#..#", "#..#..#", "#######"]
    data["exits"] = [{"id": "a", "row": 1, "col": 2}, {"id": "b", "row": 1, "col": 5}]
    data["fire"] = []
    with pytest.raises(ScenarioError, match="exit 'b' cannot be reached by anyone"):
        scenario_from_dict(data)


def test_content_hash_is_sha256_of_canonical_json() -> None:
    """The content hash is the SHA-256 of the canonical JSON, independent of key order."""
    import hashlib

    s = scenario_from_dict(BASE)
    canon = json.dumps(BASE, sort_keys=True, separators=(",", ":")).encode()
    assert s.content_hash == hashlib.sha256(canon).hexdigest()
    reordered = dict(reversed(list(BASE.items())))
    assert scenario_from_dict(reordered).content_hash == s.content_hash
    assert scenario_from_dict(mutate(["seed"], 1)).content_hash != s.content_hash


def test_load_scenario_names_the_file(tmp_path) -> None:  # noqa: ANN001
    """A file with invalid JSON or content is reported with its path."""
    bad = tmp_path / "s.json"
    bad.write_text('{"id": NaN}')
    with pytest.raises(ScenarioError, match="s.json"):
        load_scenario(bad)
    bad.write_text(json.dumps(mutate(["exits"], [])))
    with pytest.raises(ScenarioError, match=r"s\.json: scenario has no exit"):
        load_scenario(bad)
    with pytest.raises(ScenarioError, match="cannot read scenario file"):
        load_scenario(tmp_path / "missing.json")


def test_pickled_scenario_leaves_its_memoised_values_behind(suite) -> None:  # noqa: ANN001
    """A pickled scenario (a Ray task's argument) is the same scenario, without the compiled grid it had cached."""
    import pickle

    from emberbench.sim.grid import compile_grid

    scenario = suite.scenarios[0]
    compile_grid(scenario)
    assert "grid" in scenario._cache
    copy = pickle.loads(pickle.dumps(scenario))
    assert copy == scenario and copy.to_dict() == scenario.to_dict() and copy.content_hash == scenario.content_hash
    assert copy._cache == {} and pickle.dumps(scenario) == pickle.dumps(copy)
    assert compile_grid(copy).wall.tolist() == compile_grid(scenario).wall.tolist()
