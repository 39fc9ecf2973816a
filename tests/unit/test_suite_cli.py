"""``emberbench suite ...`` and the subset/scored options of ``manifest build``: outputs and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from emberbench.cli.main import app
from emberbench.sim.suite import load_suite

runner = CliRunner()
SECRET = "12345678901234567890"


def invoke(*args: str):  # noqa: ANN201
    return runner.invoke(app, [str(a) for a in args])


def one_error_line(result) -> str:  # noqa: ANN001
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines[-1].startswith("error: ") and "Traceback" not in result.output, result.output
    assert sum(line.startswith("error: ") for line in lines) == 1
    return lines[-1]


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A three-scenario dev suite written by the command."""
    out = tmp_path_factory.mktemp("cli") / "suite"
    result = invoke("suite", "generate", "--recipe", "dev", "--count", 3, "--seed", 8, "--out", out)
    assert result.exit_code == 0, result.output
    return out


def test_generate_writes_a_valid_suite_and_refuses_to_overwrite(made: Path) -> None:
    """The folder holds a valid suite; generating into it again is refused unless --force."""
    suite = load_suite(made)
    assert len(suite.scenarios) == 3 and suite.id == "generated-dev"
    assert "refuse" not in invoke("suite", "validate", made).output
    assert one_error_line(invoke("suite", "generate", "--recipe", "dev", "--count", 2, "--seed", 8,
                                 "--out", made)) == f"error: {made} is not empty; use --force to replace the suite in it"


def test_force_replaces_the_suite_and_its_stale_files(made: Path, tmp_path: Path) -> None:
    """--force rewrites the suite; scenario files of the old suite that the new one lacks are removed."""
    import shutil

    copy = tmp_path / "s"
    shutil.copytree(made, copy)
    result = invoke("suite", "generate", "--recipe", "dev", "--count", 2, "--seed", 8, "--out", copy, "--force")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (copy / "scenarios").iterdir()) == sorted(
        f"{s.id}.json" for s in load_suite(copy).scenarios)
    assert len(load_suite(copy).scenarios) == 2


@pytest.mark.parametrize(("extra", "message"), [
    ([], "give exactly one of --seed and --secret-seed-file"),
    (["--seed", "1", "--recipe-typo"], None),
    (["--seed", "-3"], None),  # not a seed: a usage error, refused while parsing
    (["--seed", "1", "--min-tier", "hard", "--max-tier", "easy"], "--min-tier hard is above --max-tier easy"),
])
def test_generate_argument_errors(tmp_path: Path, extra: list[str], message: str | None) -> None:
    """Bad arguments give one line (usage errors exit 2) and create nothing."""
    out = tmp_path / "never"
    result = invoke("suite", "generate", "--recipe", "dev", "--count", 2, "--out", out, *extra)
    if message is None:
        assert result.exit_code == 2
    else:
        assert one_error_line(result) == f"error: {message}"
    assert not out.exists()


def test_generate_refuses_a_file_and_a_bad_recipe(tmp_path: Path) -> None:
    """A file where the folder should be, or a recipe that does not parse, is one clear error."""
    target = tmp_path / "file"
    target.write_text("x")
    assert "a suite is written into a folder" in one_error_line(
        invoke("suite", "generate", "--recipe", "dev", "--count", 1, "--seed", 1, "--out", target))
    bad = tmp_path / "r.json"
    bad.write_text('{"recipe_format": "1.0", "name": "x"}')
    assert "missing key(s) in recipe" in one_error_line(
        invoke("suite", "generate", "--recipe", bad, "--count", 1, "--seed", 1, "--out", tmp_path / "o"))


def test_secret_generation_never_prints_the_seed(tmp_path: Path) -> None:
    """With --secret-seed-file the seed appears in no output and no file; commit and check round trip."""
    (tmp_path / "secret").write_text(SECRET)
    result = invoke("suite", "generate", "--recipe", "dev", "--count", 2, "--secret-seed-file",
                    tmp_path / "secret", "--out", tmp_path / "held")
    assert result.exit_code == 0 and SECRET not in result.output and "secret" in result.output
    commit = invoke("suite", "commit", tmp_path / "held", "--out", tmp_path / "c.json")
    assert commit.exit_code == 0 and SECRET not in commit.output
    assert json.loads((tmp_path / "c.json").read_text()) == json.loads(commit.output.splitlines()[0])
    assert one_error_line(invoke("suite", "commit", tmp_path / "held", "--out", tmp_path / "c.json")).endswith(
        "exists; use --force to replace it")
    reveal = invoke("suite", "reveal", tmp_path / "held", "--secret-seed-file", tmp_path / "secret",
                    "--out", tmp_path / "r.json")
    assert reveal.exit_code == 0, reveal.output
    check = invoke("suite", "check-commitment", tmp_path / "held", tmp_path / "c.json", "--reveal", tmp_path / "r.json")
    assert check.exit_code == 0 and "regenerates it" in check.output
    wrong = invoke("suite", "check-commitment", "emberbench-v1-public", tmp_path / "c.json")
    assert "this is not the committed suite" in one_error_line(wrong)


def test_validate_lists_problems_then_one_error_line(made: Path, tmp_path: Path) -> None:
    """Every problem is a 'problem' line on stdout, then one error line; a good suite says ok."""
    import shutil

    ok = invoke("suite", "validate", made)
    assert ok.exit_code == 0 and ok.output.startswith("ok: generated-dev 1.0.0, 3 scenarios")
    copy = tmp_path / "broken"
    shutil.copytree(made, copy)
    for path in sorted((copy / "scenarios").iterdir())[:2]:
        data = json.loads(path.read_text())
        data["max_steps"] = 0
        path.write_text(json.dumps(data))
    result = invoke("suite", "validate", copy)
    assert result.exit_code == 1
    assert sum("max_steps must be an integer" in line and line.startswith("problem  ")
               for line in result.output.splitlines()) == 2
    assert result.output.splitlines()[-1] == f"error: {copy}: 2 problem(s) found (listed above)"


def test_diff_and_show(made: Path) -> None:
    """diff lists removed and added scenarios; show --render draws rulers and a legend for any suite."""
    diff = invoke("suite", "diff", "emberbench-v1-public", made)
    lines = diff.output.splitlines()
    assert diff.exit_code == 0 and lines[-1].startswith("3 added, 12 removed, 0 changed, 0 unchanged")
    first = load_suite(made).scenarios[0]
    show = invoke("suite", "show", first.id, "--suite", made, "--render")
    assert show.exit_code == 0 and "0123456789" in show.output and "people (" in show.output
    generated = load_suite("emberbench-v1-generated").scenarios[0]
    found = invoke("suite", "show", generated.id)
    assert found.exit_code == 0 and generated.content_hash in found.output


def test_calibrate_writes_once(made: Path, tmp_path: Path) -> None:
    """calibrate writes the file and its family table; a second run without --force is refused."""
    out = tmp_path / "cal.json"
    result = invoke("suite", "calibrate", made, "--seeds", "0", "--out", out)
    assert result.exit_code == 0 and out.exists() and "fire-aware" in result.output
    assert one_error_line(invoke("suite", "calibrate", made, "--out", out)) == f"error: {out} exists; use --force to replace it"
    bad = invoke("suite", "calibrate", made, "--seeds", "x", "--out", tmp_path / "other.json")
    assert bad.exit_code == 2 and "--seeds" in bad.output and "'x' is not a seed" in bad.output  # issue 22: usage


def test_manifest_build_subsets_and_scored(tmp_path: Path) -> None:
    """--scenarios and --families schedule a subset; --scored draws seeds it does not print."""
    sub = invoke("manifest", "build", "--seeds", "0", "1", "--scenarios", "v1-pub-03-bottleneck-door,v1-pub-01-single-exit-sparse",
                 "--families", "trapped", "--out", tmp_path / "sub.json")
    assert sub.exit_code == 0 and ": 6 episodes" in sub.output
    ids = [e["scenario_id"] for e in json.loads((tmp_path / "sub.json").read_text())["episodes"]]
    assert ids == ["v1-pub-01-single-exit-sparse"] * 2 + ["v1-pub-03-bottleneck-door"] * 2 + ["v1-pub-08-sealed-room"] * 2
    scored = invoke("manifest", "build", "--scored", "--seed-count", "2", "--out", tmp_path / "scored.json")
    seeds = {e["seed"] for e in json.loads((tmp_path / "scored.json").read_text())["episodes"]}
    assert scored.exit_code == 0 and len(seeds) == 2 and not any(str(s) in scored.output for s in seeds)
    assert one_error_line(invoke("manifest", "build", "--scored", "--seeds", "1", "--out", tmp_path / "x.json")) == (
        "error: give either --seeds or --scored, not both")
    assert "has no family 'castles'" in one_error_line(
        invoke("manifest", "build", "--seeds", "0", "--families", "castles", "--out", tmp_path / "y.json"))
