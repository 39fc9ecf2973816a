"""Strict validation of the grouped-rates input: every refusal names its field."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from emberbench.errors import GroupedRatesError
from emberbench.grouped_rates import build_report, parse_input, render
from tests.unit.test_grouped_rates_support import EXAMPLE_COUNTS, make_document

Doc = dict[str, Any]


def _set(path: tuple, value: Any) -> Callable[[Doc], None]:
    def mutate(doc: Doc) -> None:
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return mutate


def _delete(path: tuple) -> Callable[[Doc], None]:
    def mutate(doc: Doc) -> None:
        target = doc
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return mutate


def _duplicate_episode_id(doc: Doc) -> None:
    doc["episodes"][1]["id"] = doc["episodes"][0]["id"]


CASES = [
    ("unknown top-level key", _set(("extra",), 1), "document: unknown key 'extra'"),
    ("missing top-level key", _delete(("dependence",)), "document: missing key 'dependence'"),
    ("wrong format", _set(("format",), "other"), "format: 'other' is not"),
    ("future version", _set(("version",), "2.0"), "version: '2.0' is not supported"),
    ("unknown key in an episode", _set(("episodes", 0, "weight"), 2), "episodes[0]: unknown key 'weight'"),
    ("missing key in an episode", _delete(("episodes", 0, "label")), "episodes[0]: missing key 'label'"),
    ("duplicate episode id", _duplicate_episode_id, "episodes[1].id: duplicate episode id"),
    ("episode in undeclared task", _set(("episodes", 0, "task"), "T99"), "episodes[0].task: 'T99' is not a declared task"),
    ("episode in undeclared arm", _set(("episodes", 0, "arm"), "other"), "episodes[0].arm: 'other' is not a declared arm"),
    ("label outside the rubric", _set(("episodes", 0, "label"), "timeout"), "episodes[0].label: 'timeout' is not a rubric label"),
    ("malformed episode id", _set(("episodes", 0, "id"), "has space"), "episodes[0].id: 'has space' is not an id"),
    ("episodes not a list", _set(("episodes",), {}), "episodes: must be a JSON array"),
    ("episode not an object", _set(("episodes", 0), "x"), "episodes[0]: must be a JSON object"),
    ("duplicate task", _set(("population", "tasks"), ["T01", "T01"]), "population.tasks[1]: duplicate id 'T01'"),
    ("no task", _set(("population", "tasks"), []), "population.tasks: declares no task"),
    ("one arm", _set(("arms",), ["attack"]), "arms: must declare exactly two arms, not 1"),
    ("duplicate arm", _set(("arms",), ["attack", "attack"]), "arms[1]: duplicate id 'attack'"),
    ("empty description", _set(("description",), " "), "description: must be a non-empty string"),
    ("dependence not a string", _set(("dependence",), 3), "dependence: must be a non-empty string"),
    ("unknown matching key", _set(("matching", "note"), "x"), "matching: unknown key 'note'"),
    ("rubric may not vary", _set(("matching", "varied", "condition"), "outcome_rubric"), "the outcome rubric must be shared"),
    ("varied condition also shared", _set(("matching", "varied", "condition"), "agent"), "matching.shared: unknown key 'agent'"),
    ("missing shared condition", _delete(("matching", "shared", "budget")), "matching.shared: missing key 'budget'"),
    ("per-arm keys not the arms", _set(("matching", "varied", "per_arm"), {"attack": "on", "x": "off"}), "matching.varied.per_arm: unknown key 'x'"),
    ("arms declare the same value", _set(("matching", "varied", "per_arm"), {"attack": "on", "benign": "on"}), "the two arms declare the same value"),
    ("rubric lacks a label", _delete(("rubric", "unresolved")), "rubric: missing key 'unresolved'"),
    ("rubric adds a label", _set(("rubric", "partial"), "p"), "rubric: unknown key 'partial'"),
    ("unknown resampling mode", _set(("resampling",), {"mode": "bca"}), "resampling.mode: 'bca' is not one of"),
    ("seed given to exact", _set(("resampling",), {"mode": "exact", "seed": 1}), "resampling: unknown key 'seed'"),
    ("monte-carlo without seed", _set(("resampling",), {"mode": "monte-carlo", "replicates": 5}), "resampling: missing key 'seed'"),
    ("monte-carlo without replicates", _set(("resampling",), {"mode": "monte-carlo", "seed": 5}), "resampling: missing key 'replicates'"),
    ("boolean seed", _set(("resampling",), {"mode": "monte-carlo", "seed": True, "replicates": 5}), "resampling.seed: must be an integer"),
    ("float replicates", _set(("resampling",), {"mode": "monte-carlo", "seed": 1, "replicates": 5.0}), "resampling.replicates: must be an integer"),
    ("zero replicates", _set(("resampling",), {"mode": "monte-carlo", "seed": 1, "replicates": 0}), "resampling.replicates: 0 is outside"),
    ("negative seed", _set(("resampling",), {"mode": "monte-carlo", "seed": -1, "replicates": 5}), "resampling.seed: -1 is outside"),
]


@pytest.mark.parametrize(("mutate", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_invalid_input_is_refused_with_a_message_naming_the_field(mutate: Callable[[Doc], None], message: str) -> None:
    """Each malformed document raises GroupedRatesError whose message names the problem."""
    doc = copy.deepcopy(make_document(EXAMPLE_COUNTS))
    mutate(doc)
    with pytest.raises(GroupedRatesError) as caught:
        parse_input(doc)
    assert message in str(caught.value)
    assert str(caught.value).startswith("input: ")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"{", "not valid JSON"),
        (b'{"a": 1, "a": 2}', "duplicate key 'a'"),
        (b'{"a": NaN}', "JSON constant NaN is not allowed"),
        (b"[]", "document: must be a JSON object"),
        (b"\xff\xfe", "not valid UTF-8"),
    ],
)
def test_input_bytes_that_are_not_strict_json_are_refused(text: bytes, message: str) -> None:
    """Broken JSON, repeated keys, NaN and a non-object top level are refused before any work."""
    with pytest.raises(GroupedRatesError) as caught:
        build_report(text)
    assert message in str(caught.value)


def test_a_future_version_fixture_is_refused_by_name() -> None:
    """A complete, otherwise valid version-2.0 input is refused, naming the version this reader reads."""
    doc = make_document(EXAMPLE_COUNTS)
    doc["version"] = "2.0"
    doc["confidence_method"] = "bca"
    with pytest.raises(GroupedRatesError, match=r"'2.0' is not supported; this reader reads version 1.0"):
        build_report(render(doc))


def test_parsed_input_round_trips_through_to_dict() -> None:
    """parse_input(x).to_dict() is the document again, and parses to an equal value."""
    doc = make_document(EXAMPLE_COUNTS, {"mode": "monte-carlo", "seed": 7, "replicates": 10})
    parsed = parse_input(doc)
    assert parsed.to_dict() == doc
    assert parse_input(json.loads(json.dumps(parsed.to_dict()))) == parsed


def test_agent_may_be_the_varied_condition_when_it_is_not_also_shared() -> None:
    """A model comparison declares the agent per arm and shares the other three conditions."""
    doc = make_document(EXAMPLE_COUNTS)
    del doc["matching"]["shared"]["agent"]
    doc["matching"]["varied"] = {"condition": "agent", "per_arm": {"attack": "model-a", "benign": "model-b"}}
    parsed = parse_input(doc)
    assert parsed.varied_condition == "agent"
    assert dict(parsed.shared) == {"environment": "e", "budget": "b", "outcome_rubric": "r"}


def test_a_task_without_episodes_is_kept_in_the_population() -> None:
    """Declaring a task that has no episode is valid: it stays in the population."""
    doc = make_document(EXAMPLE_COUNTS)
    doc["population"]["tasks"].append("T05")
    assert parse_input(doc).tasks[-1] == "T05"
