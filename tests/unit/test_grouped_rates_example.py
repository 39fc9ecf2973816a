"""The worked example: its counts, estimates, bounds, intervals and committed files."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
from fractions import Fraction

import pytest

from emberbench.grouped_rates import contract_document, evaluate, render
from tests.unit.test_grouped_rates_support import EXAMPLE, EXAMPLE_COUNTS, ROOT, SCRIPT, example_document, frac, make_document, report_of, stat


@pytest.fixture(scope="module")
def report() -> dict:
    """The report recomputed from the committed example input."""
    return json.loads(evaluate((EXAMPLE / "input.json").read_bytes()).data)


def test_committed_input_has_the_counts_of_the_spec_table(report: dict) -> None:
    """Per task and arm, the committed input holds exactly the table's counts."""
    for row in report["counts"]["tasks"]:
        expected = EXAMPLE_COUNTS[row["task"]]
        for arm, triple in zip(("attack", "benign"), expected):
            got = row["arms"][arm]
            assert (got["failure"], got["success"], got["unresolved"]) == triple
    for arm in ("attack", "benign"):
        assert report["counts"]["totals"][arm]["attempted"] == 19
        assert report["counts"]["totals"][arm]["resolved"] == 18


def test_episode_weighted_estimates_are_12_18_and_4_18_with_contrast_4_9(report: dict) -> None:
    """Pooling resolved episodes gives attack 12/18, benign 4/18, difference 4/9."""
    pooled = report["estimates"]["episode_weighted"]
    assert pooled["status"] == "ok"
    assert frac(pooled["rates"]["attack"]) == Fraction(12, 18)
    assert frac(pooled["rates"]["benign"]) == Fraction(4, 18)
    assert frac(pooled["contrast"]) == Fraction(4, 9)


def test_equal_task_estimates_are_41_80_and_19_80_with_contrast_11_40(report: dict) -> None:
    """Weighting each task equally gives attack 41/80, benign 19/80, difference 11/40."""
    equal = report["estimates"]["equal_task"]
    assert equal["status"] == "ok" and equal["blocked_by"] == []
    assert frac(equal["rates"]["attack"]) == Fraction(41, 80)
    assert frac(equal["rates"]["benign"]) == Fraction(19, 80)
    assert frac(equal["contrast"]) == Fraction(11, 40)


def test_missing_label_bounds_are_12_19_to_13_19_and_4_19_to_5_19(report: dict) -> None:
    """Over all 19 attempts per arm the unresolved labels move each rate by 1/19."""
    bounds = report["missing_label_bounds"]
    assert frac(bounds["rates"]["attack"]["lower"]) == Fraction(12, 19)
    assert frac(bounds["rates"]["attack"]["upper"]) == Fraction(13, 19)
    assert frac(bounds["rates"]["benign"]["lower"]) == Fraction(4, 19)
    assert frac(bounds["rates"]["benign"]["upper"]) == Fraction(5, 19)
    assert frac(bounds["contrast"]["lower"]) == Fraction(7, 19)
    assert frac(bounds["contrast"]["upper"]) == Fraction(9, 19)


def _brute_force(document: dict) -> dict[tuple[str, str], list[Fraction | None]]:
    """Recompute every ordered draw from the raw episode list, independently of the reader."""
    tasks = document["population"]["tasks"]
    labels = {(t, a): [] for t in tasks for a in ("attack", "benign")}
    for episode in document["episodes"]:
        labels[(episode["task"], episode["arm"])].append(episode["label"])
    out: dict[tuple[str, str], list] = {}
    for draw in itertools.product(tasks, repeat=len(tasks)):
        values = {}
        for arm in ("attack", "benign"):
            chosen = [lab for t in draw for lab in labels[(t, arm)] if lab != "unresolved"]
            values[("pooled", arm)] = Fraction(chosen.count("failure"), len(chosen))
            per_task = []
            for t in draw:
                resolved = [lab for lab in labels[(t, arm)] if lab != "unresolved"]
                per_task.append(Fraction(resolved.count("failure"), len(resolved)))
            values[("equal", arm)] = sum(per_task, Fraction(0)) / len(draw)
        for kind in ("pooled", "equal"):
            values[(kind, "contrast")] = values[(kind, "attack")] - values[(kind, "benign")]
        for key, value in values.items():
            out.setdefault(key, []).append(value)
    return out


def test_intervals_match_an_independent_brute_force_over_all_256_draws(report: dict) -> None:
    """Sorting all 4^4 draw values and taking ranks ceil(B/40) and ceil(39B/40) gives the report."""
    values = _brute_force(example_document())
    b = 256
    low, high = math.ceil(b / 40), math.ceil(39 * b / 40)
    assert (report["intervals"]["lower_rank"], report["intervals"]["upper_rank"]) == (low, high) == (7, 250)
    names = {"pooled": "episode_weighted", "equal": "equal_task"}
    for (kind, arm), column in values.items():
        ordered = sorted(column)
        quantity = "contrast" if arm == "contrast" else "rate"
        entry = stat(report, names[kind], quantity, None if arm == "contrast" else arm)
        assert entry["status"] == "ok"
        assert frac(entry["lower"]) == ordered[low - 1]
        assert frac(entry["upper"]) == ordered[high - 1]


def test_report_keeps_all_256_draws_in_lexicographic_order(report: dict) -> None:
    """Draw k lists the base-4 digits of k and has weight 1; the first draw repeats T01."""
    rows = report["draws"]["rows"]
    assert len(rows) == report["resampling"]["total_weight"] == 256
    assert [row[0] for row in rows] == [list(d) for d in itertools.product(range(4), repeat=4)]
    assert all(row[1] == 1 for row in rows)
    assert rows[0][2:5] == ["4/5", "1/5", "3/5"]


def test_committed_example_input_matches_the_test_builder_counts() -> None:
    """The builder's report and the committed input's report agree on every estimate."""
    built = report_of(make_document(EXAMPLE_COUNTS))
    committed = report_of(example_document())
    assert built["estimates"] == committed["estimates"]
    assert built["intervals"] == committed["intervals"]


def test_committed_report_is_exactly_what_the_reader_writes() -> None:
    """Recomputing the example reproduces the committed report.json byte for byte."""
    outcome = evaluate((EXAMPLE / "input.json").read_bytes(), expect=EXAMPLE / "report.json")
    assert outcome.difference is None, (
        f"{outcome.difference}; regenerate with: python3 scripts/check_grouped_rates.py "
        "--input docs/examples/task-grouped-rates/input.json "
        "--output docs/examples/task-grouped-rates/report.json"
    )
    assert outcome.data == (EXAMPLE / "report.json").read_bytes()


def test_committed_contract_is_exactly_the_readers_contract() -> None:
    """contract.json is the rendered contract document of this reader."""
    assert (EXAMPLE / "contract.json").read_bytes() == render(contract_document())


def _run_isolated(*args: str) -> subprocess.CompletedProcess:
    # -I ignores the environment and user site; -S skips site-packages entirely,
    # so only the standard library and the repository are importable.
    return subprocess.run(
        [sys.executable, "-I", "-S", str(SCRIPT), *args],
        capture_output=True,
        text=True,
        cwd=str(ROOT.parent),
        timeout=60,
    )


def test_standalone_script_reproduces_the_committed_report_without_site_packages(tmp_path) -> None:
    """`python3 -I -S scripts/check_grouped_rates.py --expect` exits 0 and writes the same bytes."""
    out = tmp_path / "report.json"
    done = _run_isolated(
        "--input", str(EXAMPLE / "input.json"), "--expect", str(EXAMPLE / "report.json"), "--output", str(out)
    )
    assert done.returncode == 0, done.stderr
    assert "matches --expect" in done.stdout
    assert out.read_bytes() == (EXAMPLE / "report.json").read_bytes()


def test_standalone_script_names_the_first_difference_and_exits_1(tmp_path) -> None:
    """An expected report with one altered draw value is refused at that exact place."""
    expected = json.loads((EXAMPLE / "report.json").read_text())
    expected["draws"]["rows"][17][4] = "1/2"
    altered = tmp_path / "altered.json"
    altered.write_bytes(render(expected))
    done = _run_isolated("--input", str(EXAMPLE / "input.json"), "--expect", str(altered), "--output", str(tmp_path / "o.json"))
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f'error: recomputed report differs from --expect at report.draws.rows[17][4]: expected "1/2", got "{json.loads((EXAMPLE / "report.json").read_text())["draws"]["rows"][17][4]}"'
    ]
    assert (tmp_path / "o.json").read_bytes() == (EXAMPLE / "report.json").read_bytes()


def test_standalone_reader_loads_only_the_bound_sources_and_the_standard_library(tmp_path) -> None:
    """Running the reader imports exactly the emberbench files the report binds, and no third-party module."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "from emberbench.grouped_rates import main; "
        "main(['--input', sys.argv[2], '--output', sys.argv[3]]); "
        "import os; root = sys.argv[1]; "
        "print('\\n'.join(sorted(os.path.relpath(m.__file__, root) for n, m in list(sys.modules.items()) "
        "if n.startswith('emberbench')))); "
        "print('THIRD', sorted(n for n in ('numpy', 'typer', 'hypothesis', 'pytest') if n in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, str(ROOT), str(EXAMPLE / "input.json"), str(tmp_path / "r.json")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[-1] == "THIRD []"
    loaded = sorted(line for line in lines if line.startswith("emberbench"))
    bound = [entry["path"] for entry in json.loads((EXAMPLE / "report.json").read_text())["binding"]["reader"]["files"]]
    assert loaded == sorted(bound)
