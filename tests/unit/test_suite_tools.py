"""Suite tooling: validation lists every problem, diffs by hash, shipped suites by id, lookup across suites."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from emberbench.errors import SuiteError
from emberbench.generate.writer import json_file_bytes
from emberbench.sim.scenario import load_scenario
from emberbench.sim.suite import (
    GENERATED_SUITE_ID,
    PUBLIC_SUITE_ID,
    check_suite_manifest,
    load_suite,
    public_suite_path,
    suite_folder,
)
from emberbench.generate.suite_tools import diff_suites, locate_scenario, validate_suite_folder
from tests.unit.suite_mutations import CASES, broken_suite


@pytest.fixture()
def copy(tmp_path: Path) -> Path:
    """A writable copy of the public suite."""
    out = tmp_path / "suite"
    shutil.copytree(public_suite_path(), out)
    return out


def _edit(path: Path, change) -> None:  # noqa: ANN001
    data = json.loads(path.read_text())
    change(data)
    path.write_bytes(json_file_bytes(data))


def test_a_valid_suite_has_no_problem(copy: Path) -> None:
    """The public suite validates, with its hash."""
    report = validate_suite_folder(copy)
    assert report.ok and report.suite is not None and report.suite.hash == load_suite().hash


def test_validate_lists_every_problem_not_just_the_first(copy: Path) -> None:
    """Problems in two scenario files (three in one of them) and in the manifest are all listed."""
    _edit(copy / "scenarios" / "v1-pub-01-single-exit-sparse.json",
          lambda d: d.update(max_steps=0, seed=-1, description=""))
    _edit(copy / "scenarios" / "v1-pub-05-four-exits-crowd.json", lambda d: d["people"][0].update(row=0))
    _edit(copy / "suite.json", lambda d: (d.update(suite_version="1.0"), d["families"][0]["scenarios"].append("nope")))
    (copy / "scenarios" / "stray.json").write_text("{}")
    report = validate_suite_folder(copy)
    text = "\n".join(report.problems)
    assert len(report.problems) == 6, report.problems
    for fragment in ("suite_version must be MAJOR.MINOR.PATCH", "description must be a non-empty string",
                     "max_steps must be an integer", "seed must be an integer", "person 'p001' at (0,",
                     "names unknown scenario 'nope'"):
        assert fragment in text
    assert report.notes == (f"{copy / 'scenarios' / 'stray.json'}: not listed in suite.json (never read)",)


def test_the_loader_stops_at_the_first_problem_validate_reports(copy: Path) -> None:
    """load_suite raises exactly the first problem the collecting validation lists."""
    _edit(copy / "suite.json", lambda d: (d.update(suite_id="Bad Id"), d["scenarios"][2].update(scenario_hash="x")))
    report = validate_suite_folder(copy)
    with pytest.raises(SuiteError) as info:
        load_suite(copy)
    assert str(info.value) == report.problems[0] and len(report.problems) == 2


def test_collecting_mode_survives_broken_shapes(copy: Path) -> None:
    """Wrong types everywhere give problems, never a crash."""
    data = json.loads((copy / "suite.json").read_text())
    data.update(scenarios=[1, {"id": "x"}], families=[{"id": 1, "description": 2, "scenarios": [[1]]}],
                description=3)
    problems, suite = check_suite_manifest(data, copy, "suite.json", collect=True)
    assert suite is None and len(problems) == 6


def test_diff_reports_added_removed_changed_and_families(copy: Path) -> None:
    """Dropping one scenario, editing another and renaming a family shows up exactly."""
    _edit(copy / "scenarios" / "v1-pub-03-bottleneck-door.json", lambda d: d.update(max_steps=161))
    edited = load_scenario(copy / "scenarios" / "v1-pub-03-bottleneck-door.json").content_hash

    def change(d: dict) -> None:
        d["scenarios"] = [e for e in d["scenarios"] if e["id"] != "v1-pub-12-smouldering-two-exits"]
        for e in d["scenarios"]:
            if e["id"] == "v1-pub-03-bottleneck-door":
                e["scenario_hash"] = edited
        for f in d["families"]:
            f["scenarios"] = [s for s in f["scenarios"] if s != "v1-pub-12-smouldering-two-exits"]

    _edit(copy / "suite.json", change)
    a, b = load_suite(), load_suite(copy)
    d = diff_suites(a, b)
    assert d.removed == (("v1-pub-12-smouldering-two-exits", a.scenario("v1-pub-12-smouldering-two-exits").content_hash),)
    assert d.changed == (("v1-pub-03-bottleneck-door", a.scenario("v1-pub-03-bottleneck-door").content_hash, edited),)
    assert d.added == () and d.unchanged == 10 and not d.reordered
    assert set(d.families) == {"multi-exit", "congestion", "deterministic-fire"}
    back = diff_suites(b, a)
    assert back.added == d.removed and back.removed == ()


def test_shipped_suites_are_selected_by_id() -> None:
    """A shipped suite id selects the package's suite; anything else is a path."""
    assert load_suite(PUBLIC_SUITE_ID) is load_suite()
    assert load_suite(GENERATED_SUITE_ID).id == GENERATED_SUITE_ID
    assert suite_folder(GENERATED_SUITE_ID).name == GENERATED_SUITE_ID
    assert suite_folder("some/where/suite.json") == Path("some/where")
    with pytest.raises(SuiteError, match="cannot read suite manifest"):
        load_suite("emberbench-v1-privat")


def test_a_scenario_is_found_in_any_shipped_suite() -> None:
    """Without a suite, every shipped suite is searched; an unknown id names the shipped suites."""
    first = load_suite(GENERATED_SUITE_ID).scenarios[0].id
    assert locate_scenario(first)[0].id == GENERATED_SUITE_ID
    assert locate_scenario("v1-pub-02-fire-at-near-exit")[0].id == PUBLIC_SUITE_ID
    with pytest.raises(SuiteError, match="suite emberbench-v1-public 1.0.0 has no scenario 'nope', nor has any other shipped suite"):
        locate_scenario("nope")


GOLDEN = json.loads((Path(__file__).resolve().parents[1] / "golden" / "suite-error-messages.json").read_text())


@pytest.mark.parametrize("label", sorted(CASES))
def test_suite_loader_messages_are_unchanged_and_first_in_validate(label: str, tmp_path: Path) -> None:
    """load_suite raises the message recorded before the checks became collectable; validate lists it first."""
    folder = broken_suite(public_suite_path(), tmp_path / "s", label)
    with pytest.raises(SuiteError) as info:
        load_suite(folder)
    assert str(info.value).replace(str(folder), "<suite>") == GOLDEN[label]
    assert validate_suite_folder(folder).problems[0] == str(info.value)
