"""`emberbench run --policy openai:MODEL` end to end against the test server, and its one-line errors."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCENARIOS = "v1-pub-01-single-exit-sparse,v1-pub-10-route-invalidation"
EMBERBENCH = str(Path(sys.executable).with_name("emberbench"))


@pytest.fixture
def tag(request) -> str:  # noqa: ANN001
    """A model-name option unique to the test."""
    return "tag" + hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:12]


def cli(args: list[str], server, cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:  # noqa: ANN001
    """Run the installed `emberbench` command with the server's address in the environment."""
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "cli-key",
           "EMBERBENCH_MODEL_BACKOFF": "0.01", "EMBERBENCH_MODEL_TIMEOUT": "5", **extra}
    env.pop("EMBERBENCH_STORE", None)
    return subprocess.run([EMBERBENCH, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def digests(path: Path) -> list[str]:
    return [e["record_digest"] for e in json.loads(path.read_text())["episodes"]]


def test_run_end_to_end_with_the_store_cache(model_server, tmp_path, tag) -> None:  # noqa: ANN001
    """`run --policy openai:...` plays the manifest through the server, verifies, matches the greedy
    baseline record for record; after `store rm-run`, the same command asks nothing and writes the same bytes."""
    model = f"greedy+{tag}"
    store = str(tmp_path / "store")
    built = cli(["manifest", "build", "--seeds", "0", "--scenarios", SCENARIOS, "--out", "m.json"], model_server,
                tmp_path)
    assert built.returncode == 0, built.stderr
    from emberbench.results.manifest import load_manifest
    from emberbench.results.stream import verify_artifact
    from emberbench.evaluation.runner import run_evaluation
    from emberbench.sim.suite import load_suite

    suite = load_suite()
    run_evaluation(load_manifest(tmp_path / "m.json", suite), suite, "greedy", "greedy", tmp_path / "greedy.json")
    run = ["run", "--manifest", "m.json", "--policy", f"openai:{model}", "--model-id", "served", "--out", "a.json",
           "--store", store, "--executor", "local"]
    first = cli(run, model_server, tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("a.json: 2/2 episodes (2 run now, 0 resumed); result digest ")
    assert digests(tmp_path / "a.json") == digests(tmp_path / "greedy.json")
    sent = len(model_server.log(model))
    assert sent > 0
    assert len(verify_artifact(tmp_path / "a.json", suite).indices) == 2
    from emberbench.runs.catalog import run_names
    from emberbench.store import open_store

    (only_run,) = run_names(open_store(store))
    removed = cli(["store", "rm-run", only_run, "--apply", "--store", store], model_server, tmp_path)
    assert removed.returncode == 0, removed.stderr
    (tmp_path / "a.json").rename(tmp_path / "first.json")
    again = cli(run, model_server, tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("a.json: 2/2 episodes (2 run now, 0 resumed)")
    assert len(model_server.log(model)) == sent  # every request answered by the cache
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "first.json").read_bytes()
    assert "cli-key" not in "".join(p.read_text(errors="replace") for p in Path(store).rglob("*") if p.is_file())


@pytest.mark.parametrize(("answer", "extra", "start", "end"), [
    ("greedy+503x*", {"EMBERBENCH_MODEL_MAX_ATTEMPTS": "2"},
     "error: model '{m}' at {url}: no answer for step 1: gave up after 2 attempts in ",
     "; last failure: HTTP 503: overloaded"),
    ("prose", {}, "error: action for step 1: model '{m}' replied with text that is not one JSON object: ",
     "(reply: not valid JSON: Expecting value: line 1 column 1 (char 0))"),
])
def test_run_failures_are_one_line(model_server, tmp_path, tag, answer, extra, start, end) -> None:  # noqa: ANN001
    """A server that gives up and a model that answers prose each end the run with one line on stderr."""
    model = f"{answer}+{tag}"
    from emberbench.results.manifest import build_manifest, write_manifest
    from emberbench.sim.suite import load_suite

    suite = load_suite()
    full = build_manifest(suite, [0])
    write_manifest(type(full)(full.suite_id, full.suite_version, full.suite_hash, full.episodes[:1]),
                   tmp_path / "m.json")
    result = cli(["run", "--manifest", "m.json", "--policy", f"openai:{model}", "--model-id", "x", "--out", "r.json",
                  "--no-store", "--executor", "local"], model_server, tmp_path, **extra)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1, result.stderr
    assert lines[0].startswith(start.format(m=model, url=model_server.base_url)), lines[0]
    assert lines[0].endswith(end), lines[0]
