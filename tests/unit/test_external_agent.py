"""External agents (cmd: policies): the example agent end to end, and every failure mode."""

from __future__ import annotations

import shutil
import sys

import pytest

from emberbench.episode import play_episode
from emberbench.errors import AgentError, PolicyError
from emberbench.manifest import EvaluationManifest, ManifestEntry
from emberbench.policies.spec import closing, resolve_policy
from emberbench.results import load_result
from emberbench.runner import run_evaluation
from tests.conftest import ROOT

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
     "exited with status 3 at step 1; stderr: boom"),
    ("silent", "import sys, time\nsys.stdin.readline()\ntime.sleep(30)", "gave no answer within 0.5 s at step 1"),
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
    ("emberbench.versions:SIMULATOR_VERSION", "is not callable"),
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
