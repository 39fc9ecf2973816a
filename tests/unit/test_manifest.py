"""Evaluation manifests: construction rules, builder, hash, check, writer and loader."""

from __future__ import annotations

import copy
import json
import re

import pytest

from emberbench.errors import ManifestError, ManifestTypeError
from emberbench.results.manifest import (EvaluationManifest, ManifestEntry, build_manifest, check_manifest,
                                 load_manifest, manifest_from_dict, write_manifest)

# The public suite under seeds (0, 1, 2). A change to any scenario, the suite
# manifest, a version or the builder's order changes it: that is the point.
PUBLIC_DEV_MANIFEST_HASH = "67c8b1be5db622966303cb709a107d6dca770a6219ea931ecb72e1a4e4aaef16"


def test_public_dev_manifest_hash_is_pinned(suite) -> None:  # noqa: ANN001
    """Our public suite under seeds (0, 1, 2) has this exact manifest hash."""
    assert build_manifest(suite, [0, 1, 2]).hash == PUBLIC_DEV_MANIFEST_HASH


def test_builder_order_suite_outer_seeds_inner(suite) -> None:  # noqa: ANN001
    """Scenarios in suite order, seeds in the given order, indices 0..n-1."""
    m = build_manifest(suite, (5, 2))
    assert [(e.scenario_id, e.seed) for e in m.episodes[:4]] == [
        (suite.scenarios[0].id, 5), (suite.scenarios[0].id, 2), (suite.scenarios[1].id, 5), (suite.scenarios[1].id, 2)]
    assert [e.index for e in m.episodes] == list(range(len(m.episodes)))
    assert build_manifest(suite, [2, 5]).hash != m.hash


@pytest.mark.parametrize("seeds", [{0, 1}, "012", (s for s in (0, 1)), range(3), frozenset({1})])
def test_builder_rejects_unordered_seed_containers(suite, seeds) -> None:  # noqa: ANN001
    """A set, str, generator or other non-list/tuple container is a type error."""
    with pytest.raises(ManifestTypeError) as info:
        build_manifest(suite, seeds)
    assert isinstance(info.value, TypeError)


@pytest.mark.parametrize(("seeds", "message"), [
    ([], "seeds must not be empty"),
    ([1, 2, 1], "seed 1 is given twice"),
    ([-1], "seed -1 is not an integer"),
    ([2**64], "is not an integer in [0, 2**64 - 1]"),
    ([True], "seed True is not an integer"),
    ([1.0], "seed 1.0 is not an integer"),
])
def test_builder_rejects_bad_seeds(suite, seeds, message) -> None:  # noqa: ANN001
    """Empty, duplicate, out-of-range, boolean and float seeds are errors."""
    with pytest.raises(ManifestError) as info:
        build_manifest(suite, seeds)
    assert message in str(info.value)


def _base(suite) -> dict:  # noqa: ANN001
    return build_manifest(suite, [0, 1]).to_dict()


def _set(d: dict, path: list, value: object) -> dict:
    d = copy.deepcopy(d)
    t = d
    for k in path[:-1]:
        t = t[k]
    if value is KeyError:
        del t[path[-1]]
    else:
        t[path[-1]] = value
    return d


PARSE_CASES = [
    (["manifest_version"], "2.0", "unsupported manifest_version '2.0'"),
    (["suite_id"], "Bad Suite", "suite_id 'Bad Suite' is not well formed"),
    (["suite_version"], "1.0", "suite_version '1.0' is not MAJOR.MINOR.PATCH"),
    (["suite_hash"], "abc", "suite_hash is not a lowercase SHA-256 hex digest"),
    (["episodes"], [], "episodes must be a non-empty list"),
    (["episodes", 1, "index"], 5, "episodes[1] has index 5; the index must equal the position"),
    (["episodes", 0, "seed"], True, "seed True is not an integer"),
    (["episodes", 0, "seed"], 2.0, "seed 2.0 is not an integer"),
    (["episodes", 0, "seed"], 2**64, "is not an integer in [0, 2**64 - 1]"),
    (["episodes", 1, "seed"], 0, "seed 0 occurs twice for scenario"),
    (["episodes", 1, "scenario_hash"], "f" * 64, "is pinned to two different hashes"),
    (["extra"], 1, "unknown key(s) extra"),
    (["metrics_version"], KeyError, "missing key(s) metrics_version"),
    (["episodes", 0, "note"], "x", "episodes[0]: unknown key(s) note"),
    (["episodes", 0, "seed"], KeyError, "episodes[0]: missing key(s) seed"),
]


@pytest.mark.parametrize(("path", "value", "message"), PARSE_CASES, ids=[c[2][:35] for c in PARSE_CASES])
def test_parsing_enforces_every_rule(suite, path, value, message) -> None:  # noqa: ANN001
    """Each manifest rule has its own clear error when parsing."""
    with pytest.raises(ManifestError) as info:
        manifest_from_dict(_set(_base(suite), path, value))
    assert message in str(info.value)


def test_construction_enforces_rules_too(suite) -> None:  # noqa: ANN001
    """The dataclass validates on construction, not only when parsed."""
    m = build_manifest(suite, [0])
    with pytest.raises(ManifestError, match="index must equal the position"):
        EvaluationManifest(m.suite_id, m.suite_version, m.suite_hash,
                           (ManifestEntry(1, "x", "a" * 64, 0),))


def test_any_change_changes_the_hash(suite) -> None:  # noqa: ANN001
    """Changing a seed, a scenario hash, a version or the order changes the hash."""
    base = _base(suite)
    h = manifest_from_dict(base).hash
    swapped = copy.deepcopy(base)
    swapped["episodes"][0]["seed"], swapped["episodes"][1]["seed"] = 1, 0
    assert manifest_from_dict(swapped).hash != h
    assert manifest_from_dict(_set(base, ["episodes", 0, "seed"], 7)).hash != h
    assert manifest_from_dict(_set(base, ["observation_version"], "1.1")).hash != h


def test_check_against_suite_and_running_code(suite) -> None:  # noqa: ANN001
    """The manifest check requires this suite, the running versions and matching scenario hashes."""
    base = _base(suite)
    check_manifest(manifest_from_dict(base), suite)
    for path, value, message in [
        (["suite_hash"], "0" * 64, "manifest suite_hash is"),
        (["simulator_version"], "0.1.0", "manifest simulator_version is '0.1.0'"),
        (["suite_version"], "1.0.1", "manifest suite_version is '1.0.1'"),
    ]:
        with pytest.raises(ManifestError, match=message):
            check_manifest(manifest_from_dict(_set(base, path, value)), suite)
    bad = copy.deepcopy(base)
    for e in bad["episodes"]:
        if e["scenario_id"] == suite.scenarios[0].id:
            e["scenario_hash"] = "e" * 64
    with pytest.raises(ManifestError, match="has content hash"):
        check_manifest(manifest_from_dict(bad), suite)


def test_write_and_load_round_trip(tmp_path, suite) -> None:  # noqa: ANN001
    """The writer produces canonical JSON; the loader checks and returns an equal manifest."""
    m = build_manifest(suite, [0, 1, 2])
    path = tmp_path / "m.json"
    write_manifest(m, path)
    assert path.read_bytes() == m.canonical_bytes() + b"\n"
    assert load_manifest(path, suite) == m
    data = json.loads(path.read_text())
    data["manifest_version"] = "9.9"
    path.write_text(json.dumps(data))
    with pytest.raises(ManifestError, match="unsupported manifest_version '9.9'"):
        load_manifest(path)


@pytest.mark.parametrize(("path", "value", "message"), PARSE_CASES, ids=[c[2][:35] for c in PARSE_CASES])
def test_the_file_reader_gives_the_same_errors(tmp_path, suite, path, value, message) -> None:  # noqa: ANN001
    """The file reader, which parses episode by episode, refuses every rule with the same message, naming the file."""
    target = tmp_path / "m.json"
    target.write_text(json.dumps(_set(_base(suite), path, value), indent=1))
    with pytest.raises(ManifestError) as info:
        load_manifest(target)
    if value == 2**64:  # refused earlier, by the input policy's number range
        message = "integer 18446744073709551616 is out of range"
    assert message in str(info.value) and str(info.value).startswith(f"{target}: ")


@pytest.mark.parametrize("dump", [
    lambda d: json.dumps(d),
    lambda d: json.dumps(d, indent=4),
    lambda d: json.dumps(dict(reversed(list(d.items()))), separators=(" , ", " : ")),
    lambda d: "\n\t " + json.dumps(d, sort_keys=True) + " \r\n",
])
def test_the_file_reader_accepts_any_layout(tmp_path, suite, dump) -> None:  # noqa: ANN001
    """Whitespace and key order do not matter to the reader; the manifest (and its hash) is the same."""
    m = build_manifest(suite, [3, 1, 2])
    target = tmp_path / "m.json"
    target.write_text(dump(m.to_dict()))
    assert load_manifest(target, suite) == m and load_manifest(target).hash == m.hash


@pytest.mark.parametrize(("text", "message"), [
    ('{"episodes": 5}', "episodes must be a list"),
    ('{"episodes": [1]}', "episodes[0] must be an object"),
    ('{"suite_id": "a", "suite_id": "b"}', "duplicate key 'suite_id'"),
    ('{"episodes": [] "x": 1}', "expected ',' or '}'"),
    ('{"episodes": []} []', "extra data"),
    ('{1: 2}', "not valid JSON"),
    ('{"manifest_version": "1.0", ]}', "not valid JSON"),
])
def test_the_file_reader_refuses_malformed_structure(tmp_path, text: str, message: str) -> None:
    """A wrong type, a repeated key or broken JSON around the episodes is one ManifestError naming the file."""
    target = tmp_path / "m.json"
    target.write_text(text)
    with pytest.raises(ManifestError, match=re.escape(message)):
        load_manifest(target)


def test_a_wrong_key_is_refused_before_the_rest_is_parsed(tmp_path) -> None:  # noqa: ANN001
    """Issue 12 (defect 4): a file that is not a manifest is refused at its first wrong key, so the (large,
    here 3 million values) remainder is never parsed into objects."""
    target = tmp_path / "m.json"
    target.write_bytes(b'{"x": [' + b'"ab",' * 3_000_000 + b'"ab"], "episodes": []}')
    with pytest.raises(ManifestError, match="unknown key\\(s\\) x"):
        load_manifest(target)


def test_streamed_canonical_bytes_equal_the_encoder_across_chunks(suite) -> None:  # noqa: ANN001
    """The streamed canonical form (used for the hash and the file) equals canonical_bytes(to_dict()),
    for a manifest longer than one chunk of entries."""
    from emberbench.io.canonical import canonical_bytes

    m = build_manifest(suite, list(range(400)))  # 4800 entries: more than one chunk of 4096
    assert b"".join(m.canonical_chunks()) == canonical_bytes(m.to_dict()) == m.canonical_bytes()
