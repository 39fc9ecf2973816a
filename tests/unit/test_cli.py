"""The command line: outputs, exit codes, and one clear line (never a traceback) for user errors."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from emberbench.cli.main import app
from emberbench.results.manifest import EvaluationManifest, ManifestEntry, write_manifest
from emberbench.evaluation.runner import run_evaluation

runner = CliRunner()


def invoke(*args: str):  # noqa: ANN201
    return runner.invoke(app, list(args))


def one_error_line(result) -> str:  # noqa: ANN001
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert "Traceback" not in result.output
    return lines[0]


def test_suite_list_and_show(suite) -> None:  # noqa: ANN001
    """suite list names every scenario with its hash (12 digits; `suite show` has all 64) and families, within 80
    columns (issue 27, defect 8: its lines were 157 columns); suite show draws the map."""
    out = invoke("suite", "list")
    assert out.exit_code == 0
    assert all(len(line) <= 80 for line in out.output.splitlines()), out.output
    assert f"suite hash {suite.hash}" in out.output
    for s in suite.scenarios:
        assert f"{s.id}" in out.output and f"  {s.content_hash[:12]}  " in out.output
        assert s.content_hash not in out.output and s.content_hash in invoke("suite", "show", s.id).output
    assert "v1-pub-01-single-exit-sparse       f1aaa2e05f79  single-exit, stochastic-fire\n" in out.output
    show = invoke("suite", "show", "v1-pub-01-single-exit-sparse")
    assert show.exit_code == 0 and "spread 1/4" in show.output and "E" in show.output
    assert one_error_line(invoke("suite", "show", "nope")).startswith("error: suite emberbench-v1-public")


def test_episode_record_and_replay(tmp_path) -> None:  # noqa: ANN001
    """episode prints its outcome and writes a record; replay authenticates it; tampering exits 1."""
    rec = tmp_path / "r.json"
    out = invoke("episode", "v1-pub-10-route-invalidation", "--seed", "2", "--policy", "fire-aware",
                 "--record", str(rec))
    assert out.exit_code == 0 and "evacuated=" in out.output and "termination=" in out.output
    replay = invoke("replay", str(rec))
    assert replay.exit_code == 0
    assert json.loads(replay.output)["metrics_version"] == "1.0"
    data = json.loads(rec.read_text())
    data["outcome"]["steps"] += 1
    rec.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")))
    assert "outcome.steps" in one_error_line(invoke("replay", str(rec)))
    assert "unknown policy" in one_error_line(invoke("episode", "v1-pub-01-single-exit-sparse", "--policy", "x"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory, suite):  # noqa: ANN001
    folder = tmp_path_factory.mktemp("cli")
    ids = ["v1-pub-01-single-exit-sparse", "v1-pub-10-route-invalidation"]
    entries = tuple(ManifestEntry(i, sid, suite.scenario(sid).content_hash, seed)
                    for i, (sid, seed) in enumerate((s, k) for s in ids for k in range(3)))
    manifest = EvaluationManifest(suite.id, suite.version, suite.hash, entries)
    write_manifest(manifest, folder / "m.json")
    for name in ("greedy", "fire-aware"):
        run_evaluation(manifest, suite, name, name, folder / f"{name}.json")
    return folder


def test_manifest_build_and_show(tmp_path) -> None:  # noqa: ANN001
    """manifest build takes --seeds 0 1 2 and prints the hash; show lists the schedule."""
    from tests.unit.test_manifest import PUBLIC_DEV_MANIFEST_HASH

    path = tmp_path / "m.json"
    out = invoke("manifest", "build", "--seeds", "0", "1", "2", "--out", str(path))
    assert out.exit_code == 0 and PUBLIC_DEV_MANIFEST_HASH in out.output
    show = invoke("manifest", "show", str(path))
    assert show.exit_code == 0 and "36 episodes" in show.output
    other = tmp_path / "other.json"
    twice = invoke("manifest", "build", "--seeds", "1", "1", "--out", str(other))  # a usage error too (issue 22)
    assert twice.exit_code == 2 and twice.output.count("\n") == 1 and "seed 1 is given twice" in twice.output
    bad_seed = invoke("manifest", "build", "--seeds", "x", "--out", str(other))  # a usage error: exit 2, one line
    assert bad_seed.exit_code == 2 and bad_seed.output.count("\n") == 1 and "'x' is not a seed" in bad_seed.output
    assert "cannot read manifest" in one_error_line(invoke("manifest", "show", str(tmp_path / "none.json")))


def test_verify_pair_stats_compare(runs, tmp_path) -> None:  # noqa: ANN001
    """verify says ok; pair counts pairs; stats and compare write artifacts and print tables."""
    ok = invoke("verify", str(runs / "greedy.json"))
    assert ok.exit_code == 0 and ok.output.startswith("ok: ") and "6/6 episodes authenticated" in ok.output
    paired = invoke("pair", str(runs / "greedy.json"), str(runs / "fire-aware.json"), "--out", str(tmp_path / "p.json"))
    assert paired.exit_code == 0 and "paired 6" in paired.output
    assert json.loads((tmp_path / "p.json").read_text())["paired_count"] == 6
    stats = invoke("stats", str(runs / "greedy.json"), "--resamples", "100", "--out", str(tmp_path / "s.json"))
    assert stats.exit_code == 0 and "evacuated_rate" in stats.output
    assert json.loads((tmp_path / "s.json").read_text())["artifact"] == "aggregate"
    cmp_ = invoke("compare", str(runs / "fire-aware.json"), str(runs / "greedy.json"), "--resamples", "100",
                  "--out", str(tmp_path / "c.json"))
    assert cmp_.exit_code == 0 and "casualty_rate" in cmp_.output
    assert json.loads((tmp_path / "c.json").read_text())["delta"] == "A - B"
    few = invoke("stats", str(runs / "greedy.json"), "--resamples", "5", "--out", str(tmp_path / "x.json"))
    assert few.exit_code == 2 and "--resamples" in few.output and not (tmp_path / "x.json").exists()  # issue 22


def test_verify_rejects_a_tampered_artifact_with_one_line(runs, tmp_path) -> None:  # noqa: ANN001
    """A changed stored metric makes verify exit 1 with one line naming the episode."""
    data = json.loads((runs / "greedy.json").read_text())
    data["episodes"][2]["metrics"]["counts"]["steps"] += 1
    from emberbench.io.canonical import canonical_bytes

    bad = tmp_path / "bad.json"
    bad.write_bytes(canonical_bytes(data) + b"\n")
    line = one_error_line(invoke("verify", str(bad)))
    assert "episode 2: stored metrics differ" in line


def exploding_policy_factory():  # noqa: ANN201
    """A policy factory whose policy raises on its first observation (used by the CLI test)."""
    def policy(obs):  # noqa: ANN001, ANN202
        raise RuntimeError("policy exploded")
    return policy


def test_run_reports_a_policy_exception_in_one_line(runs, tmp_path) -> None:  # noqa: ANN001
    """A policy exception at the command line is one error line naming it; the artifact is kept."""
    out = tmp_path / "r.json"
    result = invoke("run", "--manifest", str(runs / "m.json"), "--policy",
                    "tests.unit.test_cli:exploding_policy_factory", "--model-id", "boom", "--out", str(out),
                    "--executor", "local", "--no-store")
    line = one_error_line(result)
    assert "the policy raised RuntimeError: policy exploded" in line
    assert json.loads(out.read_text())["episodes"] == []


def test_run_local_with_store_matches_the_api(runs, tmp_path) -> None:  # noqa: ANN001
    """`emberbench run --executor local --store` writes the same bytes as the library run."""
    out = tmp_path / "r.json"
    result = invoke("run", "--manifest", str(runs / "m.json"), "--policy", "greedy", "--model-id", "greedy",
                    "--out", str(out), "--executor", "local", "--store", str(tmp_path / "store"))
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == (runs / "greedy.json").read_bytes()
    assert "6/6 episodes (6 run now, 0 resumed)" in result.output
