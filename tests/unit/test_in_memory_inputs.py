"""Issue 22, defect 14: a public function handed a malformed object in memory raises an EmberError, never a bare one.

A frozen dataclass still lets a field be replaced (``object.__setattr__``,
``dataclasses.replace``), so the objects the public API takes (results,
manifests, records, statistics) can hold anything: ``None`` for an episode,
a string for a record, an integer too long to print. Each case replaces one
field of one part and requires the documented error class (the statistics
specification: any failure of the statistics inputs is a statistics input
error), and no file written.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import emberbench as eb
from emberbench.errors import (
    EmberError,
    ManifestError,
    PairingError,
    RecordAuthenticationError,
    ResultError,
    StatisticsInputError,
)
from tests.hypothesis_profiles import examples
from tests.run_support import small_manifest

IDS = ["v1-pub-01-single-exit-sparse", "v1-pub-12-smouldering-two-exits"]
HUGE = 10**5000  # too long to print: a message that shows it with repr() fails
BAD_VALUES = [None, "x", -1, HUGE, math.nan, (None,), object()]
BAD_IDS = ["None", "str", "-1", "huge", "nan", "tuple", "object"]


@pytest.fixture(scope="module")
def material(suite) -> dict[str, Any]:  # noqa: ANN001
    """A two-episode manifest, results of two policies on it, and their aggregate statistics."""
    manifest = small_manifest(suite, seeds=range(1), ids=IDS)
    greedy = eb.evaluate(manifest, suite, "greedy", "greedy")
    stay = eb.evaluate(manifest, suite, "stay", "stay")
    return {"manifest": manifest, "greedy": greedy, "stay": stay,
            "stats": eb.aggregate_statistics(greedy, suite, 100)}


def _set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)


def _result_with(result: Any, part: str, name: str, value: object) -> Any:
    """A deep copy of ``result`` with field ``name`` of ``part`` replaced."""
    bad = copy.deepcopy(result)
    target = {"result": bad, "manifest": bad.manifest, "episode": bad.episodes[0], "entry": bad.episodes[0].entry,
              "record": bad.episodes[0].record, "metrics": bad.episodes[0].metrics}[part]
    _set(target, name, value)
    return bad


RESULT_FIELDS = {
    "result": ["model_id", "manifest", "episodes", "digest"],
    "manifest": ["suite_id", "episodes", "simulator_version", "manifest_version", "hash"],
    "episode": ["entry", "record_digest", "record", "metrics"],
    "entry": ["index", "scenario_id", "scenario_hash", "seed"],
    "record": ["scenario_id", "seed", "population", "actions", "steps", "termination", "evacuations", "burning"],
    "metrics": ["counts", "termination", "exposure_histogram", "exit_counts"],
}
RESULT_CASES = [(part, name) for part, names in RESULT_FIELDS.items() for name in names]

# The issue's own examples, by name.
NAMED = {
    "an episode is None": lambda r: _set(r, "episodes", (None, *r.episodes[1:])),
    "an episode is 'x'": lambda r: _set(r, "episodes", ("x", *r.episodes[1:])),
    "episodes is None": lambda r: _set(r, "episodes", None),
    "an episode's metrics are None": lambda r: _set(r.episodes[0], "metrics", None),
    "an episode's record is None": lambda r: _set(r.episodes[0], "record", None),
    "not a result at all": None,
}


def _named(result: Any, name: str) -> Any:
    if NAMED[name] is None:
        return {"model_id": "x"}
    bad = copy.deepcopy(result)
    NAMED[name](bad)
    return bad


STATISTICS_CALLS: dict[str, Callable[..., Any]] = {
    "aggregate_statistics": lambda bad, good, suite: eb.aggregate_statistics(bad, suite, 100),
    "paired_statistics (A)": lambda bad, good, suite: eb.paired_statistics(bad, good, suite, 100),
    "paired_statistics (B)": lambda bad, good, suite: eb.paired_statistics(good, bad, suite, 100),
}


@pytest.mark.parametrize("call", list(STATISTICS_CALLS))
@pytest.mark.parametrize("name", list(NAMED))
def test_the_issues_examples_are_statistics_input_errors(material, suite, name: str, call: str) -> None:  # noqa: ANN001
    """An episode set to None or 'x', an episode's metrics or record set to None: a StatisticsInputError
    (was AttributeError or TypeError), naming the part."""
    bad = _named(material["greedy"], name)
    with pytest.raises(StatisticsInputError) as info:
        STATISTICS_CALLS[call](bad, material["greedy"], suite)
    assert "\n" not in str(info.value)
    if name != "not a result at all":
        assert "episodes" in str(info.value), info.value


@pytest.mark.parametrize("name", list(NAMED))
def test_pairing_in_memory_refuses_a_malformed_result(material, name: str) -> None:  # noqa: ANN001
    """pair_results checks what it pairs on: a malformed result is a ResultError naming it (was AttributeError,
    or a report on a result that holds no episode)."""
    bad = _named(material["greedy"], name)
    with pytest.raises(ResultError, match="^result A: "):
        eb.pair_results(bad, material["stay"])
    with pytest.raises(ResultError, match="^result B: "):
        eb.pair_results(material["stay"], bad)


@pytest.mark.parametrize("value", BAD_VALUES, ids=BAD_IDS)
@pytest.mark.parametrize(("part", "name"), RESULT_CASES, ids=[f"{p}.{n}" for p, n in RESULT_CASES])
def test_any_field_of_a_result_replaced_is_refused_by_every_function(material, suite, part: str, name: str,
                                                                    value: object) -> None:  # noqa: ANN001
    """Any field of any part of a result replaced by a bad value: the statistics raise StatisticsInputError (or
    PairingError for a manifest that no longer matches the other result's); pairing raises a ResultError or a
    PairingError, or pairs (a record, metrics or digest it does not look at, a model id that is still valid);
    never another exception."""
    bad = _result_with(material["greedy"], part, name, value)
    with pytest.raises(StatisticsInputError):
        eb.aggregate_statistics(bad, suite, 100)
    for call in STATISTICS_CALLS.values():
        with pytest.raises((StatisticsInputError, PairingError)):
            call(bad, material["greedy"], suite)
    try:
        eb.pair_results(bad, material["stay"])
    except (ResultError, PairingError):
        pass
    else:
        assert part in ("record", "metrics") or name in ("record_digest", "digest", "model_id"), "pairing accepted it"


@settings(max_examples=examples(60), deadline=None)
@given(data=st.data())
def test_a_random_replacement_anywhere_is_an_ember_error(material, suite, data) -> None:  # noqa: ANN001
    """Property: whatever field of whatever part is replaced by whatever value, aggregate_statistics raises a
    StatisticsInputError and pair_results an EmberError or nothing; nothing else escapes."""
    part = data.draw(st.sampled_from(sorted(RESULT_FIELDS)))
    name = data.draw(st.sampled_from([f.name for f in dataclasses.fields(_part(material["greedy"], part))]))
    value = data.draw(st.sampled_from(BAD_VALUES) | st.integers() | st.text(max_size=4)
                      | st.lists(st.none(), max_size=2).map(tuple))
    bad = _result_with(material["greedy"], part, name, value)
    try:
        eb.aggregate_statistics(bad, suite, 100)
    except StatisticsInputError:
        pass
    else:
        assert getattr(_part(material["greedy"], part), name) == value, "a changed result was accepted"
    try:
        eb.pair_results(bad, material["greedy"])
    except EmberError:
        pass


def _part(result: Any, part: str) -> Any:
    return {"result": result, "manifest": result.manifest, "episode": result.episodes[0],
            "entry": result.episodes[0].entry, "record": result.episodes[0].record,
            "metrics": result.episodes[0].metrics}[part]


MANIFEST_FIELDS = ["suite_id", "suite_version", "suite_hash", "episodes", "simulator_version", "manifest_version"]


@pytest.mark.parametrize("value", [None, -1, HUGE, (None,)], ids=["None", "-1", "huge", "tuple"])
@pytest.mark.parametrize("name", [*MANIFEST_FIELDS, "entry.index", "entry.seed", "entry.scenario_hash"])
def test_a_malformed_manifest_object_is_a_manifest_error_and_nothing_is_written(material, suite, tmp_path,
                                                                               name: str, value: object) -> None:  # noqa: ANN001
    """evaluate, run_evaluation and write_manifest check a manifest object again before using it: a field
    replaced after construction is a ManifestError and no file appears (was a TypeError, an AttributeError, a
    ValueError from an integer too long to print, or a manifest file written with null fields)."""
    bad = copy.deepcopy(material["manifest"])
    if name.startswith("entry."):
        _set(bad.episodes[0], name.split(".")[1], value)
    else:
        _set(bad, name, value)
    with pytest.raises(ManifestError):
        eb.evaluate(bad, suite, "greedy", "m")
    with pytest.raises(ManifestError):
        eb.write_manifest(bad, tmp_path / "m.json")
    with pytest.raises(ManifestError):
        eb.run_evaluation(bad, suite, "greedy", "m", tmp_path / "r.json")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value", [None, 7, HUGE], ids=lambda v: type(v).__name__)
@pytest.mark.parametrize("name", ["actions", "blocked", "evacuations", "exposure", "seed", "steps"])
def test_authenticating_a_malformed_record_object_is_a_record_error(material, suite, name: str,
                                                                   value: object) -> None:  # noqa: ANN001
    """authenticate(RunRecord) with a field replaced: a RecordAuthenticationError (was a TypeError)."""
    record = copy.deepcopy(material["greedy"].episodes[0].record)
    _set(record, name, value)
    with pytest.raises(RecordAuthenticationError):
        eb.authenticate(record, suite)
    with pytest.raises(RecordAuthenticationError, match="expected a Suite"):
        eb.authenticate(material["greedy"].episodes[0].record, None)


@pytest.mark.parametrize("value", [None, "x"], ids=lambda v: type(v).__name__)
@pytest.mark.parametrize("name", ["context", "missing_episodes", "overall", "scenarios", "families"])
def test_writing_malformed_statistics_is_a_statistics_error_and_writes_nothing(material, tmp_path, name: str,
                                                                              value: object) -> None:  # noqa: ANN001
    """write_artifact of a statistics object with a field replaced: StatisticsInputError, no file (was an
    AttributeError or TypeError)."""
    stats = copy.deepcopy(material["stats"])
    _set(stats, name, value)
    with pytest.raises(StatisticsInputError):
        eb.write_artifact(stats, tmp_path / "s.json")
    with pytest.raises(StatisticsInputError, match="expected AggregateStatistics"):
        eb.write_artifact(None, tmp_path / "s.json")
    assert list(tmp_path.iterdir()) == []


def test_an_unchanged_copy_still_passes(material, suite, tmp_path) -> None:  # noqa: ANN001
    """The checks refuse only what changed: deep copies of good objects pass everywhere, with the same bytes."""
    greedy = copy.deepcopy(material["greedy"])
    assert eb.aggregate_statistics(greedy, suite, 100).to_json_bytes() == material["stats"].to_json_bytes()
    assert eb.pair_results(greedy, material["stay"]).paired_count == 2
    eb.write_manifest(copy.deepcopy(material["manifest"]), tmp_path / "m.json")
    eb.authenticate(copy.deepcopy(greedy.episodes[0].record), suite)
    eb.write_artifact(copy.deepcopy(material["stats"]), tmp_path / "s.json")
