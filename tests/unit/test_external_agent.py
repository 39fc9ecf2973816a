"""External agents (cmd: policies): the example agent end to end, and every failure mode."""

from __future__ import annotations

import os
import shutil
import sys

import pytest
from typer.testing import CliRunner

from emberbench.cli.main import app
from emberbench.records.episode import play_episode
from emberbench.errors import AgentError, PolicyError
from emberbench.results.manifest import EvaluationManifest, ManifestEntry
from emberbench.policies.spec import closing, resolve_policy
from emberbench.results.artifact import load_result
from emberbench.evaluation.runner import run_evaluation
from tests.conftest import ROOT
from tests.helpers import process_alive, wait_gone

EXAMPLE = ROOT / "docs" / "examples" / "agents" / "nearest_exit_agent.js"
NODE = shutil.which("node")
PY = sys.executable


def _manifest(suite, ids, seeds=(0,)):  # noqa: ANN001
    entries = []
    for sid in ids:
        sc = suite.scenario(sid)
        for seed in seeds:
            entries.append(ManifestEntry(len(entries), sid, sc.content_hash, seed))
    return EvaluationManifest(suite.id, suite.version, suite.hash, tuple(entries))


@pytest.mark.skipif(NODE is None, reason="the example agent is JavaScript and needs node on PATH")
def test_example_agent_end_to_end(tmp_path, suite) -> None:  # noqa: ANN001
    """The JavaScript example agent plays a run that verifies, and evacuates people."""
    m = _manifest(suite, ["v1-pub-01-single-exit-sparse", "v1-pub-09-threatened-nearest-exit"])
    out = tmp_path / "js.json"
    run_evaluation(m, suite, f"cmd:{NODE} {EXAMPLE}", "js-agent", out)
    result = load_result(out, suite)
    assert len(result.episodes) == 2
    assert sum(e.metrics.count("evacuated") for e in result.episodes) > 0


def test_python_agent_with_the_protocol_matches_in_process_policy(suite) -> None:  # noqa: ANN001
    """An agent that answers 'stay' over the pipe gives the same record as the in-process stay policy."""
    code = ("import sys, json\n"
            "for line in sys.stdin: print(json.dumps({p['id']: 'stay' for p in json.loads(line)['people']}), flush=True)")
    sc = suite.scenario("v1-pub-01-single-exit-sparse")
    with closing(resolve_policy(f"cmd:{PY} -c \"{code}\"")()) as agent:
        over_pipe, _ = play_episode(sc, 2, agent)
    in_process, _ = play_episode(sc, 2, resolve_policy("stay")())
    assert over_pipe.canonical_bytes() == in_process.canonical_bytes()


FAILURES = [
    ("crash", "import sys\nsys.stdin.readline()\nsys.stderr.write('boom\\n')\nsys.exit(3)",
     "exited with status 3 at step 1; stderr (last 1 line): boom"),
    ("silent", "import sys, time\nsys.stdin.readline()\ntime.sleep(30)",
     "gave no answer within 0.5 s at step 1; no stderr output"),
    ("malformed", "import sys\nsys.stdin.readline()\nprint('not json', flush=True)\nsys.stdin.readline()",
     "answered step 1 with malformed JSON"),
    ("not an object", "import sys\nsys.stdin.readline()\nprint('[1, 2]', flush=True)\nsys.stdin.readline()",
     "answered step 1 with a list, not a JSON object"),
    ("exits early", "pass", "exited with status 0 at step 1"),
]


@pytest.mark.parametrize(("name", "code", "message"), FAILURES, ids=[f[0] for f in FAILURES])
def test_agent_failures_stop_the_run_and_keep_completed_episodes(tmp_path, suite, name, code, message) -> None:  # noqa: ANN001
    """A crashed, silent or malformed agent stops the run with a clear error; earlier episodes stay."""
    script = tmp_path / "agent.py"
    script.write_text(code)
    good = ("import sys, json\n"
            "for line in sys.stdin: print(json.dumps({p['id']: 'stay' for p in json.loads(line)['people']}), flush=True)")
    (tmp_path / "good.py").write_text(good)
    m = _manifest(suite, ["v1-pub-01-single-exit-sparse"], seeds=(0, 1))
    calls = [0]
    good_factory = resolve_policy(f"cmd:{PY} {tmp_path / 'good.py'}")
    bad_factory = resolve_policy(f"cmd:{PY} {script}", agent_timeout=0.5)

    def factory():  # noqa: ANN202
        calls[0] += 1
        return good_factory() if calls[0] == 1 else bad_factory()

    out = tmp_path / "r.json"
    with pytest.raises(AgentError) as info:
        run_evaluation(m, suite, factory, "agent", out)
    assert message in str(info.value)
    assert str(info.value).startswith("scenario v1-pub-01-single-exit-sparse, seed 1: external agent")
    assert (info.value.scenario_id, info.value.seed) == ("v1-pub-01-single-exit-sparse", 1)
    assert [e.index for e in load_result(out, suite).episodes] == [0]


def test_missing_command_and_bad_specs() -> None:
    """An agent that cannot start, an empty command and a zero timeout are clear errors."""
    with pytest.raises(AgentError, match="cannot start external agent"):
        resolve_policy("cmd:/nonexistent/agent")()(None)
    with pytest.raises(AgentError, match="needs a command line"):
        resolve_policy("cmd:   ")
    with pytest.raises(AgentError, match="timeout must be positive"):
        resolve_policy("cmd:true", agent_timeout=0)


@pytest.mark.parametrize(("spec", "message"), [
    ("nope", "unknown policy 'nope'"),
    ("no_such_module_xyz:factory", "cannot import module 'no_such_module_xyz'"),
    ("emberbench.policies:Missing", "has no attribute 'Missing'"),
    ("emberbench.io.versions:SIMULATOR_VERSION", "is not callable"),
    ("", "non-empty string"),
])
def test_policy_spec_errors(spec, message) -> None:  # noqa: ANN001
    """Bad policy specs raise PolicyError with what was wrong."""
    with pytest.raises(PolicyError, match=message):
        resolve_policy(spec)


def test_import_path_and_entry_point_specs(monkeypatch) -> None:  # noqa: ANN001
    """module:factory resolves to the attribute; a registered entry point resolves by name."""
    from importlib.metadata import EntryPoint

    from emberbench.policies import GreedyPolicy
    from emberbench.policies import spec as spec_module

    assert resolve_policy("emberbench.policies:GreedyPolicy") is GreedyPolicy
    ep = EntryPoint(name="my-plugin", value="emberbench.policies:StayPolicy", group="emberbench.policies")
    monkeypatch.setattr(spec_module, "entry_points", lambda group: [ep] if group == "emberbench.policies" else [])
    from emberbench.policies import StayPolicy

    assert resolve_policy("my-plugin") is StayPolicy


def test_agent_that_closes_its_output_but_keeps_running_is_stopped(tmp_path, suite) -> None:  # noqa: ANN001
    """An agent that closes stdout and lingers is stopped within the timeout, with a clear error."""
    script = tmp_path / "linger.py"
    script.write_text("import os, sys, time\nsys.stdin.readline()\nos.close(1)\ntime.sleep(30)")
    sc = suite.scenario("v1-pub-01-single-exit-sparse")
    with pytest.raises(AgentError, match="closed its output at step 1"):
        with closing(resolve_policy(f"cmd:{PY} {script}", agent_timeout=0.5)()) as agent:
            play_episode(sc, 0, agent)


def _agent(tmp_path, code: str, name: str = "agent.py") -> str:  # noqa: ANN001
    script = tmp_path / name
    script.write_text(code)
    return f"cmd:{PY} {script}"


def test_error_quotes_the_last_20_stderr_lines_not_only_the_last(tmp_path, suite) -> None:  # noqa: ANN001
    """Issue 16: a crash quoted only the last stderr line; now the last 20 non-blank lines, oldest first."""
    spec = _agent(tmp_path, "import sys\nsys.stdin.readline()\n"
                            "for i in range(30):\n    sys.stderr.write(f'line {i}\\n\\n')\n"
                            "sys.stderr.write('Traceback: ValueError: the real cause\\nruntime v1.2\\n')\nsys.exit(1)")
    sc = suite.scenario("v1-pub-01-single-exit-sparse")
    with pytest.raises(AgentError) as info, closing(resolve_policy(spec)()) as agent:
        play_episode(sc, 5, agent)
    tail = info.value.stderr_tail
    assert len(tail) == 20 and tail[0] == "line 12" and tail[-2:] == ("Traceback: ValueError: the real cause",
                                                                      "runtime v1.2")
    message = str(info.value)
    assert message.startswith("scenario v1-pub-01-single-exit-sparse, seed 5: external agent")
    assert "stderr (last 20 lines): line 12 | line 13" in message and message.endswith("the real cause | runtime v1.2")
    assert "\n" not in message


def test_timeout_keeps_the_stderr_tail(tmp_path, suite) -> None:  # noqa: ANN001
    """Issue 16: a timeout dropped the agent's stderr; now the error quotes what it wrote before it was stopped."""
    spec = _agent(tmp_path, "import sys, time\nsys.stdin.readline()\n"
                            "sys.stderr.write('loading weights\\nstill loading\\n'); sys.stderr.flush()\ntime.sleep(30)")
    sc = suite.scenario("v1-pub-01-single-exit-sparse")
    with pytest.raises(AgentError) as info, closing(resolve_policy(spec, agent_timeout=0.5)()) as agent:
        play_episode(sc, 0, agent)
    assert "gave no answer within 0.5 s at step 1; stderr (last 2 lines): loading weights | still loading" in str(
        info.value)
    assert info.value.stderr_tail == ("loading weights", "still loading")


def test_stderr_tail_is_bounded_and_sanitized(tmp_path) -> None:  # noqa: ANN001
    """Long lines are cut at 300 characters, control characters shown as '?', blank lines skipped."""
    from emberbench.policies.external import read_tail

    path = tmp_path / "err"
    path.write_bytes(b"x" * 1000 + b"\n\n   \nred \x1b[31mtext\x07\n")
    with path.open("rb") as handle:
        tail = read_tail(handle.fileno())
    assert tail == ("x" * 297 + "...", "red ?[31mtext?")


@pytest.mark.skipif(NODE is None, reason="needs node on PATH")
def test_node_crash_names_the_exception(tmp_path, suite) -> None:  # noqa: ANN001
    """Issue 16: a Node agent's crash reported only 'Node.js v20...'; the error now shows the thrown exception."""
    script = tmp_path / "crash.js"
    script.write_text('require("readline").createInterface({input: process.stdin}).on("line", () => {\n'
                      '  throw new Error("boom: cannot plan");\n});\n')
    sc = suite.scenario("v1-pub-01-single-exit-sparse")
    with pytest.raises(AgentError) as info, closing(resolve_policy(f"cmd:{NODE} {script}")()) as agent:
        play_episode(sc, 0, agent)
    assert "Error: boom: cannot plan" in str(info.value) and "Node.js v" in str(info.value)


def test_agent_log_saves_each_episodes_stderr_under_its_scenario_and_seed(tmp_path, suite) -> None:  # noqa: ANN001
    """With a log folder every episode's whole stderr is saved to SCENARIO.seed-SEED.stderr.log, failures too."""
    spec = _agent(tmp_path, "import sys, json\nsys.stderr.write('hello from the agent\\n')\n"
                            "for line in sys.stdin:\n"
                            "    obs = json.loads(line)\n"
                            "    sys.stderr.write(f\"step {obs['step']}\\n\")\n"
                            "    print(json.dumps({p['id']: 'stay' for p in obs['people']}), flush=True)\n")
    logs = tmp_path / "logs" / "nested"
    m = _manifest(suite, ["v1-pub-01-single-exit-sparse"], seeds=(0, 7))
    run_evaluation(m, suite, resolve_policy(spec, agent_log=str(logs)), "agent", tmp_path / "r.json")
    names = sorted(p.name for p in logs.iterdir())
    assert names == ["v1-pub-01-single-exit-sparse.seed-0.stderr.log", "v1-pub-01-single-exit-sparse.seed-7.stderr.log"]
    steps = load_result(tmp_path / "r.json", suite).episodes[0].record.steps
    expected = "hello from the agent\n" + "".join(f"step {t}\n" for t in range(steps))
    assert (logs / names[0]).read_text() == expected
    crash = _agent(tmp_path, "import sys\nsys.stderr.write('dying\\n')\nsys.exit(2)", "crash.py")
    with pytest.raises(AgentError), closing(resolve_policy(crash, agent_log=str(logs))()) as agent:
        play_episode(suite.scenario("v1-pub-04-dead-end-corridor"), 3, agent)
    assert (logs / "v1-pub-04-dead-end-corridor.seed-3.stderr.log").read_text() == "dying\n"


def test_agent_log_refuses_a_file_and_an_unwritable_target(tmp_path, suite) -> None:  # noqa: ANN001
    """A log folder that is a file is refused at once; a log path taken by a folder fails with AgentError."""
    (tmp_path / "file").write_text("x")
    with pytest.raises(AgentError, match="exists and is not a folder"):
        resolve_policy("cmd:true", agent_log=str(tmp_path / "file"))
    logs = tmp_path / "logs"
    (logs / "v1-pub-01-single-exit-sparse.seed-0.stderr.log").mkdir(parents=True)
    spec = _agent(tmp_path, "import sys, json\nfor line in sys.stdin:\n"
                            "    print(json.dumps({p['id']: 'stay' for p in json.loads(line)['people']}), flush=True)\n")
    with pytest.raises(AgentError, match="cannot save the agent's stderr log"):
        with closing(resolve_policy(spec, agent_log=str(logs))()) as agent:
            play_episode(suite.scenario("v1-pub-01-single-exit-sparse"), 0, agent)


def test_agent_error_keeps_its_data_across_processes() -> None:
    """AgentError pickles with its tail, scenario and seed (Ray workers send it to the coordinator)."""
    import pickle

    error = AgentError("external agent 'x' exited", stderr_tail=("a", "b")).in_episode("v1-pub-01-single-exit-sparse", 3)
    again = pickle.loads(pickle.dumps(error))
    assert str(again) == str(error) == "scenario v1-pub-01-single-exit-sparse, seed 3: external agent 'x' exited"
    assert (again.stderr_tail, again.scenario_id, again.seed) == (("a", "b"), "v1-pub-01-single-exit-sparse", 3)
    assert again.in_episode("other", 4) is again  # the episode is named once


def test_the_agent_process_never_sees_the_scenario_or_seed(tmp_path, suite) -> None:  # noqa: ANN001
    """Labelling the episode stays on the evaluator's side: the agent's environment and input lack it."""
    spec = _agent(tmp_path, "import sys, os, json\nsys.stderr.write(repr(sorted(os.environ.items())) + repr(sys.argv))\n"
                            "for line in sys.stdin:\n    sys.stderr.write(line)\n"
                            "    print(json.dumps({p['id']: 'stay' for p in json.loads(line)['people']}), flush=True)\n")
    logs = tmp_path / "logs"
    with closing(resolve_policy(spec, agent_log=str(logs))()) as agent:
        play_episode(suite.scenario("v1-pub-01-single-exit-sparse"), 987654321, agent)
    seen = (logs / "v1-pub-01-single-exit-sparse.seed-987654321.stderr.log").read_text()
    assert "987654321" not in seen and "v1-pub-01" not in seen and '"step":0' in seen


FORKING = ("import json, subprocess, sys\n"
           "helper = subprocess.Popen(['sleep', '300'])\n"
           "open(sys.argv[1], 'w').write(str(helper.pid))\n"
           "for line in sys.stdin:\n"
           "    print(json.dumps({p['id']: 'stay' for p in json.loads(line)['people']}), flush=True)\n")


@pytest.mark.parametrize("ending", ["finished", "timed out", "crashed"])
def test_an_agent_and_everything_it_forked_end_with_the_episode(tmp_path, suite, ending) -> None:  # noqa: ANN001
    """Issue 12 (defect 7): a cmd: agent runs in its own process group and the whole group is ended with the
    episode, however the episode ends: a helper it forked (`sleep 300`) does not survive it."""
    code = FORKING
    if ending == "timed out":
        code = code.replace("for line in sys.stdin:", "import time\nsys.stdin.readline()\ntime.sleep(60)\nfor line in []:")
    elif ending == "crashed":
        code = code.replace("for line in sys.stdin:", "sys.stdin.readline()\nsys.exit(3)\nfor line in []:")
    script, pid_file = tmp_path / "agent.py", tmp_path / "helper.pid"
    script.write_text(code)
    sc = suite.scenario("v1-pub-01-single-exit-sparse")
    agent = resolve_policy(f"cmd:{PY} {script} {pid_file}", agent_timeout=1.0)()
    try:
        with closing(agent):
            play_episode(sc, 0, agent)
    except AgentError:
        assert ending != "finished"
    helper = int(pid_file.read_text())
    assert wait_gone(helper, 5.0)


@pytest.mark.parametrize(("reply", "message"), [
    ("[" * 50_000 + "]" * 50_000, "nests deeper than 64 levels"),
    ('{"p001": "stay", "p001": "north"}', "duplicate key 'p001'"),
    ('{"p001": NaN}', "JSON constant NaN"),
    ('{"p001": 1e999}', "out of range"),
])
def test_hostile_replies_are_one_agent_error(tmp_path, suite, reply: str, message: str) -> None:  # noqa: ANN001
    """Issue 12 (defect 3): an agent reply is input under the input policy: a depth bomb, duplicate keys, NaN
    or an infinite number are one AgentError naming the step, never a RecursionError."""
    script = tmp_path / "agent.py"
    script.write_text(f"import sys\nsys.stdin.readline()\nprint({reply!r}, flush=True)\nsys.stdin.readline()\n")
    sc = suite.scenario("v1-pub-01-single-exit-sparse")
    with pytest.raises(AgentError, match=f"answered step 1 with malformed JSON.*{message}"):
        with closing(resolve_policy(f"cmd:{PY} {script}")()) as agent:
            play_episode(sc, 0, agent)


def test_a_reply_line_over_its_cap_is_refused(tmp_path, suite, monkeypatch) -> None:  # noqa: ANN001
    """A reply longer than the agent-reply cap is refused without waiting for its end."""
    from emberbench.policies import external

    monkeypatch.setattr(external, "_MAX_LINE", 1000)
    script = tmp_path / "agent.py"
    script.write_text("import sys, time\nsys.stdin.readline()\nsys.stdout.write('x' * 5000)\nsys.stdout.flush()\n"
                      "time.sleep(30)\n")
    sc = suite.scenario("v1-pub-01-single-exit-sparse")
    with pytest.raises(AgentError, match="sent a line longer than the cap of 1000 bytes at step 1"):
        with closing(resolve_policy(f"cmd:{PY} {script}", agent_timeout=10)()) as agent:
            play_episode(sc, 0, agent)


@pytest.mark.parametrize(("command", "timeout", "message"), [
    ('python3 "unclosed', 30.0, "is not a valid command line: No closing quotation"),
    ("true", float("nan"), "timeout must be positive, finite"),
    ("true", float("inf"), "timeout must be positive, finite"),
    ("true", 1e308, "timeout must be positive, finite"),
])
def test_bad_command_lines_and_timeouts_are_agent_errors(command: str, timeout: float, message: str) -> None:
    """Issue 12 (defect 3): an unclosed quote, a NaN, infinite or huge timeout are AgentErrors, not a
    ValueError or OverflowError traceback."""
    with pytest.raises(AgentError, match=message):
        resolve_policy(f"cmd:{command}", agent_timeout=timeout)


DOUBLE_FORK = ("import json, os, sys\n"
               "read, write = os.pipe()\n"
               "if os.fork() == 0:\n"
               "    os.setsid()  # a session (and group) of its own\n"
               "    child = os.fork()\n"
               "    if child == 0:\n"
               "        os.execvp('sleep', ['sleep', '300'])\n"
               "    os.write(write, str(child).encode())\n"
               "    os._exit(0)  # the grandchild is now an orphan: no longer the agent's descendant\n"
               "os.close(write)\n"
               "open(sys.argv[1], 'w').write(os.read(read, 100).decode())\n"
               "for line in sys.stdin:\n"
               "    print(json.dumps({p['id']: 'stay' for p in json.loads(line)['people']}), flush=True)\n")


@pytest.mark.parametrize("ending", ["finished", "timed out", "crashed"])
def test_a_process_the_agent_detached_with_setsid_ends_with_the_episode(tmp_path, suite, ending) -> None:  # noqa: ANN001
    """Issue 22 (defect 7): a grandchild the agent detached (fork, setsid, fork, exit: a daemon's double fork) left
    the agent's process group and outlived the episode; it is now found by the mark it inherited and ended too."""
    code = DOUBLE_FORK
    if ending == "timed out":
        code = code.replace("for line in sys.stdin:", "import time\nsys.stdin.readline()\ntime.sleep(60)\nfor line in []:")
    elif ending == "crashed":
        code = code.replace("for line in sys.stdin:", "sys.stdin.readline()\nsys.exit(3)\nfor line in []:")
    script, pid_file = tmp_path / "agent.py", tmp_path / "grandchild.pid"
    script.write_text(code)
    agent = resolve_policy(f"cmd:{PY} {script} {pid_file}", agent_timeout=1.0)()
    try:
        with closing(agent):
            play_episode(suite.scenario("v1-pub-01-single-exit-sparse"), 0, agent)
    except AgentError:
        assert ending != "finished"
    grandchild = int(pid_file.read_text())
    try:
        assert wait_gone(grandchild, 5.0)
    finally:
        if process_alive(grandchild):
            os.kill(grandchild, 9)


def test_a_log_folder_that_is_a_link_is_refused_before_anything_runs(tmp_path, suite) -> None:  # noqa: ANN001
    """Issue 22 (defect 7): `--agent-log LINK` followed the link and the logs landed in the folder it points to;
    a log folder that is a symbolic link is now refused when the policy is made (and again before a save)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "logs").symlink_to(outside)
    with pytest.raises(AgentError, match="agent log folder .*logs is a symbolic link"):
        resolve_policy("cmd:true", agent_log=str(tmp_path / "logs"))
    result = CliRunner().invoke(app, ["episode", "v1-pub-01-single-exit-sparse", "--policy", "cmd:true",
                                      "--agent-log", str(tmp_path / "logs")])
    assert result.exit_code == 1 and "is a symbolic link" in result.stderr and len(result.stderr.splitlines()) == 1
    assert list(outside.iterdir()) == []


def _fifo(path) -> None:  # noqa: ANN001
    os.mkfifo(path)


def _link(path) -> None:  # noqa: ANN001
    path.symlink_to(path.parent / "elsewhere.log")


@pytest.mark.parametrize("make", [_fifo, _link], ids=["fifo", "link"])
def test_a_log_file_that_cannot_be_written_stops_the_episode_before_the_agent_starts(tmp_path, suite, make) -> None:  # noqa: ANN001
    """Issue 22 (defect 7): a log path that is a FIFO or a link was refused only when the log was saved, after
    the whole episode had been played; it is now refused before the agent process starts."""
    logs = tmp_path / "logs"
    logs.mkdir()
    make(logs / "v1-pub-01-single-exit-sparse.seed-0.stderr.log")
    started = tmp_path / "started"
    spec = _agent(tmp_path, f"open({str(started)!r}, 'w').close()\nimport sys, json\nfor line in sys.stdin:\n"
                            "    print(json.dumps({p['id']: 'stay' for p in json.loads(line)['people']}), flush=True)\n")
    with pytest.raises(AgentError, match="cannot save the agent's stderr log: .*seed-0.stderr.log is a"), \
            closing(resolve_policy(spec, agent_log=str(logs))()) as agent:
        play_episode(suite.scenario("v1-pub-01-single-exit-sparse"), 0, agent)
    assert not started.exists()
    assert not (tmp_path / "logs" / "elsewhere.log").exists()
