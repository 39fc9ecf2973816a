"""Start-up of the command line: a command builds only its own command module, and `runs ls` imports only what it uses.

Importing every command module (the plot and view modules bring numpy and
the viewer) used to cost `emberbench runs ls` more than listing 10,000 runs.
The console script now registers the one module the command line names;
these tests hold the table of which module registers which command to what
the modules do, show that a command's help is the same either way, and look
at ``sys.modules`` of a real `runs ls` process (no timing anywhere).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from emberbench.cli import main as cli_main
from emberbench.evaluation.run_info import RunInfo, write_run_info
from emberbench.runs.index import reindex
from emberbench.store import journal_name
from tests.conftest import ROOT

runner = CliRunner()


def _top_level(app) -> set[str]:  # noqa: ANN001
    return {c.name for c in app.registered_commands} | {g.name for g in app.registered_groups}


def test_the_command_table_is_what_each_module_registers() -> None:
    """Each module registers exactly the commands the table gives it; together, every command of the full app."""
    seen: set[str] = set()
    for module, commands in cli_main._COMMAND_MODULES.items():
        assert _top_level(cli_main.build_app([module])) == set(commands), module
        assert not seen & set(commands)
        seen |= set(commands)
    assert _top_level(cli_main.app) == seen


@pytest.mark.parametrize(("args", "module"), [
    (["runs", "ls", "--store", "s"], "emberbench.cli.runs_cmd"),
    (["-v", "runs", "ls"], "emberbench.cli.runs_cmd"),
    (["-vvq", "--verbose", "store", "fsck"], "emberbench.cli.store_cmd"),
    (["grouped-rates", "--help"], "emberbench.cli.grouped_rates_cmd"),
    (["manifest", "build"], "emberbench.cli.eval_cmd"),
    (["submit", "--", "run"], "emberbench.cli.cluster_cmd"),
    ([], None),  # the root's help
    (["--help"], None),
    (["--version", "runs"], None),
    (["-x", "runs"], None),  # an unknown root option: the root says so
    (["runz", "ls"], None),  # no such command: the suggestion needs every name
    (["-"], None),
])
def test_the_command_line_names_the_module_it_needs(args, module, monkeypatch) -> None:  # noqa: ANN001
    """The first word after the root's flags picks the module; anything else needs them all."""
    monkeypatch.delenv("_EMBERBENCH_COMPLETE", raising=False)
    assert cli_main.command_module(args) == module


def test_shell_completion_builds_every_command(monkeypatch) -> None:  # noqa: ANN001
    """A completion request (the shell calls back with _EMBERBENCH_COMPLETE set) completes every command."""
    monkeypatch.setenv("_EMBERBENCH_COMPLETE", "bash_complete")
    assert cli_main.command_module(["runs", "ls"]) is None


@pytest.mark.parametrize("command", sorted(cli_main._MODULE_OF))
def test_a_command_has_the_same_help_with_only_its_module(command: str) -> None:
    """`emberbench COMMAND --help` reads the same from the app of its module alone as from the full app."""
    alone = cli_main.build_app([cli_main._MODULE_OF[command]])
    full = runner.invoke(cli_main.app, [command, "--help"])
    assert full.exit_code == 0, full.output
    assert runner.invoke(alone, [command, "--help"]).output == full.output


HEAVY = ("numpy", "ray", "rich", "pandas", "pyarrow", "matplotlib", "cryptography", "boto3", "s3transfer",
         "botocore", "emberbench.viewer", "emberbench.statistics", "emberbench.sim.simulator")
"""What `runs ls` has no use for (botocore: on a local store)."""

_DRIVER = """
import atexit, json, sys
out, heavy = sys.argv[1], tuple(json.loads(sys.argv[2]))
def report():
    import gc
    modules = sorted(m for m in sys.modules if m in heavy or m.startswith(tuple(h + "." for h in heavy)))
    with open(out, "w") as f:
        json.dump({"modules": modules, "frozen": gc.get_freeze_count()}, f)
atexit.register(report)
sys.argv = ["emberbench", *sys.argv[3:]]
from emberbench.cli.entry import main
main()
"""


def _process(tmp_path: Path, *args: str) -> dict:
    """What a new `emberbench ARGS` process had as it ended (it must succeed): ``modules``, the heavy ones it
    imported, and ``frozen``, the objects left to the end of the process (gc's permanent generation)."""
    out = tmp_path / "process.json"
    done = subprocess.run([sys.executable, "-c", _DRIVER, str(out), json.dumps(HEAVY), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


def _modules_of(tmp_path: Path, *args: str) -> list[str]:
    return _process(tmp_path, *args)["modules"]


def _fill(locator: str, n: int = 3) -> None:
    """A store with ``n`` runs, its catalog index, and one change after it (a ref log tail to apply)."""
    from emberbench.evaluation.store_runner import open_store

    st = open_store(locator)
    infos = [RunInfo(run=journal_name("ab" * 32, f"m{i}"), model_id=f"m{i}", policy="greedy", manifest_hash="ab" * 32,
                     suite_id="emberbench-v1-public", suite_version="1.0.0", suite_hash="cd" * 32,
                     emberbench_version="0.2.0", python_version="3.11.7", ray_version=None, host="h", user="u",
                     started="2026-01-02T12:00:00Z", ended=None, episodes_done=1, episodes_scheduled=4,
                     state="complete") for i in range(n)]
    for info in infos:
        write_run_info(st, info)
    reindex(st)
    write_run_info(st, infos[0].replace(episodes_done=2))
    st.close()


def test_runs_ls_imports_neither_numpy_nor_the_viewer_nor_boto3_on_a_local_store(tmp_path: Path) -> None:
    """A `runs ls` process on a local store imports none of the heavy packages (it used to import numpy, the
    viewer and rich while registering every command)."""
    _fill(str(tmp_path / "s"))
    assert _modules_of(tmp_path, "runs", "ls", "--store", str(tmp_path / "s")) == []
    assert _modules_of(tmp_path, "runs", "ls", "--json", "--store", str(tmp_path / "s")) == []


def test_runs_ls_on_s3_imports_botocore_only(tmp_path: Path, s3_locator: str) -> None:
    """On S3, `runs ls` builds botocore's client without boto3's session layer (and s3transfer)."""
    _fill(s3_locator)
    found = _modules_of(tmp_path, "runs", "ls", "--store", s3_locator)
    assert "botocore" in found and [m for m in found if not m.startswith("botocore")] == []


def test_a_command_leaves_what_it_holds_to_the_end_of_the_process(tmp_path: Path) -> None:
    """After the command, its objects are frozen (gc.freeze): the interpreter's shutdown collections, which walked
    them all several times (about 0.3 s after `runs ls` had printed everything), skip them; a failing command too."""
    _fill(str(tmp_path / "s"))
    assert _process(tmp_path, "runs", "ls", "--store", str(tmp_path / "s"))["frozen"] > 10_000
    out = tmp_path / "failed.json"
    done = subprocess.run([sys.executable, "-c", _DRIVER, str(out), "[]", "runs", "show", "ffff", "--store",
                           str(tmp_path / "s")], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1 and done.stderr.startswith("error: no run")
    assert json.loads(out.read_text())["frozen"] > 10_000
