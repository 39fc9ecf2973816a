"""One replay per record per command: verify, stats and compare authenticate each record exactly once."""

from __future__ import annotations

from collections import Counter

import pytest
from typer.testing import CliRunner

import emberbench.records.episode as episode
from emberbench.cli.main import app
from emberbench.evaluation.runner import run_evaluation
from tests.run_support import small_manifest

SMALL = ["v1-pub-01-single-exit-sparse", "v1-pub-12-smouldering-two-exits"]


@pytest.fixture(scope="module")
def results(tmp_path_factory, suite):  # noqa: ANN001
    """Artifacts of greedy and stay on one six-episode manifest."""
    manifest = small_manifest(suite, seeds=range(3), ids=SMALL)
    folder = tmp_path_factory.mktemp("once")
    for policy in ("greedy", "stay"):
        run_evaluation(manifest, suite, policy, policy, folder / f"{policy}.json")
    return folder


@pytest.fixture
def replays(monkeypatch):  # noqa: ANN001, ANN201
    """Counts every replay in this process, by record (scenario, seed and action log)."""
    seen: Counter = Counter()
    real = episode.replay

    def counting(scenario, record):  # noqa: ANN001, ANN202
        seen[(record.scenario_id, record.seed, record.actions)] += 1
        return real(scenario, record)

    monkeypatch.setattr(episode, "replay", counting)
    return seen


@pytest.mark.parametrize("command", ["verify", "stats", "compare", "pair"])
def test_each_record_is_replayed_once(results, replays, command, tmp_path) -> None:  # noqa: ANN001
    """Issue 13: each command replays every record of every input exactly once (stats used to replay twice)."""
    a, b = str(results / "greedy.json"), str(results / "stay.json")
    args = {
        "verify": ["verify", a],
        "stats": ["stats", a, "--resamples", "100", "--out", str(tmp_path / "s.json")],
        "compare": ["compare", a, b, "--resamples", "100", "--out", str(tmp_path / "c.json")],
        "pair": ["pair", a, b],
    }[command]
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 0, out.output
    files = 1 if command in ("verify", "stats") else 2
    assert len(replays) == 6 * files
    assert set(replays.values()) == {1}


@pytest.mark.parametrize("store", [False, True], ids=["no store", "store"])
def test_resume_replays_the_artifact_at_the_output_once(results, replays, store, tmp_path) -> None:  # noqa: ANN001
    """Resuming onto a complete artifact verifies it as a stream: each of its records is replayed once."""
    import shutil

    from emberbench.results.manifest import manifest_from_dict
    from emberbench.results.stream import read_artifact_header
    from emberbench.store import open_store
    from emberbench.sim.suite import load_suite

    out = tmp_path / "greedy.json"
    shutil.copyfile(results / "greedy.json", out)
    shutil.copyfile(results / "greedy.json.run", tmp_path / "greedy.json.run")  # its run sidecar goes with it
    manifest = manifest_from_dict(read_artifact_header(out)["manifest"])
    extra = {"store": open_store(tmp_path / "s", create=True)} if store else {}
    summary = run_evaluation(manifest, load_suite(None), "greedy", "greedy", out, **extra)
    assert summary.completed == 6 and summary.ran == 0
    assert len(replays) == 6 and set(replays.values()) == {1}


def test_a_list_authenticator_is_called_on_bounded_batches(results, suite) -> None:  # noqa: ANN001
    """An authenticator of the list form sees each record once, in batches of at most the batch size."""
    from emberbench.records.replay import AuthenticatorReplayer
    from emberbench.results.stream import verify_artifact
    from emberbench.results.artifact import authenticate_all

    sizes: list[int] = []

    def counting(records, s):  # noqa: ANN001, ANN202
        sizes.append(len(records))
        return authenticate_all(records, s)

    done = verify_artifact(results / "greedy.json", suite, replayer=AuthenticatorReplayer(counting, batch=4))
    assert done.complete and sizes == [4, 2]
