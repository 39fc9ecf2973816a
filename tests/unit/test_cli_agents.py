"""--agent-log on `run` and `episode`, and one-line agent errors that name the episode."""

from __future__ import annotations

import sys

from typer.testing import CliRunner

from emberbench.cli.main import app
from emberbench.results.manifest import EvaluationManifest, ManifestEntry, write_manifest

runner = CliRunner()

STAY_AGENT = ("import json, sys\nsys.stderr.write('agent up\\n')\nfor line in sys.stdin:\n"
              "    print(json.dumps({p['id']: 'stay' for p in json.loads(line)['people']}), flush=True)\n")


def test_episode_agent_log_writes_one_file_named_by_scenario_and_seed(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """`episode --agent-log DIR` saves the agent's stderr as DIR/SCENARIO.seed-SEED.stderr.log (relative DIR too)."""
    (tmp_path / "agent.py").write_text(STAY_AGENT)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["episode", "v1-pub-01-single-exit-sparse", "--seed", "2", "--policy",
                                 f"cmd:{sys.executable} agent.py", "--agent-log", "logs"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "logs" / "v1-pub-01-single-exit-sparse.seed-2.stderr.log").read_text() == "agent up\n"


def test_run_agent_log_and_one_line_agent_error(tmp_path, suite) -> None:  # noqa: ANN001
    """`run --agent-log` logs every episode; a crashing agent gives one error line naming scenario and seed."""
    (tmp_path / "agent.py").write_text(STAY_AGENT)
    (tmp_path / "crash.py").write_text("import sys\nsys.stdin.readline()\nsys.stderr.write('oops\\n')\nsys.exit(1)")
    sc = suite.scenario("v1-pub-04-dead-end-corridor")
    manifest = tmp_path / "m.json"
    write_manifest(EvaluationManifest(suite.id, suite.version, suite.hash,
                                      (ManifestEntry(0, sc.id, sc.content_hash, 5),
                                       ManifestEntry(1, sc.id, sc.content_hash, 6))), manifest)
    common = ["run", "--manifest", str(manifest), "--executor", "local", "--no-store", "--agent-log",
              str(tmp_path / "logs")]
    ok = runner.invoke(app, [*common, "--policy", f"cmd:{sys.executable} {tmp_path / 'agent.py'}", "--model-id",
                             "a", "--out", str(tmp_path / "a.json")])
    assert ok.exit_code == 0, ok.output
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == [
        "v1-pub-04-dead-end-corridor.seed-5.stderr.log", "v1-pub-04-dead-end-corridor.seed-6.stderr.log"]
    bad = runner.invoke(app, [*common, "--policy", f"cmd:{sys.executable} {tmp_path / 'crash.py'}", "--model-id",
                              "b", "--out", str(tmp_path / "b.json")])
    lines = [line for line in bad.output.splitlines() if line.strip()]
    assert bad.exit_code == 1 and len(lines) == 1, bad.output
    assert lines[0].startswith("error: scenario v1-pub-04-dead-end-corridor, seed 5: external agent")
    assert lines[0].endswith("exited with status 1 at step 1; stderr (last 1 line): oops")
