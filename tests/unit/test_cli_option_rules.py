"""One rule per option, applied to every command (issue 16, items 4 and 5; docs/user-guide.md, "Option rules")."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from emberbench.cli.args import MAX_COUNT, MAX_SEED
from emberbench.cli.main import app
from emberbench.evaluation.executor_choice import (
    ExecutorKind,
    break_even_seconds,
    choose_executor,
    estimate_seconds,
)
from emberbench.results.manifest import EvaluationManifest, ManifestEntry, build_manifest, write_manifest
from emberbench.evaluation.runner import run_evaluation

runner = CliRunner()
EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "task-grouped-rates"
SCENARIO = "v1-pub-01-single-exit-sparse"


@pytest.fixture(scope="module")
def runs(tmp_path_factory, suite):  # noqa: ANN001
    """Two results (greedy, and a model id with a space) on two episodes, and their manifest."""
    folder = tmp_path_factory.mktemp("rules")
    entries = tuple(ManifestEntry(i, SCENARIO, suite.scenario(SCENARIO).content_hash, i) for i in range(2))
    manifest = EvaluationManifest(suite.id, suite.version, suite.hash, entries)
    write_manifest(manifest, folder / "m.json")
    run_evaluation(manifest, suite, "greedy", "greedy", folder / "a.json")
    run_evaluation(manifest, suite, "random", "rand om", folder / "b.json")
    return folder


def _invoke(*args: object):  # noqa: ANN202
    return runner.invoke(app, [str(a) for a in args])


def _one_line(result, code: int) -> str:  # noqa: ANN001
    assert result.exit_code == code, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.output, result.output
    return lines[0]


# (name, arguments with {runs} and {out}); each writes {out} and nothing else of note.
WRITERS = [
    ("manifest build", ("manifest", "build", "--seeds", "0", "--out", "{out}")),
    ("stats --out", ("stats", "{runs}/a.json", "--resamples", "100", "--out", "{out}")),
    ("compare --out", ("compare", "{runs}/a.json", "{runs}/b.json", "--resamples", "100", "--out", "{out}")),
    ("pair --out", ("pair", "{runs}/a.json", "{runs}/b.json", "--out", "{out}")),
    ("episode --record", ("episode", SCENARIO, "--seed", "0", "--record", "{out}")),
    ("grouped-rates --out", ("grouped-rates", "--input", str(EXAMPLE / "input.json"), "--out", "{out}")),
    ("grouped-rates --contract", ("grouped-rates", "--input", str(EXAMPLE / "input.json"), "--contract", "{out}")),
    ("grouped-rates --save-input", ("grouped-rates", "--from-results", "{runs}/a.json", "{runs}/b.json",
                                    "--failure", "casualty", "--save-input", "{out}")),
    ("suite commit --out", ("suite", "commit", "emberbench-v1-public", "--out", "{out}")),
    ("view --out", ("view", "{runs}/a.json", "--episode", "0", "--out", "{out}")),
    ("plot --out", ("plot", "egress", "{runs}/a.json", "--scenario", SCENARIO, "--out", "{out}.svg")),
    ("export --out", ("export", "{runs}/a.json", "{runs}/b.json", "--format", "csv", "--out", "{out}")),
]


@pytest.mark.parametrize(("name", "args"), WRITERS, ids=[w[0] for w in WRITERS])
def test_an_existing_output_is_refused_without_force(name: str, args: tuple[str, ...], runs: Path,
                                                     tmp_path: Path) -> None:
    """Issue 16 (item 4): every writer refuses an existing file in one line (exit 1, untouched) and replaces
    it with --force; before, `manifest build` and `stats --out` overwrote silently."""
    out = tmp_path / ("out.file.svg" if name == "plot --out" else "out.file")
    out.write_bytes(b"keep me")
    filled = [a.replace("{runs}", str(runs)).replace("{out}.svg", str(out)).replace("{out}", str(out)) for a in args]
    line = _one_line(_invoke(*filled), 1)
    assert f"{out} exists; use --force to replace it" in line
    assert out.read_bytes() == b"keep me"
    forced = _invoke(*filled, "--force")
    assert forced.exit_code == 0, forced.output
    assert out.read_bytes() != b"keep me"


def test_stats_and_compare_write_only_with_out(runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 16 (item 4): like pair, stats and compare print their tables and write a file only with --out."""
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in runs.iterdir())
    assert _invoke("stats", runs / "a.json", "--resamples", "100").exit_code == 0
    assert _invoke("compare", runs / "a.json", runs / "b.json", "--resamples", "100").exit_code == 0
    assert sorted(p.name for p in runs.iterdir()) == before and list(tmp_path.iterdir()) == []


def test_the_written_line_and_digest_fit_80_columns(runs: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 16 (item E): `statistics written to FILE (sha256 ...)` was 120 columns; the digest now has its
    own line, and both lines fit 80 columns (stats, compare, episode --record)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.json").write_bytes((runs / "a.json").read_bytes())
    (tmp_path / "b.json").write_bytes((runs / "b.json").read_bytes())
    for args in (("stats", "a.json", "--resamples", "100", "--out", "a.stats.json"),
                 ("compare", "a.json", "b.json", "--resamples", "100", "--out", "a-vs-b.compare.json"),
                 ("episode", SCENARIO, "--seed", "0", "--record", "rec.json")):
        result = runner.invoke(app, list(args), env={"COLUMNS": "80"})
        assert result.exit_code == 0, result.output
        written = [line for line in result.output.splitlines() if "written to" in line or "sha256" in line]
        assert len(written) == 2 and all(len(line) <= 80 for line in written), result.output
        assert any(line.startswith("  sha256 ") and len(line.split()[1]) == 64 for line in result.output.splitlines())


@pytest.mark.parametrize("args", [
    ("--seeds", "0", "--out", "{d}/m.json", "1", "2"),
    ("--out", "{d}/m.json", "7", "--seeds", "0"),
    ("--seeds", "--out", "{d}/m.json"),
])
def test_stray_words_after_variadic_seeds_are_usage_errors(args: tuple[str, ...], tmp_path: Path) -> None:
    """Issue 16 (item 4): `--seeds 0 --out m.json 1 2` took 1 and 2 as seeds; now a stray word (or --seeds
    without a value) is a usage error: exit 2, one line, nothing written."""
    line = _one_line(_invoke("manifest", "build", *(a.replace("{d}", str(tmp_path)) for a in args)), 2)
    assert "--seeds" in line
    assert list(tmp_path.iterdir()) == []


def test_seeds_still_take_several_values_and_negative_looking_ones_reach_the_parser(tmp_path: Path) -> None:
    """`--seeds 0 1 2` still works anywhere among the options; `-1` is a value the seed parser refuses."""
    ok = _invoke("manifest", "build", "--out", tmp_path / "m.json", "--seeds", "0", "1", "2")
    assert ok.exit_code == 0 and "36 episodes" in ok.output
    assert "'-1' is not a seed" in _one_line(_invoke("manifest", "build", "--seeds", "-1", "--out",
                                                     tmp_path / "n.json"), 2)


@pytest.mark.parametrize(("spec", "name"), [
    ("greedy", "greedy"), ("openai:gpt-4o-mini", "gpt-4o-mini"), ("./mypolicy.py:make", "mypolicy"),
    ("pkg.mod:make", "pkg.mod"), (f"cmd:{sys.executable} agent.py", "agent"), ("cmd:nosuch-agent --fast", "nosuch-agent"),
    ("openai:org/model", None), ("cmd:", None),
])
def test_the_policy_spec_names_the_model(spec: str, name: str | None, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The name a spec gives its model when --model-id is left out (a name-like id, or none)."""
    from emberbench.policies.spec import spec_name

    monkeypatch.chdir(tmp_path)
    (tmp_path / "agent.py").write_text("")
    assert spec_name(spec) == name


def test_run_without_model_id_uses_and_prints_the_specs_name(runs: Path, tmp_path: Path) -> None:
    """Issue 27 (a CLI without traps): --model-id was required; now it defaults to the policy spec's name, which
    is printed, and a spec that gives no usable name is a usage error asking for --model-id (nothing written)."""
    result = _invoke("run", "--manifest", runs / "m.json", "--policy", "greedy", "--out", tmp_path / "o.json",
                     "--no-store", "--executor", "local")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("model id: greedy (the policy spec's name; --model-id chooses another)\n")
    assert json.loads((tmp_path / "o.json").read_bytes())["model_id"] == "greedy"
    line = _one_line(_invoke("run", "--manifest", runs / "m.json", "--policy", "openai:org/model", "--out",
                             tmp_path / "p.json", "--no-store"), 2)
    assert "--model-id" in line and not (tmp_path / "p.json").exists()


@pytest.mark.parametrize("seeds", [("0", "1", "2"), ("0,1,2",), ("0-2",), ("0", "1-2"), ("0-1,2",), ("0, 1, 2",)])
def test_seeds_take_lists_and_ranges_alike(seeds: tuple[str, ...], tmp_path: Path) -> None:
    """Issue 27 (a CLI without traps): `--seeds` took only `0 1 2`; `0,1,2` and `0-2` (an inclusive range) now
    build the same manifest, the pinned development manifest."""
    result = _invoke("manifest", "build", "--seeds", *seeds, "--out", tmp_path / "m.json")
    assert result.exit_code == 0, result.output
    assert "manifest hash 67c8b1be5db622966303cb709a107d6dca770a6219ea931ecb72e1a4e4aaef16" in result.output


@pytest.mark.parametrize(("seeds", "says"), [("5-3", "'5-3' is not a seed range"), ("0-100000", "at most 100000"),
                                             ("0-2,2", "seed 2 is given twice"), ("1-x", "'1-x' is not a seed"),
                                             (" 1", "' 1' is not a seed")])
def test_a_bad_range_is_a_usage_error(seeds: str, says: str, tmp_path: Path) -> None:
    """A range that runs backwards, names more than 100,000 seeds, repeats a seed or is not digits is refused
    while parsing (exit 2), naming --seeds; nothing is written."""
    assert says in _one_line(_invoke("manifest", "build", "--seeds", seeds, "--out", tmp_path / "m.json"), 2)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("args", "option"), [
    (("run", "--manifest", "m.json", "--policy", "greedy", "--model-id", "g", "--out", "o.json",
      "--executor", "threads"), "--executor"),
    (("stats", "a.json", "--groups", "scenarios"), "--groups"),
    (("report", "a.json", "--order-by", "speed"), "--order-by"),
    (("plot", "forest", "a.json", "--out", "f.png", "--metric", "speed"), "--metric"),
])
def test_fixed_sets_are_choices(args: tuple[str, ...], option: str, tmp_path: Path) -> None:
    """Issue 16 (item 4): --executor accepted any string; every option taking a fixed set is a choice, so a
    wrong value is a usage error naming the option and the choices."""
    line = _one_line(_invoke(*args), 2)
    assert option in line and "is not one of" in line


def test_grouped_rates_takes_out_contract_and_the_hidden_output_alias(tmp_path: Path) -> None:
    """Issue 16 (item 4): grouped-rates uses --out like every command (--output still works, hidden), and
    takes the script's --contract, writing the committed contract."""
    new = _invoke("grouped-rates", "--input", EXAMPLE / "input.json", "--out", tmp_path / "r.json",
                  "--contract", tmp_path / "c.json")
    old = _invoke("grouped-rates", "--input", EXAMPLE / "input.json", "--output", tmp_path / "r2.json")
    assert new.exit_code == 0 and old.exit_code == 0, new.output + old.output
    assert (tmp_path / "r.json").read_bytes() == (tmp_path / "r2.json").read_bytes() == (EXAMPLE / "report.json").read_bytes()
    assert (tmp_path / "c.json").read_bytes() == (EXAMPLE / "contract.json").read_bytes()
    assert "--output" not in _invoke("grouped-rates", "--help").output


def test_grouped_rates_from_results_accepts_any_model_id(runs: Path, tmp_path: Path) -> None:
    """Issue 16 (item 4): `--from-results` refused the model id 'rand om' that `run` accepts; now such an id
    gets a derived arm id and stays, whole, in the declared matching."""
    result = _invoke("grouped-rates", "--from-results", runs / "a.json", runs / "b.json", "--failure", "casualty",
                     "--save-input", tmp_path / "in.json", "--out", tmp_path / "r.json")
    assert result.exit_code == 0, result.output
    document = json.loads((tmp_path / "in.json").read_text())
    arm = document["arms"][1]
    assert document["arms"][0] == "greedy" and arm.startswith("model-") and len(arm) == 22
    assert document["matching"]["varied"]["per_arm"][arm] == "rand om"


CHOICES = [
    (0, None, None, None, 2, ExecutorKind.LOCAL, "already done"),
    (36, None, None, 0.4, 2, ExecutorKind.LOCAL, "Ray pays off from"),
    (5000, None, None, 60.0, 1, ExecutorKind.LOCAL, "one CPU"),
    (5000, None, None, 60.0, 2, ExecutorKind.RAY, "on 2 Ray workers"),
    (0, ExecutorKind.RAY, None, None, 2, ExecutorKind.RAY, "--executor ray"),
    (10_000, ExecutorKind.LOCAL, "--address", 600.0, 2, ExecutorKind.LOCAL, "--executor local"),
    (3, None, "--address", 0.1, 1, ExecutorKind.RAY, "--address given"),
]


@pytest.mark.parametrize(("pending", "requested", "asked", "work", "cpus", "kind", "reason"), CHOICES)
def test_the_executor_is_chosen_by_the_work(pending: int, requested: ExecutorKind | None, asked: str | None,
                                            work: float | None, cpus: int, kind: ExecutorKind, reason: str) -> None:
    """Issue 16 (item 5): nothing or little left runs in process, much on Ray; --executor always wins and a
    cluster option means Ray."""
    choice = choose_executor(pending, requested=requested, cluster_asked=asked, work_seconds=work, cpus=cpus)
    assert choice.kind is kind and reason in choice.reason


def test_the_choice_follows_the_break_even_work() -> None:
    """Ray exactly when the estimated in-process work passes the break-even for the CPUs at hand; the
    break-even falls as CPUs are added and is never reached on one CPU."""
    assert break_even_seconds(1) == float("inf")
    assert break_even_seconds(2) > break_even_seconds(4) > break_even_seconds(64) > 0
    for cpus in (2, 4, 64):
        edge = break_even_seconds(cpus)
        assert choose_executor(100, work_seconds=edge * 0.98, cpus=cpus).kind is ExecutorKind.LOCAL
        assert choose_executor(100, work_seconds=edge * 1.02, cpus=cpus).kind is ExecutorKind.RAY


def test_a_240_episode_run_is_not_sent_to_ray(suite) -> None:  # noqa: ANN001
    """Issue 27 defect 5: 240 greedy episodes of the public suite went to Ray (53 s against 12.8 s in process);
    their estimated work is below Ray's break-even on any number of CPUs. The choice follows what was measured
    on the 2-core machine (docs/cluster.md, "Choosing the executor"): 2,000 greedy episodes were not faster on
    Ray there (they are from four CPUs on), 2,000 fire-aware episodes were."""
    small = estimate_seconds(suite, build_manifest(suite, list(range(20))).episodes, "greedy")  # 240 episodes
    seeds = build_manifest(suite, list(range(167))).episodes  # 2,004 episodes
    greedy, fire_aware = estimate_seconds(suite, seeds, "greedy"), estimate_seconds(suite, seeds, "fire-aware")
    for cpus in (1, 2, 4, 8, 64, 256):
        assert choose_executor(240, work_seconds=small, cpus=cpus).kind is ExecutorKind.LOCAL
    for cpus in (1, 2):
        assert choose_executor(2004, work_seconds=greedy, cpus=cpus).kind is ExecutorKind.LOCAL
    for cpus in (4, 8, 64):
        assert choose_executor(2004, work_seconds=greedy, cpus=cpus).kind is ExecutorKind.RAY
    assert choose_executor(2004, work_seconds=fire_aware, cpus=1).kind is ExecutorKind.LOCAL
    for cpus in (2, 4, 64):
        assert choose_executor(2004, work_seconds=fire_aware, cpus=cpus).kind is ExecutorKind.RAY


def test_run_plays_240_episodes_in_process(suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """Issue 27 defect 5, end to end: `run` of 240 greedy episodes without --executor plays them in this
    process (it started Ray, four times slower) and says so."""
    monkeypatch.delenv("RAY_ADDRESS", raising=False)

    def ray_up() -> bool:  # another test of this session may have started Ray already
        return "ray" in sys.modules and sys.modules["ray"].is_initialized()

    before = ray_up()
    write_manifest(build_manifest(suite, list(range(20))), tmp_path / "m.json")
    result = _invoke("run", "--manifest", tmp_path / "m.json", "--policy", "greedy", "--model-id", "g",
                     "--out", tmp_path / "g.json", "--store", tmp_path / "store")
    assert result.exit_code == 0, result.output
    assert "240/240 episodes" in result.output
    assert "executor: in process (240 episodes, about " in result.output, result.output
    assert ray_up() == before


def test_the_estimate_grows_with_the_scenarios_and_the_policy(suite) -> None:  # noqa: ANN001
    """The work estimate adds up each episode's scenario size under the policy's cost per step: a bigger
    scenario, a costlier policy, an external agent's process per episode all cost more; concurrency divides
    only what waits."""
    small, large = min(suite.scenarios, key=lambda s: s.max_steps), max(suite.scenarios, key=lambda s: s.max_steps)
    one = [ManifestEntry(0, small.id, small.content_hash, 0)]
    big = [ManifestEntry(0, large.id, large.content_hash, 0)]
    assert estimate_seconds(suite, big, "greedy") > estimate_seconds(suite, one, "greedy")
    assert estimate_seconds(suite, one, "fire-aware") > estimate_seconds(suite, one, "greedy")
    assert estimate_seconds(suite, one * 10, "greedy") == pytest.approx(10 * estimate_seconds(suite, one, "greedy"))
    agent = estimate_seconds(suite, one * 8, "cmd:node agent.js")
    assert agent > estimate_seconds(suite, one * 8, "fire-aware")
    assert estimate_seconds(suite, one * 8, "cmd:node agent.js", concurrency=8) < agent / 4
    assert estimate_seconds(suite, one * 8, "greedy", concurrency=8) == estimate_seconds(suite, one * 8, "greedy")


def test_the_demo_says_truthfully_where_each_run_plays() -> None:
    """Issue 27 defect 5: scripts/demo.sh announced 'run greedy (Ray, embedded)' and the run then said
    'executor: in process'. A run the demo announces on Ray is asked for Ray; any other is announced as
    chosen by the work, which the run's own last line then names."""
    demo = (Path(__file__).resolve().parents[2] / "scripts" / "demo.sh").read_text(encoding="utf-8")
    lines = demo.splitlines()
    runs = [i for i, line in enumerate(lines) if line.strip().startswith("emberbench run ")]
    assert runs
    for i in runs:
        announced = next(lines[j] for j in range(i, -1, -1) if lines[j].startswith("echo "))
        command = " ".join(lines[i:i + 3])
        on_ray = "--executor ray" in command or "--workers" in command or "--address" in command
        assert ("Ray" in announced) == on_ray, (announced, command)
        assert on_ray or "chosen by the work" in announced or "in process" in announced, announced


def test_run_says_which_executor_and_why(runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 16 (item 5): without --executor a small run plays in process (Ray was started for 2 episodes);
    rerunning a finished run starts nothing; the output says which executor and why."""
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    args = ("run", "--manifest", runs / "m.json", "--policy", "greedy", "--model-id", "greedy",
            "--out", tmp_path / "o.json", "--store", tmp_path / "store")
    first = _invoke(*args)
    assert first.exit_code == 0, first.output
    assert "executor: in process (2 episodes, under 0.1 s of work; Ray pays off from" in first.output
    again = _invoke(*args)
    assert "(0 run now, 2 resumed)" in again.output and "executor: in process (every episode is already done)" in again.output


def test_submit_without_its_extra_names_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 16 (item E): without Ray's job-submission client, submit says what to install in one line."""
    monkeypatch.setitem(sys.modules, "ray.job_submission", None)
    line = _one_line(_invoke("submit", "--address", "http://127.0.0.1:1", "--", "suite", "list"), 1)
    assert "pip install 'emberbench[submit]'" in line


# -- documented ranges are usage errors (issue 22, defects 8 and 16) ------------------------------------------

RANGE_IN_HELP = re.compile(r"\[(\d+), (\d+|2\*\*64 - 1)\]|\((\d+)(?:-| to )(\d+)\)")


def _options() -> list[tuple[tuple[str, ...], object]]:
    """Every option of every command: (command path, click parameter)."""
    root = typer.main.get_command(app)
    found = []

    def walk(group, path):  # noqa: ANN001, ANN202
        for name, command in sorted(group.commands.items()):
            if hasattr(command, "commands"):
                walk(command, (*path, name))
            else:
                found.extend(((*path, name), p) for p in command.params if p.param_type_name == "option")

    walk(root, ())
    return found


def _bounds(param) -> tuple[int, int] | None:  # noqa: ANN001
    """The range an option's parser (or list callback) enforces, if it has one."""
    info = param.type_descriptor.parameter_info
    for func in (info.parser, info.callback):
        if hasattr(func, "bounds"):
            return func.bounds()
    return None


def _shown(number: int) -> str:
    return "2**64 - 1" if number == MAX_SEED else str(number)


BOUNDED = [(path, p, _bounds(p)) for path, p in _options() if _bounds(p) is not None]


def test_every_range_written_in_a_help_is_the_range_its_parser_enforces() -> None:
    """Issue 22 (defect 16): `--count` said "1 to 10000", `--embed` "1-1000" and `--resamples` "[100, 1000000]"
    but parsed any positive integer and left the range to the library (exit 1). Now every option whose help
    states a range has a parser that enforces exactly that range, and every narrower range is in the help."""
    documented = 0
    for path, param in _options():
        found = RANGE_IN_HELP.findall(param.help or "")
        bounds = _bounds(param)
        if found:
            documented += 1
            assert bounds is not None, (path, param.opts, "states a range its parser does not enforce")
            low, high = [g for g in found[0] if g]
            assert (low, high) == (_shown(bounds[0]), _shown(bounds[1])), (path, param.opts, param.help, bounds)
        elif bounds is not None:
            assert bounds[1] == MAX_COUNT, (path, param.opts, "a range narrower than 10**12 missing from the help")
    assert documented >= 15


@pytest.mark.parametrize(("path", "param", "bounds"), BOUNDED,
                         ids=[f"{' '.join(path)} {p.opts[0]}" for path, p, _ in BOUNDED])
def test_a_value_outside_an_options_range_is_a_usage_error(path: tuple[str, ...], param, bounds: tuple[int, int],  # noqa: ANN001
                                                           tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 22 (defects 8, 16): for every option of every command with a range (found by walking the command
    tree, not listed by hand), the value just above it, and just below it where that is still a number,
    is a usage error: exit 2, one line naming the option, before anything is read or written."""
    monkeypatch.chdir(tmp_path)
    option = param.opts[0]
    outside = [str(bounds[1] + 1)] + ([str(bounds[0] - 1)] if bounds[0] > 0 else [])
    for value in outside:
        line = _one_line(_invoke(*path, option, value), 2)
        assert option in line and value in line, line
    assert list(tmp_path.iterdir()) == []
