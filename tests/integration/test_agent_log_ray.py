"""External agents on Ray workers: stderr logs land in the shared folder, errors name scenario and seed."""

from __future__ import annotations

import sys

import pytest

from emberbench.errors import AgentError
from emberbench.results.manifest import EvaluationManifest, ManifestEntry
from emberbench.evaluation.runner import run_evaluation

pytestmark = pytest.mark.ray

SCENARIOS = ("v1-pub-01-single-exit-sparse", "v1-pub-04-dead-end-corridor")


def _manifest(suite):  # noqa: ANN001, ANN202
    entries = [ManifestEntry(i, sid, suite.scenario(sid).content_hash, seed)
               for i, (sid, seed) in enumerate((sid, seed) for sid in SCENARIOS for seed in (0, 1))]
    return EvaluationManifest(suite.id, suite.version, suite.hash, tuple(entries))


def test_agent_logs_are_written_by_ray_workers(ray_cluster, suite, tmp_path) -> None:  # noqa: ANN001
    """Each episode played on a worker leaves SCENARIO.seed-SEED.stderr.log in the (shared) log folder."""
    from emberbench.cluster import RayExecutor

    agent = tmp_path / "agent.py"
    agent.write_text("import json, sys\nsys.stderr.write('ready\\n')\nfor line in sys.stdin:\n"
                     "    print(json.dumps({p['id']: 'stay' for p in json.loads(line)['people']}), flush=True)\n")
    spec, logs = f"cmd:{sys.executable} {agent}", tmp_path / "logs"
    with RayExecutor(suite, spec, workers=2, agent_log=str(logs)) as executor:
        run_evaluation(_manifest(suite), suite, spec, "agent", tmp_path / "r.json", executor=executor)
    assert sorted(p.name for p in logs.iterdir()) == sorted(
        f"{sid}.seed-{seed}.stderr.log" for sid in SCENARIOS for seed in (0, 1))
    assert all(p.read_text() == "ready\n" for p in logs.iterdir())


def test_agent_error_on_a_worker_names_scenario_seed_and_tail(ray_cluster, suite, tmp_path) -> None:  # noqa: ANN001
    """A crash on a worker reaches the coordinator as AgentError with the episode and the stderr tail."""
    from emberbench.cluster import RayExecutor

    agent = tmp_path / "crash.py"
    agent.write_text("import sys\nsys.stdin.readline()\nsys.stderr.write('first\\nthe real cause\\n')\nsys.exit(4)")
    spec = f"cmd:{sys.executable} {agent}"
    with pytest.raises(AgentError) as info, RayExecutor(suite, spec, workers=1) as executor:
        run_evaluation(_manifest(suite), suite, spec, "agent", tmp_path / "r.json", executor=executor)
    assert str(info.value).startswith("scenario v1-pub-01-single-exit-sparse, seed 0: external agent")
    assert info.value.stderr_tail == ("first", "the real cause") and info.value.seed == 0
