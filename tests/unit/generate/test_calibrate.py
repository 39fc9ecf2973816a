"""Calibration: the tier rule, a golden calibration file, any mapper gives the same bytes, strict reading."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from emberbench.io.canonical import canonical_bytes
from emberbench.errors import CalibrationError, GenerationError
from emberbench.generate import TierFilter, calibrate_suite, family_rates, generate_suite, load_calibration
from emberbench.generate import generate_scenario, load_recipe, write_calibration, write_suite
from emberbench.generate.calibrate import POLICIES, calibrate_scenario, tier_of
from emberbench.sim.suite import load_suite
from tests.conftest import ROOT

GOLDEN = ROOT / "tests" / "golden" / "calibration-1.0.json"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory):
    """A three-scenario dev suite on disk, loaded."""
    out = tmp_path_factory.mktemp("tiny") / "suite"
    write_suite(generate_suite(load_recipe("dev"), 3, 5, suite_id="tiny"), out)
    return load_suite(out)


@pytest.fixture(scope="module")
def calibration(tiny):  # noqa: ANN001
    """The tiny suite calibrated in process under seeds 0 and 1."""
    return calibrate_suite(tiny, [0, 1])


@pytest.mark.parametrize(("lost", "people", "tier"), [
    (0, 90, "easy"), (1, 20, "easy"), (2, 39, "medium"), (1, 5, "medium"), (2, 9, "hard"),
    (1, 2, "hard"), (6, 11, "extreme"), (3, 3, "extreme"),
])
def test_tier_rule(lost: int, people: int, tier: str) -> None:
    """Tiers by the lost fraction: <= 1/20 easy, <= 1/5 medium, <= 1/2 hard, above extreme (bounds inclusive)."""
    assert tier_of(lost, people) == tier


def test_calibration_matches_the_golden_file(tiny, calibration, tmp_path: Path) -> None:  # noqa: ANN001
    """Calibrating the tiny suite under seeds 0 and 1 writes the golden bytes."""
    out = tmp_path / "cal.json"
    write_calibration(calibration, out)
    assert out.read_bytes() == GOLDEN.read_bytes()
    assert load_calibration(out, tiny).tiers() == {e["id"]: e["tier"] for e in json.loads(GOLDEN.read_text())["scenarios"]}


def test_any_mapper_gives_the_same_calibration(tiny) -> None:  # noqa: ANN001
    """A mapper that runs jobs in reverse order, one at a time, gives the same file as in process."""
    def reverse(function, jobs):  # noqa: ANN001, ANN202
        return list(reversed([function(job) for job in reversed(list(jobs))]))

    assert canonical_bytes(calibrate_suite(tiny, [0, 1], mapper=reverse).to_dict()) == GOLDEN.read_bytes()[:-1]


def test_family_rates_add_up(tiny, calibration) -> None:  # noqa: ANN001
    """The overall casualty rate is the suite's casualties over people x seeds, per baseline."""
    cal = calibration
    overall = family_rates(cal, tiny)[0]
    people = sum(s.population * 2 for s in cal.scenarios)
    assert overall[0] == "overall" and overall[1] == 3
    for policy in ("stay", "greedy", "fire-aware"):
        assert overall[2][policy] == Fraction(sum(s.total(policy, "casualties") for s in cal.scenarios), people)


def _tampered(tmp_path: Path, edit) -> Path:  # noqa: ANN001
    data = json.loads(GOLDEN.read_text())
    edit(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d.update(calibration_format="2.0"), "unsupported calibration_format '2.0'"),
    (lambda d: d["scenarios"][0].update(tier="extreme" if d["scenarios"][0]["tier"] != "extreme" else "easy"),
     "not what its counts give"),
    (lambda d: d["scenarios"][0]["results"]["greedy"].update(evacuated=-1), "must hold the counts"),
    (lambda d: d["scenarios"][0]["results"]["stay"].update(casualties=10**6), "do not add up"),
    (lambda d: d.update(simulator_version="9.9.9"), "this version calibrates with '0.2.0'"),
    (lambda d: d.update(extra=1), "keys must be exactly"),
], ids=["future", "tier", "negative", "sum", "simulator", "extra"])
def test_bad_calibration_files_are_refused(tmp_path: Path, edit, message: str) -> None:  # noqa: ANN001
    """A future version, a tier its counts do not give, or broken counts are refused with one clear error."""
    with pytest.raises(CalibrationError, match=message):
        load_calibration(_tampered(tmp_path, edit))


def test_calibration_of_another_suite_is_refused(tiny) -> None:  # noqa: ANN001
    """Reading a calibration against a suite it does not calibrate is an error."""
    with pytest.raises(CalibrationError, match="it calibrates suite"):
        load_calibration(GOLDEN, load_suite())


def test_tier_filter_keeps_only_wanted_tiers_and_their_ids() -> None:
    """With a tier filter, every kept scenario is in range and is the unfiltered scenario of its index."""
    recipe = load_recipe("dev")
    kept = generate_suite(recipe, 2, 4, tiers=TierFilter("hard", "extreme", (0,)))
    for scenario in kept.scenarios:
        index = int(scenario.id.split("-")[1])
        assert generate_scenario(recipe, 4, index).scenario.content_hash == scenario.content_hash
        assert calibrate_scenario((scenario, (0,))).tier in ("hard", "extreme")
    assert kept.generation["tiers"] == {"min_tier": "hard", "max_tier": "extreme", "calibration_seeds": [0],
                                        "tier_rule": "1.0", "simulator_version": "0.2.0"}
    assert "keeping tiers hard to extreme" in kept.manifest["description"]


def test_tiers_no_candidate_reaches_are_one_clear_error() -> None:
    """When no candidate is in the wanted tiers, generation gives up after 50 per scenario, in one line."""
    calls = []

    def all_easy(function, jobs):  # noqa: ANN001, ANN202 - a mapper that calibrates everything as easy
        jobs = list(jobs)
        assert [seed for _, seed in jobs] == [0] * len(jobs)
        calls.append(len(jobs))
        return [tuple((1, 0, 0, 1) for _ in POLICIES) for _ in jobs]

    with pytest.raises(GenerationError, match=r"only 0 of the first 100 scenarios of recipe 'dev' are in tiers "
                                              r"medium to extreme; widen the tiers or change the recipe"):
        generate_suite(load_recipe("dev"), 2, 0, tiers=TierFilter("medium", "extreme", (0,)), mapper=all_easy)
    assert sum(calls) == 100


def test_future_calibration_golden_is_refused() -> None:
    """The future-version calibration sample is refused by its reader."""
    with pytest.raises(CalibrationError, match="unsupported calibration_format '2.0'"):
        load_calibration(ROOT / "tests" / "golden" / "calibration-future.json")
