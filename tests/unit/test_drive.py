"""Driving a policy batched (lockstep) or concurrently gives the bytes of one-at-a-time driving, in process."""

from __future__ import annotations

import pytest

from emberbench.errors import InvalidActionError, PolicyError
from emberbench.evaluation.drive import DriveOptions
from emberbench.evaluation.runner import run_evaluation
from emberbench.results.manifest import EvaluationManifest, ManifestEntry
from tests import drive_policies as dp
from tests.run_support import invoke

VARIED = ("v1-pub-01-single-exit-sparse", "v1-pub-02-fire-at-near-exit", "v1-pub-04-dead-end-corridor",
          "v1-pub-09-threatened-nearest-exit")
"""Scenarios whose greedy episodes end at 8 to 24 steps, so a lockstep batch empties unevenly."""
SHORT = ("v1-pub-02-fire-at-near-exit", "v1-pub-09-threatened-nearest-exit", "v1-pub-01-single-exit-sparse")


def manifest_of(suite, ids, seeds=(0, 1)) -> EvaluationManifest:  # noqa: ANN001
    entries = [ManifestEntry(0, sid, suite.scenario(sid).content_hash, seed) for sid in ids for seed in seeds]
    entries = [ManifestEntry(i, e.scenario_id, e.scenario_hash, e.seed) for i, e in enumerate(entries)]
    return EvaluationManifest(suite.id, suite.version, suite.hash, tuple(entries))


def _run(tmp_path, suite, manifest, policy, name, drive, *, store=False):  # noqa: ANN001, ANN202
    from emberbench.evaluation.store_runner import open_store

    out = tmp_path / f"{name}.json"
    summary = run_evaluation(manifest, suite, policy, "m", out, drive=drive,
                             store=open_store(tmp_path / f"{name}-store") if store else None)
    return out.read_bytes(), summary


@pytest.mark.parametrize("batch", [1, 7, 64])
@pytest.mark.parametrize("policy", ["greedy", "random", "fire-aware", dp.NumpyMLP])
def test_batched_artifact_is_byte_identical_to_one_at_a_time(tmp_path, suite, policy, batch) -> None:  # noqa: ANN001
    """A batch of B episodes in lockstep (B = 1, 7, 64; episodes of different lengths, so slots empty and refill
    at different steps) writes exactly the artifact of one episode at a time, for the baselines (whose random
    policy keeps a generator per episode: a slot mixed up between episodes would change its moves) and for a
    numpy network acting for every episode in one call."""
    manifest = manifest_of(suite, VARIED)
    one, _ = _run(tmp_path, suite, manifest, policy, "one", DriveOptions())
    batched, summary = _run(tmp_path, suite, manifest, policy, "batched", DriveOptions(batch_size=batch))
    assert batched == one
    assert summary.completed == len(manifest.episodes)
    import json

    steps = {e["record"]["outcome"]["steps"] if "outcome" in e["record"] else len(e["record"]["actions"])
             for e in json.loads(one)["episodes"]}
    assert len(steps) > 1  # the episodes really end at different steps


@pytest.mark.parametrize("drive", [DriveOptions(batch_size=64), DriveOptions(concurrency=64)])
def test_store_run_is_byte_identical_when_batched_or_concurrent(tmp_path, suite, drive) -> None:  # noqa: ANN001
    """With a store (records put behind play, journaled in task order) the artifact is still the same bytes."""
    manifest = manifest_of(suite, VARIED)
    one, _ = _run(tmp_path, suite, manifest, "greedy", "one", DriveOptions(), store=True)
    other, summary = _run(tmp_path, suite, manifest, "greedy", "other", drive, store=True)
    assert other == one
    assert summary.ran == len(manifest.episodes)


@pytest.mark.parametrize("drive", [DriveOptions(batch_size=64), DriveOptions(batch_size=2),
                                   DriveOptions(concurrency=8)])
def test_a_failing_episode_keeps_what_one_at_a_time_keeps(tmp_path, suite, drive) -> None:  # noqa: ANN001
    """An invalid action in one episode stops the run keeping exactly the episodes a one-at-a-time run keeps:
    those before it play to their end; those after it (some finished earlier, being shorter) are dropped."""
    ids = ("v1-pub-04-dead-end-corridor", "v1-pub-09-threatened-nearest-exit", "v1-pub-02-fire-at-near-exit")
    manifest = manifest_of(suite, ids, seeds=(0,))
    kept = {}
    for name, how in (("one", DriveOptions()), ("other", drive)):
        out = tmp_path / f"{name}.json"
        with pytest.raises(InvalidActionError, match="step 4"):
            run_evaluation(manifest, suite, dp.FailsOnTarget, "m", out, drive=how)
        kept[name] = out.read_bytes()
    assert kept["other"] == kept["one"]
    assert b"v1-pub-04-dead-end-corridor" in kept["one"].split(b'"episodes"')[1]
    assert b"v1-pub-02-fire-at-near-exit" not in kept["one"].split(b'"episodes"')[1]


@pytest.mark.parametrize("policy", [dp.SleepyGreedy, dp.AsyncSleepyGreedy])
def test_slow_policy_gives_the_same_artifact_at_concurrency_1_and_64(tmp_path, suite, policy) -> None:  # noqa: ANN001
    """A policy that waits 50 ms per step (on a thread, or awaited on the event loop) writes the same artifact
    with 64 episodes in flight as with one, and 64 in flight really overlap."""
    manifest = manifest_of(suite, SHORT)
    dp.InFlight.reset()
    one, _ = _run(tmp_path, suite, manifest, policy, "c1", DriveOptions(concurrency=1))
    assert dp.InFlight.peak == 1
    many, _ = _run(tmp_path, suite, manifest, policy, "c64", DriveOptions(concurrency=64))
    assert many == one
    assert dp.InFlight.peak == len(manifest.episodes)
    greedy, _ = _run(tmp_path, suite, manifest, "greedy", "greedy", DriveOptions())
    assert one == greedy


def test_batch_size_needs_a_batch_form(tmp_path, suite) -> None:  # noqa: ANN001
    """A factory that declares no batch form is refused with a batch size (nothing is played)."""
    manifest = manifest_of(suite, SHORT)
    with pytest.raises(PolicyError, match="batch form"):
        run_evaluation(manifest, suite, dp.SleepyGreedy, "m", tmp_path / "x.json", drive=DriveOptions(batch_size=4))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"batch_size": 0}, "batch size must be an integer from 1 to 4096"),
    ({"concurrency": 4097}, "concurrency must be an integer from 1 to 4096"),
    ({"concurrency": True}, "concurrency must be"),
    ({"batch_size": 4, "concurrency": 2}, "not both"),
])
def test_drive_options_are_checked(kwargs, message) -> None:  # noqa: ANN001
    """Out-of-range widths, and a batch size together with a concurrency, are refused."""
    with pytest.raises(PolicyError, match=message):
        DriveOptions(**kwargs)


def test_cli_runs_greedy_batched_and_concurrent(tmp_path, suite) -> None:  # noqa: ANN001
    """``run --policy greedy --batch-size 16`` (and ``--concurrency 4``) write greedy's artifact."""
    from emberbench.results.manifest import write_manifest

    write_manifest(manifest_of(suite, SHORT), tmp_path / "m.json")
    outs = []
    for extra in ((), ("--batch-size", "16"), ("--concurrency", "4")):
        out = tmp_path / f"out{len(outs)}.json"
        result = invoke("run", "--manifest", tmp_path / "m.json", "--policy", "greedy", "--model-id", "g",
                        "--out", out, "--no-store", *extra)
        assert result.exit_code == 0, result.output
        outs.append(out.read_bytes())
    assert outs[1] == outs[0] == outs[2]


@pytest.mark.parametrize(("extra", "message"), [
    (("--batch-size", "4", "--concurrency", "2"), "give one of them"),
    (("--policy", "cmd:cat", "--batch-size", "4"), "has no batch form"),
    (("--batch-size", "0"), "not an integer in [1, 4096]"),
    (("--gpus-per-worker", "1.5"), "above 1 must be a whole number"),
    (("--gpus-per-worker", "-1"), "must be a number from 0 to 1024"),
    (("--resources", '{"GPU": 1}'), "is not a custom resource"),
    (("--resources", '{"slot": "x"}'), "must be a number"),
    (("--resources", "[1]"), "must be a JSON object"),
    (("--executor", "local", "--gpus-per-worker", "1"), "are for Ray workers"),
])
def test_cli_refuses_bad_driver_and_resource_options(tmp_path, suite, extra, message) -> None:  # noqa: ANN001
    """Each bad combination is a usage error (exit 2) of one line, before anything runs."""
    from emberbench.results.manifest import write_manifest

    write_manifest(manifest_of(suite, SHORT), tmp_path / "m.json")
    args = ["run", "--manifest", tmp_path / "m.json", "--model-id", "g", "--out", tmp_path / "o.json", "--no-store"]
    if "--policy" not in extra:
        args += ["--policy", "greedy"]
    result = invoke(*args, *extra)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert not (tmp_path / "o.json").exists()
