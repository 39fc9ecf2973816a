"""The public suite: content, pinned hashes, families, and refusal of tampered suites."""

from __future__ import annotations

import json
import shutil

import pytest

from emberbench.errors import SuiteError
from emberbench.sim.suite import load_suite, public_suite_path


def test_public_suite_shape(suite) -> None:  # noqa: ANN001
    """The public suite has at least 10 scenarios, the named ones, and one large map."""
    ids = [s.id for s in suite.scenarios]
    assert suite.id == "emberbench-v1-public" and suite.version == "1.0.0"
    assert len(ids) >= 10
    assert "v1-pub-01-single-exit-sparse" in ids and "v1-pub-10-route-invalidation" in ids
    assert not suite.scenario("v1-pub-10-route-invalidation").deterministic_fire
    large = [s for s in suite.scenarios if s.height >= 64 and s.width >= 64 and s.population >= 300]
    assert large, "the suite needs a 64x64 map with 300 people"
    assert any(len(s.exits) == 1 for s in suite.scenarios)
    assert any(len(s.exits) > 1 for s in suite.scenarios)
    assert any(s.deterministic_fire for s in suite.scenarios)
    assert all(s.description.strip() for s in suite.scenarios)


def test_suite_families_keep_declaration_order_and_may_overlap(suite) -> None:  # noqa: ANN001
    """Families are listed in declaration order and a scenario may be in several."""
    names = [f.id for f in suite.families]
    assert names == [f["id"] for f in suite.manifest["families"]]
    assert max(len(suite.families_of(s.id)) for s in suite.scenarios) >= 2


def test_suite_hash_is_pinned_and_rebuild_is_identical(tmp_path, suite) -> None:  # noqa: ANN001
    """Rebuilding the suite with the build script writes identical bytes."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    out = tmp_path / "rebuilt"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "build_public_suite.py"), str(out)],
                   check=True, capture_output=True)
    shipped = public_suite_path()
    for path in sorted(shipped.rglob("*.json")):
        assert (out / path.relative_to(shipped)).read_bytes() == path.read_bytes(), path.name
    assert load_suite(out).hash == suite.hash


def test_tampered_scenario_file_is_refused(tmp_path) -> None:  # noqa: ANN001
    """Changing a scenario file without updating the suite manifest fails to load."""
    copy = tmp_path / "suite"
    shutil.copytree(public_suite_path(), copy)
    target = copy / "scenarios" / "v1-pub-01-single-exit-sparse.json"
    data = json.loads(target.read_text())
    data["max_steps"] += 1
    target.write_text(json.dumps(data))
    with pytest.raises(SuiteError, match="differs from the pinned"):
        load_suite(copy)


def test_unknown_suite_format_is_refused(tmp_path) -> None:  # noqa: ANN001
    """A suite manifest of a future format version is refused."""
    copy = tmp_path / "suite"
    shutil.copytree(public_suite_path(), copy)
    manifest = json.loads((copy / "suite.json").read_text())
    manifest["suite_format"] = "2.0"
    (copy / "suite.json").write_text(json.dumps(manifest))
    with pytest.raises(SuiteError, match="unsupported suite_format '2.0'"):
        load_suite(copy)


def test_resolve_requires_id_and_hash(suite) -> None:  # noqa: ANN001
    """A scenario is resolved by id and content hash together."""
    s = suite.scenarios[0]
    assert suite.resolve(s.id, s.content_hash) is s
    with pytest.raises(SuiteError, match="has content hash"):
        suite.resolve(s.id, "0" * 64)
    with pytest.raises(SuiteError, match="has no scenario"):
        suite.resolve("nope", s.content_hash)
