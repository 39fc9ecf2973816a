"""Discovery at the command line: `policies`, shell completion, -v/-q, and flags shown without a value type."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib.metadata import EntryPoint

import pytest
import typer
from typer.testing import CliRunner

from emberbench.cli import verbosity
from emberbench.cli.main import app
from emberbench.errors import PolicyError
from emberbench.policies import catalog
from emberbench.policies.spec import resolve_policy

runner = CliRunner()
BIN = os.path.join(os.path.dirname(sys.executable), "emberbench")


def _plugins(monkeypatch, *eps: EntryPoint) -> None:  # noqa: ANN001
    monkeypatch.setattr(catalog, "entry_points", lambda group: list(eps) if group == catalog.ENTRY_POINT_GROUP else [])


def test_policies_lists_builtins_with_descriptions() -> None:
    """Every built-in is listed with the first line of its docstring (wrapped within 80 columns); no plugin
    means 'none'."""
    result = runner.invoke(app, ["policies"])
    assert result.exit_code == 0, result.output
    assert ("  greedy      Static shortest path to the nearest exit; ignores fire and other\n"
            "              people.\n") in result.output
    assert all(len(line) <= 80 for line in result.output.splitlines()), result.output
    for name in ("stay", "fire-aware", "random"):
        assert f"  {name} " in result.output
    assert "entry points):\n  none\n" in result.output and "cmd:COMMAND" in result.output


def test_policies_lists_installed_entry_points_and_flags_broken_ones(monkeypatch) -> None:  # noqa: ANN001
    """Entry points appear with description and origin; a broken, a hidden and a non-callable one are marked."""
    _plugins(monkeypatch,
             EntryPoint("cautious", "emberbench.policies:FireAwarePolicy", catalog.ENTRY_POINT_GROUP),
             EntryPoint("broken", "no_such_module_xyz:make", catalog.ENTRY_POINT_GROUP),
             EntryPoint("greedy", "emberbench.policies:StayPolicy", catalog.ENTRY_POINT_GROUP),
             EntryPoint("constant", "emberbench.io.versions:SIMULATOR_VERSION", catalog.ENTRY_POINT_GROUP))
    result = runner.invoke(app, ["policies"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "cautious    Shortest path that avoids burning cells" in out
    assert "(entry point emberbench.policies:FireAwarePolicy)" in out
    assert "broken      cannot be loaded: ModuleNotFoundError" in out and "[unusable]" in out
    assert "hidden: the name 'greedy' is already taken" in out
    assert "constant    not callable" in out


def test_unknown_policy_error_lists_builtins_and_installed_names(monkeypatch) -> None:  # noqa: ANN001
    """Issue 16: an unknown policy's error now names every built-in and every installed entry point."""
    with pytest.raises(PolicyError) as info:
        resolve_policy("gredy")
    assert "(fire-aware, greedy, random, stay)" in str(info.value) and "(none installed)" in str(info.value)
    _plugins(monkeypatch, EntryPoint("cautious", "x:y", catalog.ENTRY_POINT_GROUP),
             EntryPoint("bold", "x:z", catalog.ENTRY_POINT_GROUP))
    with pytest.raises(PolicyError, match=r"entry point \(bold, cautious\).*`emberbench policies` lists them"):
        resolve_policy("gredy")


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish", "powershell"])
def test_completion_prints_a_script_for_each_shell(shell) -> None:  # noqa: ANN001
    """`completion SHELL` prints a script that calls emberbench back with _EMBERBENCH_COMPLETE."""
    result = runner.invoke(app, ["completion", shell])
    assert result.exit_code == 0 and "_EMBERBENCH_COMPLETE" in result.output and "emberbench" in result.output


def test_completion_refuses_an_unknown_shell() -> None:
    """An unknown shell is a usage error (exit 2) that names the choices."""
    result = runner.invoke(app, ["completion", "tcsh"])
    assert result.exit_code == 2 and "bash" in result.output


def _complete(words: str, cword: int) -> list[str]:
    env = {"_EMBERBENCH_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
    result = runner.invoke(app, [], env=env, prog_name="emberbench")
    assert result.exit_code == 0, result.output
    return result.output.split()


@pytest.mark.parametrize(("words", "cword", "expected"), [
    ("emberbench st", 1, {"stats", "store"}),
    ("emberbench stats --groups ", 3, {"overall", "scenario", "family", "all"}),
    ("emberbench completion ", 2, {"bash", "zsh", "fish", "powershell"}),
    ("emberbench -", 1, {"--version", "--verbose", "-v", "--quiet", "-q", "--help"}),
])
def test_completion_answers_a_shell_request(words, cword, expected) -> None:  # noqa: ANN001
    """A bash completion request is answered with the matching commands, options or choices."""
    assert set(_complete(words, cword)) == expected


def test_the_installed_command_answers_completion_requests() -> None:
    """The console script itself answers the request the bash script sends (as a shell would call it)."""
    env = {**os.environ, "_EMBERBENCH_COMPLETE": "complete_bash", "COMP_WORDS": "emberbench po", "COMP_CWORD": "1"}
    out = subprocess.run([BIN], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.split() == ["policies"], out.stderr


@pytest.mark.parametrize(("verbose", "quiet", "level"), [
    (0, False, verbosity.Verbosity.NORMAL),
    (0, True, verbosity.Verbosity.QUIET),
    (1, False, verbosity.Verbosity.VERBOSE),
    (2, False, verbosity.Verbosity.DEBUG),
    (5, False, verbosity.Verbosity.DEBUG),
])
def test_verbosity_levels(verbose, quiet, level) -> None:  # noqa: ANN001
    """-v counts up to debug, -q is quiet, and the two together are refused."""
    assert verbosity.level_of(verbose, quiet) is level
    with pytest.raises(ValueError, match="contradict"):
        verbosity.level_of(1, True)


def test_quiet_turns_progress_off_and_the_next_invocation_resets_it() -> None:
    """-q switches progress bars off for its invocation only."""
    assert runner.invoke(app, ["-q", "suite", "list"]).exit_code == 0
    assert not verbosity.show_progress()
    assert runner.invoke(app, ["suite", "list"]).exit_code == 0
    assert verbosity.show_progress() and verbosity.current() is verbosity.Verbosity.NORMAL


def test_quiet_and_verbose_together_are_a_usage_error() -> None:
    """`-q -v` exits 2 without running the command."""
    result = runner.invoke(app, ["-q", "-v", "suite", "list"])
    assert result.exit_code == 2 and "contradict" in result.output


@pytest.mark.parametrize(("args", "env", "traceback"), [
    ([], {}, False),
    (["-v"], {}, True),
    ([], {"EMBERBENCH_DEBUG": "1"}, True),
    ([], {"EMBERBENCH_DEBUG": "0"}, False),
])
def test_verbose_or_emberbench_debug_adds_the_traceback(args, env, traceback, monkeypatch) -> None:  # noqa: ANN001
    """A failure is one line; with -v or EMBERBENCH_DEBUG=1 its traceback comes first, the line still last."""
    monkeypatch.delenv("EMBERBENCH_DEBUG", raising=False)
    result = runner.invoke(app, [*args, "episode", "no-such-scenario"], env=env)
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert lines[-1] == "error: suite emberbench-v1-public 1.0.0 has no scenario 'no-such-scenario'"
    assert ("Traceback (most recent call last)" in result.output) is traceback
    assert (len(lines) == 1) is not traceback


def test_verbose_shows_info_messages(tmp_path) -> None:  # noqa: ANN001
    """-v lets INFO messages of the library through to stderr (here: where an agent log was saved)."""
    agent = tmp_path / "agent.py"
    agent.write_text("import json, sys\nfor line in sys.stdin:\n"
                     "    print(json.dumps({p['id']: 'stay' for p in json.loads(line)['people']}), flush=True)\n")
    args = ["episode", "v1-pub-01-single-exit-sparse", "--policy", f"cmd:{sys.executable} {agent}", "--agent-log",
            str(tmp_path / "logs")]
    assert "agent stderr saved to" in runner.invoke(app, ["-v", *args]).output
    assert "agent stderr saved to" not in runner.invoke(app, args).output


def _commands(group, path=()):  # noqa: ANN001, ANN202
    for name, command in sorted(group.commands.items()):
        yield (*path, name), command
        if hasattr(command, "commands"):
            yield from _commands(command, (*path, name))


def test_help_shows_no_value_type_for_flags() -> None:
    """Issue 16: help showed '<bool>' for flags that take no value; no command's help does now."""
    root = typer.main.get_command(app)
    flags = 0
    for path, command in [((), root), *_commands(root)]:
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, path
        assert "<bool>" not in result.output, (path, result.output)
        flags += sum(1 for p in command.params if getattr(p, "is_flag", False))
    assert flags >= 10  # --no-resume, --no-store, --apply, -q... each checked above


def test_flags_take_no_value() -> None:
    """A flag given a value is a usage error: flags are plain (`--no-resume`, never `--no-resume true`)."""
    result = runner.invoke(app, ["run", "--manifest", "m.json", "--policy", "greedy", "--model-id", "g", "--out",
                                 "o.json", "--no-resume", "true"])
    assert result.exit_code == 2 and "true" in result.output


def test_help_fits_80_columns_with_types_as_words(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 27 (defect 8): at 80 columns --help squeezed descriptions into a table column about 23 wide, with
    types such as `<list[str]>` and `<path>`. Now every command's help uses click's plain layout: no line passes
    80 columns (even on a wider terminal), descriptions start by column 34, and types are words (TEXT, PATH,
    [local|ray], TEXT...)."""
    import typer.testing

    root = typer.main.get_command(app)
    monkeypatch.setattr(typer.testing, "_get_command", lambda given: root)  # built once, not once per call
    described = 0
    for path, _ in [((), root), *_commands(root)]:
        for columns in ("80", "200"):
            result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": columns})
            assert result.exit_code == 0, path
            lines = result.output.splitlines()
            assert all(len(line) <= 80 for line in lines), (path, [line for line in lines if len(line) > 80])
            assert not any(mark in result.output for mark in ("<str>", "<path>", "<list[", "<int>", "<dir>", "│")), (
                path, result.output)
        for line in lines:
            option = re.match(r"^  (-\S.*?\S)  +(\S)", line)
            if option is not None:
                described += 1
                assert option.start(2) <= 34, (path, line)
    assert described >= 100
    run = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "80"}).output
    assert "--executor [local|ray]" in run and "--policy TEXT " in run
    assert "Usage: emberbench report [OPTIONS] RESULTS..." in runner.invoke(app, ["report", "--help"]).output


# -- what a new user types: a policy by file, typos, a command line without cmd: (issue 27, defect 7) -----------

MY_POLICY = '"""Everybody stays."""\n\n\ndef make():\n    return lambda obs: {p.id: "stay" for p in obs.people}\n'

# (name, arguments, exit status, what the output must say); run in a folder holding mypolicy.py
GUESSES = [
    ("module beside a file", ("episode", "v1-pub-01-single-exit-sparse", "--policy", "mypolicy:make"), 1,
     "mypolicy.py is in the current folder; use ./mypolicy.py:make, or add the folder to PYTHONPATH"),
    ("a file by its path", ("episode", "v1-pub-01-single-exit-sparse", "--policy", "./mypolicy.py:make"), 0,
     "policy=./mypolicy.py:make: evacuated=0"),
    ("a file without ./", ("episode", "v1-pub-01-single-exit-sparse", "--policy", "mypolicy.py:make"), 0,
     "policy=mypolicy.py:make: evacuated=0"),
    ("a missing file", ("episode", "v1-pub-01-single-exit-sparse", "--policy", "./nope.py:make"), 1,
     "policy './nope.py:make': ./nope.py: no such file"),
    ("a missing factory", ("episode", "v1-pub-01-single-exit-sparse", "--policy", "./mypolicy.py:build"), 1,
     "has no attribute 'build'"),
    ("a misspelt built-in", ("episode", "v1-pub-01-single-exit-sparse", "--policy", "gredy"), 1,
     "unknown policy 'gredy' (did you mean 'greedy'?)"),
    ("a command line without cmd:", ("episode", "v1-pub-01-single-exit-sparse", "--policy", "node toward.js"), 1,
     "(did you mean 'cmd:node toward.js', an external agent?)"),
    ("a misspelt command", ("stat", "a.json"), 2, "Did you mean 'stats'?"),
    ("a misspelt choice", ("stats", "a.json", "--groups", "scenarios"), 2,
     "'scenarios' is not one of overall, scenario, family, all; did you mean 'scenario'?"),
    ("a misspelt executor", ("run", "--manifest", "m.json", "--policy", "greedy", "--out", "o.json",
                             "--executor", "rey"), 2, "'rey' is not one of local, ray; did you mean 'ray'?"),
    ("a misspelt option", ("stats", "a.json", "--grops", "all"), 2, "--groups"),
]


@pytest.mark.parametrize(("name", "args", "code", "says"), GUESSES, ids=[g[0] for g in GUESSES])
def test_what_a_user_guesses_works_or_says_what_would(name: str, args: tuple[str, ...], code: int, says: str,
                                                     tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Issue 27 (defect 7): `--policy mypolicy:make` beside mypolicy.py failed with "No module named 'mypolicy'"
    and no hint, `./mypolicy.py:make` was refused, and `gredy`, `node toward.js` (without cmd:) and
    `--groups scenarios` got no "did you mean". Now a policy file is loaded by its path, and every such guess
    either works or is one line that names what would."""
    (tmp_path / "mypolicy.py").write_text(MY_POLICY)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, list(args))
    assert result.exit_code == code, result.output
    assert says in result.output, result.output
    if code:
        assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.output, result.stderr


def test_a_policy_file_runs_and_is_recorded_as_given(tmp_path, monkeypatch, suite) -> None:  # noqa: ANN001
    """`run --policy ./mypolicy.py:make` plays the file's factory; the run sidecar records the spec as given, and
    the policy code digest of a signed run covers exactly that file (rule python-module)."""
    import json as _json

    from emberbench.provenance import policy_code_digest
    from emberbench.provenance.code_digest import listing_digest
    from emberbench.results.manifest import EvaluationManifest, ManifestEntry, write_manifest

    (tmp_path / "mypolicy.py").write_text(MY_POLICY)
    monkeypatch.chdir(tmp_path)
    sid = "v1-pub-01-single-exit-sparse"
    write_manifest(EvaluationManifest(suite.id, suite.version, suite.hash,
                                      (ManifestEntry(0, sid, suite.scenario(sid).content_hash, 0),)), "m.json")
    result = runner.invoke(app, ["run", "--manifest", "m.json", "--policy", "./mypolicy.py:make", "--model-id",
                                 "mine", "--out", "o.json", "--no-store"])
    assert result.exit_code == 0, result.output
    assert _json.loads((tmp_path / "o.json.run").read_text())["policy"] == "./mypolicy.py:make"
    code = policy_code_digest("./mypolicy.py:make")
    assert code == listing_digest({"mypolicy.py": tmp_path / "mypolicy.py"}, "python-module", where="x")
    (tmp_path / "mypolicy.py").write_text(MY_POLICY + "# changed\n")
    assert policy_code_digest("./mypolicy.py:make").digest != code.digest
