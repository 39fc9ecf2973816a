"""Strict readers and JSON Schemas agree: on a table of invalid documents, both refuse.

Each row starts from a valid document (a golden sample, a shipped file or an
example), breaks one field, and requires the format's reader to raise its
error and the schema, as shipped, to report at least one error. Rules no
schema can state (cross-field consistency, replay) are the readers' alone and
are not in this table.
"""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from emberbench.errors import EmberError
from tests.conftest import ROOT
from tests.schema_check import schema_errors

GOLDEN = ROOT / "tests" / "golden"
SUITE = ROOT / "emberbench" / "suites" / "emberbench-v1-public"
EXAMPLE = ROOT / "docs" / "examples" / "task-grouped-rates"
SCENARIO = SUITE / "scenarios" / "v1-pub-01-single-exit-sparse.json"


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_bytes())


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """A mutation that sets the field at dotted ``path`` (list positions as numbers) to ``value``."""
    def mutate(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = doc
        for token in parents:
            node = node[int(token)] if isinstance(node, list) else node[token]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
    return mutate


def _drop(path: str) -> Callable[[dict[str, Any]], None]:
    def mutate(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = doc
        for token in parents:
            node = node[int(token)] if isinstance(node, list) else node[token]
        del node[last]
    return mutate


def _read_scenario(doc: Any, suite: Any, tmp: Path) -> None:
    from emberbench.sim.scenario import scenario_from_dict

    scenario_from_dict(doc)


def _read_suite(doc: Any, suite: Any, tmp: Path) -> None:
    from emberbench.sim.suite import load_suite

    folder = tmp / "suite"
    shutil.copytree(SUITE, folder)
    (folder / "suite.json").write_text(json.dumps(doc))
    load_suite(folder)


def _read_manifest(doc: Any, suite: Any, tmp: Path) -> None:
    from emberbench.results.manifest import manifest_from_dict

    manifest_from_dict(doc)


def _read_record(doc: Any, suite: Any, tmp: Path) -> None:
    from emberbench.records.episode import authenticate

    authenticate(doc, suite)


def _read_metrics(doc: Any, suite: Any, tmp: Path) -> None:
    from emberbench.records.metrics import metrics_from_dict

    metrics_from_dict(doc)


def _read_result(doc: Any, suite: Any, tmp: Path) -> None:
    from emberbench.results.artifact import result_from_dict

    result_from_dict(doc, suite)


def _read_grouped_input(doc: Any, suite: Any, tmp: Path) -> None:
    from emberbench.grouped_rates import parse_input

    parse_input(doc)


FORMATS = {
    "scenario": (lambda: _load(SCENARIO), _read_scenario),
    "suite": (lambda: _load(SUITE / "suite.json"), _read_suite),
    "manifest": (lambda: _load(GOLDEN / "manifest-1.0.json"), _read_manifest),
    "record": (lambda: _load(GOLDEN / "record-1.0.json"), _read_record),
    "metrics": (lambda: _load(GOLDEN / "metrics-1.0.json"), _read_metrics),
    "result": (lambda: _load(GOLDEN / "result-1.0.json"), _read_result),
    "grouped-rates-input": (lambda: _load(EXAMPLE / "input.json"), _read_grouped_input),
}

HASH = "ab" * 32
INVALID = [
    # scenario
    ("scenario", "future version", _set("scenario_format", "2.0")),
    ("scenario", "unknown key", _set("colour", "red")),
    ("scenario", "missing key", _drop("seed")),
    ("scenario", "bad id", _set("id", "Single_Exit")),
    ("scenario", "blank description", _set("description", "")),
    ("scenario", "long description", _set("description", "x" * 501)),
    ("scenario", "no rows", _set("map", [])),
    ("scenario", "unknown cell", _set("map.1", "#X..........#")),
    ("scenario", "no exit", _set("exits", [])),
    ("scenario", "bad exit id", _set("exits.0.id", "bad id")),
    ("scenario", "extra exit key", _set("exits.0.door", True)),
    ("scenario", "fire cell not a pair", _set("fire", [[1]])),
    ("scenario", "no people", _set("people", [])),
    ("scenario", "zero denominator", _set("spread.denominator", 0)),
    ("scenario", "max_steps 0", _set("max_steps", 0)),
    ("scenario", "max_steps too large", _set("max_steps", 10_001)),
    ("scenario", "negative seed", _set("seed", -1)),
    ("scenario", "seed 2**64", _set("seed", 2**64)),
    ("scenario", "boolean seed", _set("seed", True)),
    ("scenario", "allow_unreachable not boolean", _set("allow_unreachable", "yes")),
    # suite
    ("suite", "future version", _set("suite_format", "2.0")),
    ("suite", "unknown key", _set("owner", "x")),
    ("suite", "bad suite id", _set("suite_id", "Public")),
    ("suite", "version not semver", _set("suite_version", "1.0")),
    ("suite", "no scenarios", _set("scenarios", [])),
    ("suite", "bad pinned hash", _set("scenarios.0.scenario_hash", "XYZ")),
    ("suite", "file leaves the suite", _set("scenarios.0.file", "../x.json")),
    ("suite", "absolute file", _set("scenarios.0.file", "/etc/x.json")),
    ("suite", "family without description", _drop("families.0.description")),
    ("suite", "family repeats a member", _set("families.0.scenarios", ["v1-pub-01-single-exit-sparse"] * 2)),
    # manifest
    ("manifest", "future version", _set("manifest_version", "2.0")),
    ("manifest", "unknown key", _set("note", "x")),
    ("manifest", "missing episodes", _drop("episodes")),
    ("manifest", "no episodes", _set("episodes", [])),
    ("manifest", "upper-case hash", _set("suite_hash", "AB" * 32)),
    ("manifest", "version not semver", _set("suite_version", "1.0")),
    ("manifest", "bad simulator version", _set("simulator_version", "latest")),
    ("manifest", "negative index", _set("episodes.0.index", -1)),
    ("manifest", "seed 2**64", _set("episodes.0.seed", 2**64)),
    ("manifest", "extra entry key", _set("episodes.0.weight", 1)),
    ("manifest", "empty scenario id", _set("episodes.0.scenario_id", "")),
    # record
    ("record", "future version", _set("header.record_version", "2.0")),
    ("record", "other simulator", _set("header.simulator_version", "0.1.0")),
    ("record", "other observation version", _set("header.observation_version", "0.9")),
    ("record", "unknown header key", _set("header.model", "x")),
    ("record", "bad scenario hash", _set("header.scenario_hash", "f1aa")),
    ("record", "seed 2**64", _set("header.seed", 2**64)),
    ("record", "population 0", _set("header.population", 0)),
    ("record", "actions not a list", _set("actions", "EEE")),
    ("record", "unknown termination", _set("outcome.termination", "timeout")),
    ("record", "evacuation without exit", _set("outcome.evacuations.0", [5, "p005"])),
    ("record", "negative burning count", _set("outcome.burning.0", -3)),
    ("record", "missing outcome key", _drop("outcome.stranded")),
    # metrics
    ("metrics", "future version", _set("metrics_version", "2.0")),
    ("metrics", "missing count", _drop("counts.steps")),
    ("metrics", "negative count", _set("counts.casualties", -1)),
    ("metrics", "population 0", _set("counts.population", 0)),
    ("metrics", "exposure at distance 0", _set("exposure_histogram.0", [0, 4])),
    ("metrics", "no exits", _set("exit_counts", [])),
    ("metrics", "unknown termination", _set("termination", "timeout")),
    ("metrics", "unknown metric", _set("safety.panic_rate", 0.0)),
    ("metrics", "rate above 1", _set("safety.evacuated_rate", 1.5)),
    # result
    ("result", "future version", _set("result_version", "2.0")),
    ("result", "unknown key", _set("comment", "x")),
    ("result", "missing model id", _drop("model_id")),
    ("result", "empty model id", _set("model_id", "")),
    ("result", "model id with outer space", _set("model_id", " greedy")),
    ("result", "model id with a newline", _set("model_id", "greedy\n")),
    ("result", "model id too long", _set("model_id", "m" * 257)),
    ("result", "bad manifest hash", _set("evaluation_manifest_hash", "00")),
    ("result", "episodes not a list", _set("episodes", {})),
    ("result", "episode without metrics", _drop("episodes.0.metrics")),
    ("result", "bad record digest", _set("episodes.0.record_digest", HASH.upper())),
    ("result", "embedded manifest version", _set("manifest.manifest_version", "2.0")),
    ("result", "embedded record version", _set("episodes.0.record.header.record_version", "2.0")),
    # grouped-rates input
    ("grouped-rates-input", "other format", _set("format", "emberbench.grouped-rates.report")),
    ("grouped-rates-input", "future version", _set("version", "2.0")),
    ("grouped-rates-input", "unknown key", _set("notes", "x")),
    ("grouped-rates-input", "three arms", _set("arms", ["attack", "benign", "third"])),
    ("grouped-rates-input", "same arm twice", _set("arms", ["attack", "attack"])),
    ("grouped-rates-input", "bad task id", _set("population.tasks.0", "-T01")),
    ("grouped-rates-input", "repeated task", _set("population.tasks.1", "T01")),
    ("grouped-rates-input", "no task", _set("population.tasks", [])),
    ("grouped-rates-input", "unknown label", _set("episodes.0.label", "maybe")),
    ("grouped-rates-input", "blank description", _set("description", "   ")),
    ("grouped-rates-input", "unknown mode", _set("resampling", {"mode": "fast"})),
    ("grouped-rates-input", "monte-carlo without seed", _set("resampling", {"mode": "monte-carlo", "replicates": 9})),
    ("grouped-rates-input", "exact with a seed", _set("resampling", {"mode": "exact", "seed": 1})),
    ("grouped-rates-input", "rubric may not vary", _set("matching.varied.condition", "outcome_rubric")),
    ("grouped-rates-input", "shared lacks a condition", _drop("matching.shared.budget")),
    ("grouped-rates-input", "shared names the varied one",
     _set("matching.shared.intervention", "none")),
    ("grouped-rates-input", "three per-arm values", _set("matching.varied.per_arm.third", "x")),
]


@pytest.mark.parametrize(("fmt", "case", "mutate"), INVALID, ids=[f"{row[0]}: {row[1]}" for row in INVALID])
def test_reader_and_schema_both_refuse(fmt, case, mutate, suite, tmp_path) -> None:  # noqa: ANN001
    """The format's strict reader raises its error, and the shipped schema reports the document invalid."""
    build, read = FORMATS[fmt]
    document = copy.deepcopy(build())
    mutate(document)
    with pytest.raises(EmberError):
        read(document, suite, tmp_path)
    assert schema_errors(document, fmt, shipped=True), f"the {fmt} schema accepts: {case}"
    assert schema_errors(document, fmt), f"the inlined {fmt} schema accepts: {case}"


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_reader_and_schema_both_accept_the_unchanged_document(fmt, suite, tmp_path) -> None:  # noqa: ANN001
    """The table's starting documents are valid for both, so each row tests only its one change."""
    build, read = FORMATS[fmt]
    document = build()
    read(document, suite, tmp_path)
    assert schema_errors(document, fmt, shipped=True) == []
