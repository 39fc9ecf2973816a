"""Result artifacts: layout, streaming assembly, and every loader check broken once."""

from __future__ import annotations

import copy
import json

import pytest

from emberbench.io.canonical import canonical_bytes, sha256_hex
from emberbench.errors import EvaluationError, ResultError
from emberbench.results.manifest import EvaluationManifest, ManifestEntry, build_manifest
from emberbench.results.artifact import load_result
from emberbench.evaluation.runner import run_evaluation

SMALL = ["v1-pub-01-single-exit-sparse", "v1-pub-12-smouldering-two-exits"]


@pytest.fixture(scope="module")
def artifact(tmp_path_factory, suite):  # noqa: ANN001
    """A complete greedy artifact on a small hand-built manifest (bytes and parsed object)."""
    full = build_manifest(suite, [0, 1])
    chosen = [e for e in full.episodes if e.scenario_id in SMALL]
    entries = tuple(ManifestEntry(i, e.scenario_id, e.scenario_hash, e.seed) for i, e in enumerate(chosen))
    manifest = EvaluationManifest(full.suite_id, full.suite_version, full.suite_hash, entries)
    path = tmp_path_factory.mktemp("res") / "greedy.json"
    run_evaluation(manifest, suite, "greedy", "greedy-v1", path)
    raw = path.read_bytes()
    return raw, json.loads(raw)


def test_artifact_is_canonical_json_with_newline(artifact, suite, tmp_path) -> None:  # noqa: ANN001
    """The saved bytes are the canonical JSON of the whole object plus a newline; digest is their SHA-256."""
    raw, data = artifact
    assert raw == canonical_bytes(data) + b"\n"
    path = tmp_path / "a.json"
    path.write_bytes(raw)
    result = load_result(path, suite)
    assert result.digest == sha256_hex(raw)
    assert canonical_bytes(result.to_dict()) + b"\n" == raw
    assert set(data) == {"result_version", "model_id", "evaluation_manifest_hash", "suite_id", "suite_version",
                         "suite_hash", "simulator_version", "observation_version", "metrics_version", "manifest",
                         "episodes"}


def _mut(data: dict, fn) -> bytes:  # noqa: ANN001
    d = copy.deepcopy(data)
    fn(d)
    return canonical_bytes(d) + b"\n"


def _swap_first_two(d: dict) -> None:
    d["episodes"][0], d["episodes"][1] = d["episodes"][1], d["episodes"][0]


def _retag_record(d: dict) -> None:
    d["episodes"][0]["record"]["header"]["seed"] = 99


def _recompute_digest_after(fn):  # noqa: ANN001, ANN202
    def go(d: dict) -> None:
        fn(d)
        d["episodes"][0]["record_digest"] = sha256_hex(canonical_bytes(d["episodes"][0]["record"]))
    return go


def _change_action(d: dict) -> None:
    rec = d["episodes"][0]["record"]
    line = rec["actions"][0]
    i = next(k for k, ch in enumerate(line) if ch in "NESW")
    rec["actions"][0] = line[:i] + ("S" if line[i] != "S" else "N") + line[i + 1:]


CORRUPTIONS = [
    ("extra top-level key", lambda d: d.update(note=1), "unknown top-level key 'note'"),
    ("missing top-level key", lambda d: d.pop("suite_id"), "missing ['suite_id']"),
    ("future result version", lambda d: d.update(result_version="2.0"), "unsupported result_version '2.0'"),
    ("bad model id", lambda d: d.update(model_id=" x"), "leading or trailing whitespace"),
    ("manifest hash", lambda d: d.update(evaluation_manifest_hash="0" * 64), "embedded manifest hashes to"),
    ("header differs", lambda d: d.update(metrics_version="1.1"), "header metrics_version '1.1' differs"),
    ("embedded manifest invalid", lambda d: d["manifest"].update(manifest_version="7"),
     "unsupported manifest_version '7'"),
    ("manifest vs suite", lambda d: (d["manifest"].update(suite_version="1.0.9"), d.update(
        suite_version="1.0.9", evaluation_manifest_hash=sha256_hex(canonical_bytes(d["manifest"])))),
     "manifest suite_version is '1.0.9'"),
    ("episode keys", lambda d: d["episodes"][0].pop("metrics"), "must have exactly the keys"),
    ("index not in manifest", lambda d: d["episodes"][0].update(index=99), "index 99 is not in the manifest"),
    ("order", _swap_first_two, "out of manifest order or repeated"),
    ("duplicate", lambda d: d["episodes"].insert(1, copy.deepcopy(d["episodes"][0])), "out of manifest order or repeated"),
    ("entry seed", lambda d: d["episodes"][0].update(seed=5), "seed 5 differs from manifest entry 0"),
    ("record header", _recompute_digest_after(_retag_record), "record header seed differs from manifest entry 0"),
    ("record digest", lambda d: d["episodes"][0].update(record_digest="a" * 64), "record does not match record_digest"),
    ("authentication", _recompute_digest_after(_change_action), "authentication failed"),
    ("stored metrics", lambda d: d["episodes"][0]["metrics"]["counts"].update(steps=1),
     "stored metrics differ from the metrics recomputed"),
]


@pytest.mark.parametrize(("name", "fn", "message"), CORRUPTIONS, ids=[c[0] for c in CORRUPTIONS])
def test_corrupted_artifacts_are_rejected(artifact, suite, tmp_path, name, fn, message) -> None:  # noqa: ANN001
    """Each check of the loader, broken once, is rejected with its own message."""
    _, data = artifact
    path = tmp_path / "bad.json"
    path.write_bytes(_mut(data, fn))
    with pytest.raises(ResultError) as info:
        load_result(path, suite)
    assert isinstance(info.value, EvaluationError)
    assert message in str(info.value)


def test_non_canonical_text_is_rejected(artifact, suite, tmp_path) -> None:  # noqa: ANN001
    """Whitespace or key order other than canonical fails the re-serialization check."""
    raw, data = artifact
    path = tmp_path / "pretty.json"
    path.write_text(json.dumps(data, indent=1, sort_keys=True))
    with pytest.raises(ResultError, match="not in canonical form"):
        load_result(path, suite)
    path.write_bytes(raw.rstrip(b"\n"))
    with pytest.raises(ResultError, match="not in canonical form"):
        load_result(path, suite)


def test_not_json_is_one_clear_error(suite, tmp_path) -> None:  # noqa: ANN001
    """Garbage and missing files raise ResultError naming the path."""
    path = tmp_path / "x.json"
    path.write_text("{nope")
    with pytest.raises(ResultError, match="x.json: not valid JSON"):
        load_result(path, suite)
    with pytest.raises(ResultError, match="cannot read result artifact"):
        load_result(tmp_path / "missing.json", suite)
