"""Building a grouped-rates input from two models' results, and the grouped-rates command."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
import typer
from typer.testing import CliRunner

from emberbench.cli import grouped_rates_cmd
from emberbench.errors import GroupedRatesError
from emberbench.grouped_rates import build_report, input_from_results, parse_input, render
from tests.unit.test_grouped_rates_support import EXAMPLE, frac

MANIFEST = [(0, "office", 1), (1, "office", 2), (2, "school", 1), (3, "school", 2), (4, "mall", 1)]


def _c(population: int, evacuated: int, casualties: int, stranded: int) -> dict[str, int]:
    return {"population": population, "evacuated": evacuated, "casualties": casualties, "stranded": stranded}


COUNTS_A = {0: _c(5, 5, 0, 0), 1: _c(5, 4, 1, 0), 2: _c(3, 2, 0, 1), 3: _c(3, 3, 0, 0), 4: _c(4, 4, 0, 0)}
COUNTS_B = {0: _c(5, 3, 2, 0), 1: _c(5, 5, 0, 0), 2: _c(3, 1, 1, 1), 4: _c(4, 2, 0, 2)}


def _labels(document: dict, arm: str) -> list[str]:
    return [e["label"] for e in document["episodes"] if e["arm"] == arm]


@pytest.mark.parametrize(
    ("rule", "labels_a", "labels_b"),
    [
        ("casualty", ["success", "failure", "success", "success", "success"], ["failure", "success", "failure", "unresolved", "success"]),
        ("not-evacuated", ["success", "failure", "failure", "success", "success"], ["failure", "success", "failure", "unresolved", "failure"]),
        ("stranded", ["success", "success", "failure", "success", "success"], ["success", "success", "failure", "unresolved", "failure"]),
    ],
)
def test_failure_rules_label_each_episode_and_missing_results_are_unresolved(rule, labels_a, labels_b) -> None:
    """Each rule applies to the counts; manifest index 3, absent from model b, is unresolved."""
    document = input_from_results(MANIFEST, "model-a", "model-b", COUNTS_A, COUNTS_B, rule)
    assert _labels(document, "model-a") == labels_a
    assert _labels(document, "model-b") == labels_b


def test_tasks_are_scenarios_arms_are_models_and_ids_name_scenario_seed_and_arm() -> None:
    """Tasks keep manifest order; episode ids read '<scenario>/seed-<seed>/<model>'."""
    document = input_from_results(MANIFEST, "model-a", "model-b", COUNTS_A, COUNTS_B, "casualty")
    parsed = parse_input(document)
    assert parsed.tasks == ("office", "school", "mall")
    assert parsed.arms == ("model-a", "model-b")
    assert parsed.episodes[0].id == "office/seed-1/model-a"
    assert parsed.episodes[1].id == "office/seed-1/model-b"
    assert parsed.varied_condition == "agent"
    assert dict(parsed.varied) == {"model-a": "model-a", "model-b": "model-b"}
    assert "failure rule 'casualty'" in dict(parsed.shared)["outcome_rubric"]
    assert parsed.resampling.mode == "exact"


def test_built_input_yields_a_report_with_the_expected_contrast() -> None:
    """casualty: a fails 1/5, b fails 2/4 resolved; the pooled contrast is 1/5 - 1/2 = -3/10."""
    document = input_from_results(MANIFEST, "model-a", "model-b", COUNTS_A, COUNTS_B, "casualty")
    report = build_report(render(document))
    pooled = report["estimates"]["episode_weighted"]
    assert frac(pooled["contrast"]) == Fraction(1, 5) - Fraction(2, 4)
    assert report["counts"]["totals"]["model-b"]["unresolved"] == 1


def test_default_resampling_moves_to_multisets_and_then_asks_for_monte_carlo() -> None:
    """7 scenarios use exact-multiset; 11 need an explicit monte-carlo choice; an explicit one is kept."""
    many = [(i, f"s{i}", 1) for i in range(7)]
    counts = {i: _c(1, 1, 0, 0) for i in range(7)}
    assert input_from_results(many, "a", "b", counts, counts, "casualty")["resampling"] == {"mode": "exact-multiset"}
    too_many = [(i, f"s{i}", 1) for i in range(11)]
    with pytest.raises(GroupedRatesError, match="choose monte-carlo"):
        input_from_results(too_many, "a", "b", {}, {}, "casualty")
    spec = {"mode": "monte-carlo", "seed": 3, "replicates": 10}
    assert input_from_results(too_many, "a", "b", {}, {}, "casualty", spec)["resampling"] == spec


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"failure": "fire"}, "unknown failure rule 'fire'"),
        ({"model_b": "model-a"}, "same model 'model-a'"),
        ({"episodes": MANIFEST + [(0, "mall", 9)]}, "manifest index 0 appears twice"),
        ({"episodes": MANIFEST + [(9, "mall", 1)]}, "repeats scenario 'mall' with seed 1"),
        ({"counts_a": {**COUNTS_A, 7: _c(1, 1, 0, 0)}}, "hold index 7 not in the manifest"),
        ({"counts_a": {**COUNTS_A, 0: {"population": 1}}}, "outcome count 'evacuated'"),
        ({"counts_a": {**COUNTS_A, 0: _c(1, -1, 0, 0)}}, "non-negative integer"),
    ],
)
def test_inconsistent_result_data_is_refused(kwargs: dict, message: str) -> None:
    """Unknown rules, equal models, repeated manifest entries and foreign or malformed counts are refused."""
    args = {
        "episodes": MANIFEST,
        "model_a": "model-a",
        "model_b": "model-b",
        "counts_a": COUNTS_A,
        "counts_b": COUNTS_B,
        "failure": "casualty",
    }
    args.update(kwargs)
    with pytest.raises(GroupedRatesError, match=message):
        input_from_results(**args)


@pytest.fixture
def app() -> typer.Typer:
    """A Typer app holding only the grouped-rates command."""
    application = typer.Typer()

    @application.callback()
    def root() -> None:
        """Test root."""

    grouped_rates_cmd.register(application)
    return application


def test_command_runs_the_reader_and_matches_the_committed_report(app, tmp_path) -> None:
    """`grouped-rates --input --expect --out` exits 0 and writes the committed bytes."""
    out = tmp_path / "r.json"
    result = CliRunner().invoke(
        app, ["grouped-rates", "--input", str(EXAMPLE / "input.json"), "--expect", str(EXAMPLE / "report.json"), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "matches --expect" in result.output
    assert out.read_bytes() == (EXAMPLE / "report.json").read_bytes()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give exactly one of --input or --from-results"),
        (["--input", "x.json", "--failure", "casualty"], "need --from-results"),
        (["--from-results", "a.json", "b.json"], "--from-results needs --failure"),
        (["--input", "/nonexistent/in.json"], "No such file or directory"),
    ],
)
def test_command_usage_errors_are_one_line_and_exit_1(app, args: list[str], message: str) -> None:
    """Wrong option combinations and missing files end with exit 1 and one 'error:' line."""
    result = CliRunner().invoke(app, ["grouped-rates", *args])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0]


def test_command_reports_a_mismatch_as_one_line(app, tmp_path) -> None:
    """A differing --expect file exits 1 naming the first difference."""
    expected = json.loads((EXAMPLE / "report.json").read_text())
    expected["task_clusters"] = 5
    altered = tmp_path / "e.json"
    altered.write_bytes(render(expected))
    result = CliRunner().invoke(
        app, ["grouped-rates", "--input", str(EXAMPLE / "input.json"), "--expect", str(altered), "--out", str(tmp_path / "o.json")]
    )
    assert result.exit_code == 1
    assert "differs from --expect at report.task_clusters: expected 5, got 4" in result.output


@pytest.fixture(scope="module")
def two_results(tmp_path_factory, suite):  # noqa: ANN001
    """Real greedy and stay artifacts on a one-seed manifest of the public suite."""
    from emberbench.results.manifest import build_manifest
    from emberbench.evaluation.runner import run_evaluation

    folder = tmp_path_factory.mktemp("gr")
    manifest = build_manifest(suite, [0])
    for name in ("greedy", "stay"):
        run_evaluation(manifest, suite, name, name, folder / f"{name}.json")
    return folder / "greedy.json", folder / "stay.json"


def test_command_from_results_builds_saves_and_evaluates_the_input(app, tmp_path, suite, two_results) -> None:  # noqa: ANN001
    """--from-results loads both real artifacts, saves the input it built and writes that input's report."""
    from emberbench.results.artifact import load_result

    a_path, b_path = two_results
    saved, out = tmp_path / "in.json", tmp_path / "r.json"
    result = CliRunner().invoke(
        app,
        ["grouped-rates", "--from-results", str(a_path), str(b_path), "--failure", "casualty",
         "--seed", "3", "--replicates", "200", "--save-input", str(saved), "--out", str(out)],
    )
    assert result.exit_code == 0, result.output
    a, b = load_result(a_path, suite), load_result(b_path, suite)
    entries = [(e.index, e.scenario_id, e.seed) for e in a.manifest.episodes]
    counts = [{e.index: dict(e.metrics.counts) for e in r.episodes} for r in (a, b)]
    expected = input_from_results(entries, "greedy", "stay", counts[0], counts[1], "casualty",
                                  {"mode": "monte-carlo", "seed": 3, "replicates": 200})
    assert saved.read_bytes() == render(expected)
    assert out.read_bytes() == render(build_report(render(expected)))


def test_command_from_results_refuses_different_manifests(app, tmp_path, suite, two_results) -> None:  # noqa: ANN001
    """Artifacts of different manifests are refused with one line, before any replay."""
    from emberbench.results.manifest import build_manifest
    from emberbench.evaluation.runner import run_evaluation

    other = tmp_path / "other.json"
    run_evaluation(build_manifest(suite, [1]), suite, "stay", "stay", other)
    result = CliRunner().invoke(
        app, ["grouped-rates", "--from-results", str(two_results[0]), str(other), "--failure", "casualty",
              "--seed", "1", "--replicates", "100", "--out", str(tmp_path / "r.json")],
    )
    assert result.exit_code == 1
    assert "different evaluation manifests" in result.output


@pytest.fixture(scope="module")
def generated_results(tmp_path_factory):  # noqa: ANN001
    """greedy and stay artifacts on two scenarios of the shipped suite emberbench-v1-generated."""
    from emberbench.results.manifest import EvaluationManifest, ManifestEntry
    from emberbench.evaluation.runner import run_evaluation
    from emberbench.sim.suite import GENERATED_SUITE_ID, load_suite

    suite = load_suite(GENERATED_SUITE_ID)
    chosen = suite.scenarios[1:3]
    entries = tuple(ManifestEntry(i, sc.id, sc.content_hash, seed)
                    for i, (sc, seed) in enumerate((sc, seed) for sc in chosen for seed in (0, 1)))
    manifest = EvaluationManifest(suite.id, suite.version, suite.hash, entries)
    folder = tmp_path_factory.mktemp("gr-generated")
    for name in ("greedy", "stay"):
        run_evaluation(manifest, suite, name, name, folder / f"{name}.json")
    return folder / "greedy.json", folder / "stay.json"


@pytest.mark.parametrize("suite_args", [[], ["--suite", "emberbench-v1-generated"]], ids=["from the manifest", "--suite"])
def test_command_from_results_reads_results_of_another_shipped_suite(app, tmp_path, generated_results,  # noqa: ANN001
                                                                    suite_args) -> None:
    """Issue 22 (defect 13): results of emberbench-v1-generated are read with the suite their manifest names,
    or the one --suite gives, like every other command; the report is that of the input they define."""
    from emberbench.results.artifact import load_result
    from emberbench.sim.suite import GENERATED_SUITE_ID, load_suite

    a_path, b_path = generated_results
    out = tmp_path / "r.json"
    result = CliRunner().invoke(app, ["grouped-rates", "--from-results", str(a_path), str(b_path),
                                      "--failure", "not-evacuated", *suite_args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    suite = load_suite(GENERATED_SUITE_ID)
    a, b = load_result(a_path, suite), load_result(b_path, suite)
    entries = [(e.index, e.scenario_id, e.seed) for e in a.manifest.episodes]
    counts = [{e.index: dict(e.metrics.counts) for e in r.episodes} for r in (a, b)]
    expected = input_from_results(entries, "greedy", "stay", counts[0], counts[1], "not-evacuated")
    assert out.read_bytes() == render(build_report(render(expected)))


def test_command_from_results_refuses_a_suite_that_is_not_the_manifests(app, tmp_path, generated_results) -> None:  # noqa: ANN001
    """--suite naming another suite than the manifest's is refused in one line by the manifest check."""
    result = CliRunner().invoke(app, ["grouped-rates", "--from-results", *map(str, generated_results),
                                      "--failure", "casualty", "--suite", "emberbench-v1-public",
                                      "--out", str(tmp_path / "r.json")])
    assert result.exit_code == 1
    assert "emberbench-v1-generated" in result.output and not (tmp_path / "r.json").exists()


def test_command_from_results_names_the_suite_to_give_when_it_is_not_shipped(app, tmp_path, suite) -> None:  # noqa: ANN001
    """A manifest of a suite that is not shipped asks for --suite, in one line naming the artifact."""
    import shutil

    from emberbench.results.manifest import build_manifest
    from emberbench.evaluation.runner import run_evaluation
    from emberbench.sim.suite import load_suite, public_suite_path

    folder = tmp_path / "mine"
    shutil.copytree(public_suite_path(), folder)
    data = json.loads((folder / "suite.json").read_text())
    data["suite_id"] = "my-suite"
    (folder / "suite.json").write_text(json.dumps(data))
    mine = load_suite(folder)
    manifest = build_manifest(mine, [0])
    manifest = type(manifest)(manifest.suite_id, manifest.suite_version, manifest.suite_hash, manifest.episodes[:1])
    for name in ("greedy", "stay"):
        run_evaluation(manifest, mine, name, name, tmp_path / f"{name}.json")
    args = ["grouped-rates", "--from-results", str(tmp_path / "greedy.json"), str(tmp_path / "stay.json"),
            "--failure", "casualty", "--seed", "1", "--replicates", "100"]
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 1
    assert "greedy.json" in refused.output and "'my-suite'" in refused.output and "--suite" in refused.output
    given = CliRunner().invoke(app, [*args, "--suite", str(folder), "--out", str(tmp_path / "r.json")])
    assert given.exit_code == 0, given.output
