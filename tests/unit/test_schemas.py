"""The shipped JSON Schemas: well formed, in sync with the code, and met by every golden and shipped file."""

from __future__ import annotations

import importlib
import json
import tomllib
from pathlib import Path

import pytest
from jsonschema.validators import Draft202012Validator

import emberbench.io.versions
from emberbench.schemas import (
    BASE_URI,
    detect_format,
    format_schema,
    format_schemas,
    load_schema,
    resolve_pointer,
    schema_const,
    schema_files,
)
from tests.conftest import ROOT
from tests.schema_check import ecma_regex, schema_errors
from tests.schema_writes import WriteCheck

GOLDEN = ROOT / "tests" / "golden"
SUITE = ROOT / "emberbench" / "suites" / "emberbench-v1-public"
EXAMPLE = ROOT / "docs" / "examples" / "task-grouped-rates"

NOT_FORMAT_VERSIONS = {"SUITE_VERSION": "the release number of the public suite, carried as data"}
"""Constants of emberbench/io/versions.py that are not the version of a saved format."""


def _constant(reference: str) -> object:
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


def test_every_schema_is_a_valid_2020_12_schema_named_by_its_file() -> None:
    """Each schema passes the draft 2020-12 meta-schema and its $id is the base URI plus its file name."""
    assert len(schema_files()) >= 12
    for file in schema_files():
        schema = load_schema(file)
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema", file
        assert schema["$id"] == BASE_URI + file, file
        assert schema.get("title") and schema.get("description"), file


def test_each_format_has_one_schema_and_the_expected_formats_exist() -> None:
    """Every saved format of the project is covered, each exactly once."""
    names = [entry.format for entry in format_schemas()]
    assert len(names) == len(set(names))
    assert set(names) >= {
        "scenario", "suite", "manifest", "record", "metrics", "result", "pairing", "statistics-aggregate",
        "statistics-paired", "grouped-rates-input", "grouped-rates-report", "grouped-rates-contract",
        "viewer-data", "report-files",
    }
    with pytest.raises(KeyError, match="no schema for format 'nope'"):
        format_schema("nope")


def test_schema_versions_equal_the_code_constants() -> None:
    """Each version (and format name) a schema pins is the constant the code writes and reads."""
    checked = 0
    for entry in format_schemas():
        assert entry.versions, f"{entry.file} pins no version"
        for pointer, reference in entry.versions:
            assert schema_const(entry.schema(), pointer) == _constant(reference), (entry.file, pointer, reference)
            checked += 1
    assert checked >= 20


def test_every_format_version_constant_has_a_schema() -> None:
    """A new format version constant in emberbench/io/versions.py fails here until a schema pins it."""
    referenced = {ref for entry in format_schemas() for _, ref in entry.versions}
    for name in emberbench.io.versions.__all__:
        if name in NOT_FORMAT_VERSIONS:
            continue
        assert f"emberbench.io.versions:{name}" in referenced, f"no schema pins {name} (add one to emberbench/schemas/)"


def test_schema_const_follows_local_references_and_refuses_unpinned_fields() -> None:
    """The constant lookup walks properties and #-references; a field without a const is an error."""
    assert schema_const(format_schema("record").schema(), "/header/record_version") == "1.0"
    with pytest.raises(KeyError, match="no const"):
        schema_const(format_schema("record").schema(), "/header/seed")


KEY_SETS = [
    ("scenario", "", "emberbench.sim.scenario:SCENARIO_KEYS"),
    ("record", "", "emberbench.records.record:RECORD_KEYS"),
    ("record", "/properties/header", "emberbench.records.record:HEADER_KEYS"),
    ("record", "/properties/outcome", "emberbench.records.record:OUTCOME_KEYS"),
    ("manifest", "", "emberbench.results.manifest:MANIFEST_KEYS"),
    ("result", "", "emberbench.results.header:RESULT_KEYS"),
    ("result", "/properties/episodes/items", "emberbench.results.header:EPISODE_KEYS"),
    ("metrics", "/properties/counts", "emberbench.records.metrics:COUNT_KEYS"),
    ("grouped-rates-input", "", "emberbench.grouped_rates.inputs:_TOP_KEYS"),
    ("run-info", "", "emberbench.evaluation.run_info:INFO_KEYS"),
    ("run-header", "", "emberbench.evaluation.run_info:HEADER_KEYS"),
    ("run-sidecar", "", "emberbench.evaluation.run_sidecar:SIDECAR_KEYS"),
]


@pytest.mark.parametrize(("name", "where", "reference"), KEY_SETS, ids=[f"{k[0]}{k[1]}" for k in KEY_SETS])
def test_required_keys_are_the_readers_keys(name, where, reference) -> None:  # noqa: ANN001
    """Each object a reader requires exactly has the same required keys in the schema, and no others."""
    node = format_schema(name).schema()
    for token in where.split("/")[1:]:
        node = node[token]
    # Keys required only of some versions (a heartbeat in run-info 1.1, not in 1.0) sit in an if/then.
    conditional = {key for branch in node.get("allOf", []) for key in branch.get("then", {}).get("required", [])}
    assert set(node["required"]) | conditional == set(_constant(reference))
    assert set(node["properties"]) == set(node["required"]) | conditional and node["additionalProperties"] is False


def test_metric_names_and_groups_match_the_metric_table() -> None:
    """The metric enum and the metrics object's groups follow emberbench.records.metric_defs."""
    from emberbench.records.metric_defs import METRICS

    assert load_schema("common.schema.json")["$defs"]["metric_name"]["enum"] == [m.name for m in METRICS]
    properties = format_schema("metrics").schema()["properties"]
    for m in METRICS:
        assert m.name in properties[m.group]["properties"], m.source


OLDER_VERSIONS = {"run-info-1.0.json": "run-info-1.0.schema.json", "run-info-1.1.json": "run-info-1.1.schema.json"}
"""Golden samples of a version still read but no longer written, and the frozen schema of that version
(a format's own schema describes the version written)."""


def _golden_and_shipped() -> list[Path]:
    current = [p for p in sorted(GOLDEN.glob("*-1.[0-9].json")) if p.name not in OLDER_VERSIONS]
    files = current + [SUITE / "suite.json"] + sorted((SUITE / "scenarios").glob("*.json"))
    return files + sorted(EXAMPLE.glob("*.json"))


@pytest.mark.parametrize("path", _golden_and_shipped(), ids=lambda p: p.name)
def test_golden_and_shipped_files_validate(path: Path) -> None:
    """Every golden sample, the public suite and the grouped-rates example meet their schemas, as shipped."""
    document = json.loads(path.read_bytes())
    entry = detect_format(document)
    assert entry is not None, f"{path.name}: no schema recognizes it"
    assert schema_errors(document, entry.format, shipped=True) == []
    assert schema_errors(document, entry.format) == []


@pytest.mark.parametrize("name", sorted(OLDER_VERSIONS))
def test_golden_samples_of_older_versions_meet_their_frozen_schemas(name: str) -> None:
    """A sample of a version still read validates against that version's frozen schema, not the current one."""
    from jsonschema import Draft202012Validator

    from tests.schema_check import registry

    document = json.loads((GOLDEN / name).read_bytes())
    frozen = load_schema(OLDER_VERSIONS[name])
    assert list(Draft202012Validator(frozen, registry=registry()).iter_errors(document)) == []
    assert schema_errors(document, detect_format(document).format, shipped=True) != []


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*-future.json")), ids=lambda p: p.name)
def test_future_golden_files_are_refused_by_their_schemas(path: Path) -> None:
    """A sample of a newer format version is recognized, and refused because of its version (the pinned constant)."""
    document = json.loads(path.read_bytes())
    entry = detect_format(document)
    assert entry is not None
    errors = schema_errors(document, entry.format, shipped=True)
    # A schema pins its version with a const, or, when it still reads older ones, lists them in an enum.
    expected = [f"{schema_const(entry.schema(), pointer)!r} was expected" for pointer, _ in entry.versions]
    expected += [f"{pointer.lstrip('/')}: {resolve_pointer(document, pointer)!r} is not one of"
                 for pointer, _ in entry.versions]
    assert errors and all(any(e in error for e in expected) for error in errors), errors


def test_detection_is_unambiguous_and_ignores_other_documents() -> None:
    """Each golden document is recognized as exactly its own format; other JSON is not recognized."""
    expected = {"manifest-1.0.json": "manifest", "metrics-1.0.json": "metrics", "record-1.0.json": "record",
                "result-1.0.json": "result"}
    for name, fmt in expected.items():
        assert detect_format(json.loads((GOLDEN / name).read_bytes())).format == fmt
    for other in ({}, [], {"version": "1.0"}, {"artifact": "aggregate"}, "text"):
        assert detect_format(other) is None


def test_schemas_ship_as_package_data() -> None:
    """pyproject installs the emberbench.schemas package with every *.schema.json file."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "emberbench.schemas" in config["packages"]
    assert config["package-data"]["emberbench.schemas"] == ["*.schema.json"]
    assert set(schema_files()) == {p.name for p in (ROOT / "emberbench" / "schemas").glob("*.schema.json")}


@pytest.mark.parametrize(("pattern", "text", "matches"), [
    ("^[0-9a-f]{2}$", "ab", True),
    ("^[0-9a-f]{2}$", "ab\n", False),
    ("^[$]x$", "$x", True),
    ("a\\$", "a$", True),
    ("(^|/)\\.\\.(/|$)", "a/..", True),
])
def test_patterns_use_the_ecma_meaning_of_dollar(pattern, text, matches) -> None:  # noqa: ANN001
    """'$' outside a class means the end of the string, as JSON Schema prescribes (not before a final newline)."""
    assert bool(ecma_regex(pattern).search(text)) is matches


def test_viewer_pages_and_report_file_lists_validate(suite, tmp_path: Path) -> None:  # noqa: ANN001
    """The data a viewer page embeds (of a record and of a result) and a report's file list meet their schemas."""
    from emberbench.viewer.outputs import REPORT_INDEX, ReportFolder
    from emberbench.viewer.view import view_page
    from tests.schema_writes import EMBEDDED

    for golden, kind in (("record-1.0.json", "record"), ("result-1.0.json", "result")):
        document = json.loads(EMBEDDED.search(view_page(GOLDEN / golden, suite)).group(1))
        assert detect_format(document).format == "viewer-data" and document["source"]["kind"] == kind
        assert schema_errors(document, "viewer-data", shipped=True) == []
    folder = ReportFolder(tmp_path / "report", force=False)
    folder.write("index.html", b"<html></html>")
    folder.write("episodes/e1.html", b"<html></html>")
    folder.finish()
    listing = json.loads((tmp_path / "report" / REPORT_INDEX).read_bytes())
    assert schema_errors(listing, "report-files", shipped=True) == []
    assert schema_errors({**listing, "files": ["../x"]}, "report-files", shipped=True)


def test_write_check_reports_an_invalid_written_document(tmp_path: Path) -> None:
    """The session's write check flags a recognized document that breaks its schema, and passes a valid one."""
    import emberbench.io.atomic
    import emberbench.results.manifest

    original = emberbench.io.atomic.atomic_write_bytes.__wrapped__
    assert emberbench.results.manifest.atomic_write_bytes is emberbench.io.atomic.atomic_write_bytes  # the wrapper is bound
    check = WriteCheck()
    write = check.wrap(original)
    good = (GOLDEN / "manifest-1.0.json").read_bytes()
    write(tmp_path / "good.json", good)
    write(tmp_path / "bad.json", iter([good.replace(b'"seed":0', b'"seed":-1')]))
    write(tmp_path / "other.json", b'{"not": "a format"}')
    write(tmp_path / "page.html", b'<html><script type="application/json" id="emberbench-data">'
                                  b'{"viewer_data_version": "2.0"}</script></html>')
    problems = check.check()
    assert len(problems) == 2 and "bad.json (manifest)" in problems[0] and "-1" in problems[0]
    assert "page.html (viewer-data)" in problems[1]
    assert (tmp_path / "bad.json").read_bytes().startswith(b'{"episodes"')  # written exactly as asked
    assert check.checked == 3


def test_the_validation_example_in_formats_md_runs(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """The Python example of docs/formats.md validates a result with the shipped files, offline."""
    text = (ROOT / "docs" / "formats.md").read_text()
    start = text.index("```python\n", text.index("## JSON Schemas")) + len("```python\n")
    code = text[start:text.index("```", start)]
    (tmp_path / "greedy.json").write_bytes((GOLDEN / "result-1.0.json").read_bytes())
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(code, "formats.md", "exec"), namespace)  # noqa: S102 - the documented example itself
    assert namespace["errors"] == []
    (tmp_path / "greedy.json").write_bytes((GOLDEN / "result-future.json").read_bytes())
    exec(compile(code, "formats.md", "exec"), namespace)  # noqa: S102
    assert namespace["errors"] == ["$.result_version: '1.0' was expected"]
