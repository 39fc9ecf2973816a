"""The known-suites list: where a suite given once by its folder is found again (issue 27, defect 4)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from emberbench.errors import SuiteError
from emberbench.schemas.kinds import kind_of
from emberbench.sim.known_suites import (
    KnownSuite,
    known_suites_bytes,
    read_known_suites,
    remember_suite,
    suite_for,
    suite_with_scenario,
)
from emberbench.sim.suite import load_suite, public_suite_path
from tests.conftest import ROOT

GOLDEN = ROOT / "tests" / "golden"


@pytest.fixture()
def copy(tmp_path: Path):  # noqa: ANN201
    """A copy of the public suite under another id (so it is not shipped), and its loaded suite."""
    folder = tmp_path / "mine"
    shutil.copytree(public_suite_path(), folder)
    text = (folder / "suite.json").read_text().replace('"emberbench-v1-public"', '"my-suite"')
    (folder / "suite.json").write_text(text)
    return folder, load_suite(folder)


def test_the_golden_list_is_read_and_written_byte_for_byte() -> None:
    """The 1.0 sample reads into its entries, which write the same bytes; a 2.0 sample is refused by version."""
    entries = read_known_suites(GOLDEN / "known-suites-1.0.json")
    assert entries == (KnownSuite("generated-dev", "1.0.0", "4c6f367abce3fc0dd4ac8508e3baae4cf9f51d6021727670f4dd881be64071cb",
                                  "/home/me/eval/gen"),)
    assert known_suites_bytes(entries) == (GOLDEN / "known-suites-1.0.json").read_bytes()
    with pytest.raises(SuiteError, match="unsupported known_suites_version '2.0'"):
        read_known_suites(GOLDEN / "known-suites-future.json")


@pytest.mark.parametrize(("text", "message"), [
    ('{"known_suites_version":"1.0","suites":[],"x":1}', "keys must be exactly"),
    ('{"known_suites_version":"1.0","suites":[{"folder":"rel","suite_hash":"' + "0" * 64
     + '","suite_id":"a","suite_version":"1.0.0"}]}', "absolute path"),
    ('{"known_suites_version":"1.0","suites":[{"folder":"/a","suite_hash":"x","suite_id":"a","suite_version":"1.0.0"}]}',
     "suite_hash"),
    ('{"known_suites_version":"1.0","suites":{}}', "must be a list"),
    ('[]', "must be a JSON object"),
    ('{"known_suites_version":"1.0","suites":[], "known_suites_version":"1.0"}', "duplicate"),
])
def test_a_malformed_list_is_refused_naming_the_file(tmp_path: Path, text: str, message: str) -> None:
    """The list is read strictly: exact keys, absolute folders, hashes, a list, strict JSON; one error naming it."""
    path = tmp_path / "suites.json"
    path.write_text(text)
    with pytest.raises(SuiteError, match=message) as info:
        read_known_suites(path)
    assert str(path) in str(info.value)


def test_another_kind_of_file_is_named(tmp_path: Path) -> None:
    """A manifest where the list should be is named as a manifest (the one kind-detection of every reader)."""
    path = tmp_path / "suites.json"
    shutil.copy(GOLDEN / "manifest-1.0.json", path)
    with pytest.raises(SuiteError, match="is an evaluation manifest, not a known-suites list"):
        read_known_suites(path)
    assert kind_of(path.read_bytes()) == "manifest"


def test_remember_then_find_by_hash(tmp_path: Path, copy) -> None:  # noqa: ANN001
    """A folder given once is found by its suite hash; the same folder again changes nothing; a shipped suite is
    never listed; the list is canonical, sorted and ends with a newline."""
    folder, suite = copy
    known = tmp_path / ".emberbench" / "suites.json"
    assert remember_suite(known, suite.id, suite.version, suite.hash, folder)
    assert not remember_suite(known, suite.id, suite.version, suite.hash, folder / "suite.json")
    assert not remember_suite(known, "emberbench-v1-public", "1.0.0", "0" * 64, "emberbench-v1-public")
    assert [e.folder for e in read_known_suites(known)] == [str(folder.absolute())]
    assert known.read_bytes() == known_suites_bytes(read_known_suites(known))
    assert suite_for("my-suite", suite.hash, known=known).hash == suite.hash
    assert suite_with_scenario("v1-pub-01-single-exit-sparse", known=known).id == "emberbench-v1-public"


def test_what_is_not_known_or_has_changed_is_refused(tmp_path: Path, copy) -> None:  # noqa: ANN001
    """An unknown suite says to give its folder; a remembered folder that now holds another suite says so."""
    folder, suite = copy
    known = tmp_path / "suites.json"
    with pytest.raises(SuiteError, match="not shipped with EMBERBench and has not been given here before; give "
                                         "the suite's folder with --suite FOLDER"):
        suite_for("my-suite", suite.hash, known=known, where="r.json")
    remember_suite(known, suite.id, suite.version, suite.hash, folder)
    (folder / "suite.json").write_text((folder / "suite.json").read_text().replace('"1.0.0"', '"1.0.1"'))
    with pytest.raises(SuiteError, match="now holds suite my-suite 1.0.1 of another hash"):
        suite_for("my-suite", suite.hash, known=known, where="r.json")
    assert suite_for("my-suite", suite.hash, given="emberbench-v1-public").id == "emberbench-v1-public"
    assert suite_for(None).id == suite_for("emberbench-v1-public").id == "emberbench-v1-public"
