"""The run sidecar beside a result artifact: its format, and the resumes it refuses (issue 22, defects 1 and 12)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from emberbench.errors import ResumeError, RunInfoError
from emberbench.results.manifest import write_manifest
from emberbench.evaluation.run_sidecar import RunSidecar, read_sidecar, sidecar_path_of
from emberbench.evaluation.runner import check_before_start, run_evaluation
from emberbench.evaluation.store_runner import open_store
from tests.conftest import ROOT
from tests.run_support import invoke, small_manifest

GOLDEN = ROOT / "tests" / "golden"


class _Stop(Exception):
    """Stands for whatever stops a run midway (a full disk, Ctrl-C)."""


def partial(manifest, suite, policy: str, out: Path, episodes: int, **kwargs) -> None:  # noqa: ANN001
    """Leave at ``out`` the artifact of a run of ``policy`` stopped after ``episodes`` episodes."""
    def progress(done: int, total: int) -> None:
        if done == episodes:
            raise _Stop

    with pytest.raises(_Stop):
        run_evaluation(manifest, suite, policy, "m", out, progress=progress, **kwargs)


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


# -- the format -----------------------------------------------------------------------------------

def test_golden_sidecar_round_trips() -> None:
    """The golden sample parses and serializes back to its exact bytes."""
    data = (GOLDEN / "run-sidecar-1.0.json").read_bytes()
    sidecar = RunSidecar.from_dict(json.loads(data))
    assert sidecar.policy == "greedy" and sidecar.model_id == "greedy"
    assert sidecar.to_bytes() == data


def test_future_sidecar_is_refused(tmp_path) -> None:  # noqa: ANN001
    """A sidecar of a newer version is refused, naming the version and the file."""
    shutil.copy(GOLDEN / "run-sidecar-future.json", tmp_path / "r.json.run")
    with pytest.raises(RunInfoError, match=r"r\.json\.run: run_sidecar_version '2\.0' is not supported"):
        read_sidecar(tmp_path / "r.json")


def _golden() -> dict:
    return json.loads((GOLDEN / "run-sidecar-1.0.json").read_text())


@pytest.mark.parametrize(("change", "message"), [
    ({"extra": 1}, "unknown key"),
    ({"model_id": " m"}, "whitespace"),
    ({"model_id": 7}, "model_id must be"),
    ({"manifest_hash": "ABC"}, "manifest_hash must be"),
    ({"policy": "cmd:a\nb"}, "policy must be"),
    ({"policy": ""}, "policy must be"),
    ({"started": "today"}, "started must be an ISO 8601"),
    ({"emberbench_version": "x" * 65}, "emberbench_version must be"),
    ({"run_sidecar_version": 1.0}, "run_sidecar_version 1.0 is not supported"),
])
def test_sidecar_validation(change, message) -> None:  # noqa: ANN001
    """Each malformed field is refused with a message naming it; a missing key too."""
    with pytest.raises(RunInfoError, match=message):
        RunSidecar.from_dict({**_golden(), **change})
    missing = _golden()
    del missing["policy"]
    with pytest.raises(RunInfoError, match=r"missing key\(s\) \['policy'\]"):
        RunSidecar.from_dict(missing)


def test_a_run_writes_its_sidecar_before_its_artifact(tmp_path, suite, monkeypatch) -> None:  # noqa: ANN001
    """A new output gets its sidecar first (so no artifact of this version is ever without one), then the artifact."""
    import emberbench.io.atomic as atomic

    order: list[str] = []
    real = atomic.atomic_write_bytes

    def recording(path, data):  # noqa: ANN001, ANN202
        order.append(Path(path).name)
        return real(path, data)

    monkeypatch.setattr(atomic, "atomic_write_bytes", recording)
    monkeypatch.setattr("emberbench.evaluation.run_sidecar.atomic_write_bytes", recording)
    monkeypatch.setattr("emberbench.evaluation.runner.atomic_write_bytes", recording)
    manifest = small_manifest(suite)
    run_evaluation(manifest, suite, "greedy", "m", tmp_path / "r.json")
    assert order[:2] == ["r.json.run", "r.json"] and order.count("r.json.run") == 1
    sidecar = read_sidecar(tmp_path / "r.json")
    assert sidecar is not None and (sidecar.policy, sidecar.model_id, sidecar.manifest_hash) == (
        "greedy", "m", manifest.hash)


# -- defect 1: no resume mixes policies -----------------------------------------------------------

def test_a_storeless_resume_under_another_policy_is_refused(tmp_path, suite) -> None:  # noqa: ANN001
    """Issue 22 defect 1: a partial `stay` artifact is not resumed by `greedy` without a store; nothing changes.
    The same policy resumes it."""
    manifest = small_manifest(suite)
    out = tmp_path / "p.json"
    partial(manifest, suite, "stay", out, 1)
    before = files(tmp_path)
    with pytest.raises(ResumeError, match=r"p\.json was begun with policy 'stay' \(p\.json\.run\); this run uses "
                                          r"policy 'greedy'"):
        run_evaluation(manifest, suite, "greedy", "m", out)
    assert files(tmp_path) == before
    summary = run_evaluation(manifest, suite, "stay", "m", out)
    assert (summary.ran, summary.resumed) == (3, 1)


def test_the_issue_reproducer_at_the_command_line(tmp_path, suite) -> None:  # noqa: ANN001
    """Issue 22 defect 1, as reported: `run --policy greedy --no-store` on a partial `stay` artifact is one error
    line naming both policies; `verify` then reports the policy the artifact was run with."""
    manifest = small_manifest(suite)
    write_manifest(manifest, tmp_path / "dev.json")
    out = tmp_path / "p.json"
    partial(manifest, suite, "stay", out, 1)
    result = invoke("run", "--manifest", tmp_path / "dev.json", "--policy", "greedy", "--model-id", "m",
                    "--out", out, "--no-store", "--executor", "local")
    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "'stay'" in lines[0] and "'greedy'" in lines[0] and "p.json" in lines[0]
    verified = invoke("verify", out, "--allow-partial")
    assert verified.exit_code == 0 and "model 'm', policy 'stay', 1/4 episodes" in verified.output


def test_a_store_run_does_not_adopt_an_artifact_of_another_policy(tmp_path, suite) -> None:  # noqa: ANN001
    """Issue 22 defect 1: a store run would have imported a store-less `stay` artifact's episodes into a `greedy`
    journal; it is refused, and the store keeps no run."""
    manifest = small_manifest(suite)
    out = tmp_path / "p.json"
    partial(manifest, suite, "stay", out, 2)
    store = open_store(tmp_path / "s")
    with pytest.raises(ResumeError, match="begun with policy 'stay'"):
        run_evaluation(manifest, suite, "greedy", "m", out, store=store)
    assert store.journal_names() == []


def test_a_sidecar_of_another_run_is_refused(tmp_path, suite) -> None:  # noqa: ANN001
    """A sidecar naming another model id (or manifest) than the run is refused like the artifact itself would be."""
    manifest = small_manifest(suite)
    out = tmp_path / "p.json"
    partial(manifest, suite, "stay", out, 1)
    data = json.loads(sidecar_path_of(out).read_text())
    sidecar_path_of(out).write_text(json.dumps({**data, "model_id": "other"}))
    with pytest.raises(ResumeError, match=r"p\.json belongs to model id 'other', not 'm' \(recorded in p\.json\.run\)"):
        run_evaluation(manifest, suite, "stay", "m", out)


# -- an artifact without a sidecar ------------------------------------------------------------------

def test_an_artifact_with_episodes_and_no_sidecar_is_not_resumed(tmp_path, suite) -> None:  # noqa: ANN001
    """Written by an older EMBERBench (or copied alone), its policy is unknown: refused with the way out, without a
    store, and with a store that has no journal of it; partial or complete alike."""
    manifest = small_manifest(suite)
    out = tmp_path / "p.json"
    partial(manifest, suite, "stay", out, 2)
    sidecar_path_of(out).unlink()
    before = files(tmp_path)
    for store in (None, open_store(tmp_path / "s")):
        with pytest.raises(ResumeError, match=r"p\.json holds episodes but no run sidecar p\.json\.run records their "
                                              r"policy .* start over under another --out"):
            run_evaluation(manifest, suite, "stay", "m", out, store=store)
        assert files(tmp_path) == before
    complete = tmp_path / "c.json"
    run_evaluation(manifest, suite, "stay", "m", complete)
    sidecar_path_of(complete).unlink()
    with pytest.raises(ResumeError, match="no run sidecar"):
        run_evaluation(manifest, suite, "stay", "m", complete)


def test_an_empty_artifact_without_sidecar_is_taken_over(tmp_path, suite) -> None:  # noqa: ANN001
    """An artifact of zero episodes cannot mix anything: the run continues it and writes its sidecar."""
    manifest = small_manifest(suite)
    out = tmp_path / "p.json"
    partial(manifest, suite, "stay", out, 0)
    sidecar_path_of(out).unlink()
    summary = run_evaluation(manifest, suite, "greedy", "m", out)
    assert summary.ran == 4 and read_sidecar(out).policy == "greedy"


def test_a_journal_vouches_for_the_episodes_of_an_artifact_without_sidecar(tmp_path, suite) -> None:  # noqa: ANN001
    """A store run's artifact written before sidecars: the journal's header names the policy of every episode the
    artifact holds, so the store run resumes it and writes the sidecar; another policy is still refused."""
    manifest = small_manifest(suite)
    store = open_store(tmp_path / "s")
    out = tmp_path / "p.json"
    partial(manifest, suite, "stay", out, 2, store=store, checkpoint_every=1)
    sidecar_path_of(out).unlink()
    with pytest.raises(ResumeError, match="was started with policy 'stay'"):
        run_evaluation(manifest, suite, "greedy", "m", out, store=store)
    summary = run_evaluation(manifest, suite, "stay", "m", out, store=store)
    assert summary.from_artifact == 2 and summary.ran == 2 and read_sidecar(out).policy == "stay"


# -- hostile sidecars ---------------------------------------------------------------------------------

def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _link(path: Path) -> None:
    target = path.with_name("elsewhere.run")
    shutil.copy(GOLDEN / "run-sidecar-1.0.json", target)
    path.symlink_to(target)


HOSTILE = {
    "fifo": (_fifo, "run sidecar must be a regular file"),
    "folder": (Path.mkdir, "run sidecar must be a regular file"),
    "not JSON": (lambda p: p.write_bytes(b"\xff{"), "p.json.run"),
    "a list": (lambda p: p.write_text("[1]"), "run sidecar must be a JSON object"),
    "huge": (lambda p: p.write_bytes(b" " * (64 * 1024 + 1) + b"{}"), "exceeds the cap"),
    "future": (lambda p: shutil.copy(GOLDEN / "run-sidecar-future.json", p), "run_sidecar_version '2.0'"),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_sidecar_is_refused_and_left_alone(kind: str, tmp_path, suite) -> None:  # noqa: ANN001
    """Read on resume under the input policy: a special file, a bomb, garbage or a newer version is refused at
    once, naming the file; neither it nor the artifact changes."""
    manifest = small_manifest(suite)
    out = tmp_path / "p.json"
    partial(manifest, suite, "stay", out, 1)
    sidecar_path_of(out).unlink()
    make, message = HOSTILE[kind]
    make(sidecar_path_of(out))
    before = {p.name: os.lstat(p).st_mtime_ns for p in tmp_path.iterdir()}
    with pytest.raises((RunInfoError, ResumeError), match=message):
        run_evaluation(manifest, suite, "stay", "m", out)
    assert {p.name: os.lstat(p).st_mtime_ns for p in tmp_path.iterdir()} == before


def test_a_sidecar_path_that_is_not_a_regular_file_is_never_replaced(tmp_path, suite) -> None:  # noqa: ANN001
    """A new run whose sidecar path is a link or a FIFO is refused before anything is written."""
    from emberbench.errors import OutputPathError

    manifest = small_manifest(suite)
    for make in (_link, _fifo):
        folder = tmp_path / make.__name__
        folder.mkdir()
        make(sidecar_path_of(folder / "p.json"))
        with pytest.raises(OutputPathError, match=r"p\.json\.run is a"):
            run_evaluation(manifest, suite, "stay", "m", folder / "p.json")
        assert not (folder / "p.json").exists()


def test_verify_reports_the_policy_only_from_a_sidecar_that_fits(tmp_path, suite) -> None:  # noqa: ANN001
    """verify names the policy from a sidecar of this artifact; a sidecar of another run or an unreadable one is
    noted, and the verdict still rests on the artifact alone."""
    manifest = small_manifest(suite)
    out = tmp_path / "g.json"
    run_evaluation(manifest, suite, "greedy", "m", out)
    assert "model 'm', policy 'greedy', 4/4" in invoke("verify", out).output
    data = json.loads(sidecar_path_of(out).read_text())
    sidecar_path_of(out).write_text(json.dumps({**data, "model_id": "x"}))
    other = invoke("verify", out)
    assert other.exit_code == 0 and "policy unknown (" in other.output and "not this artifact" in other.output
    sidecar_path_of(out).unlink()
    _fifo(sidecar_path_of(out))
    fifo = invoke("verify", out)
    assert fifo.exit_code == 0 and "policy unknown (run sidecar not readable" in fifo.output
    sidecar_path_of(out).unlink()
    plain = invoke("verify", out)
    assert plain.exit_code == 0 and "model 'm', 4/4" in plain.output


# -- defect 12: refused before Ray starts ----------------------------------------------------------------

@pytest.fixture()
def no_ray(monkeypatch):  # noqa: ANN001, ANN201
    """Fails the test if anything starts (or joins) a Ray session."""
    import emberbench.cluster.commands as commands
    import emberbench.cluster.session as session

    def started(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("Ray was started before the resume was refused")

    monkeypatch.setattr(commands, "ray_session", started)
    monkeypatch.setattr(session, "ray_session", started)


@pytest.mark.parametrize("with_store", [False, True], ids=["sidecar", "journal header"])
def test_a_ray_resume_under_another_policy_is_refused_before_ray_starts(with_store, no_ray, tmp_path,
                                                                        suite) -> None:  # noqa: ANN001
    """Issue 22 defect 12: run_on_ray refuses a resume under another policy from the sidecar (no store) or the
    journal header (store, even with the artifact gone) without starting Ray."""
    from emberbench.cluster import run_on_ray

    manifest = small_manifest(suite)
    store = open_store(tmp_path / "s") if with_store else None
    out = tmp_path / "p.json"
    partial(manifest, suite, "stay", out, 2, store=store)
    if with_store:
        out.unlink()
        sidecar_path_of(out).unlink(missing_ok=True)
    with pytest.raises(ResumeError, match="policy 'stay'"):
        run_on_ray(manifest, suite, "greedy", "m", out, store=store, workers=1)


def test_ray_at_the_command_line_refuses_before_starting(no_ray, tmp_path, suite) -> None:  # noqa: ANN001
    """Issue 22 defect 12, as reported: `run --executor ray` under another policy is one error line, Ray never
    started; --no-resume over an existing artifact too."""
    manifest = small_manifest(suite)
    write_manifest(manifest, tmp_path / "m.json")
    out = tmp_path / "p.json"
    partial(manifest, suite, "stay", out, 1)
    base = ["run", "--manifest", tmp_path / "m.json", "--model-id", "m", "--out", out, "--no-store",
            "--executor", "ray", "--workers", "1"]
    other = invoke(*base, "--policy", "greedy")
    assert other.exit_code == 1 and "begun with policy 'stay'" in other.stderr, other.output
    fresh = invoke(*base, "--policy", "stay", "--no-resume")
    assert fresh.exit_code == 1 and "never overwritten" in fresh.stderr, fresh.output


def test_the_check_before_start_lets_a_good_resume_through(tmp_path, suite) -> None:  # noqa: ANN001
    """The early check refuses nothing a run would accept: same policy, a new output, an empty legacy artifact."""
    manifest = small_manifest(suite)
    out = tmp_path / "p.json"
    check_before_start(manifest, "m", out, "stay")
    partial(manifest, suite, "stay", out, 1)
    check_before_start(manifest, "m", out, "stay")
    store = open_store(tmp_path / "s")
    check_before_start(manifest, "m", out, "stay", store=store)
    empty = tmp_path / "e.json"
    partial(manifest, suite, "stay", empty, 0)
    sidecar_path_of(empty).unlink()
    check_before_start(manifest, "m", empty, "greedy")
    sidecar_path_of(out).unlink()
    with pytest.raises(ResumeError, match="no run sidecar"):
        check_before_start(manifest, "m", out, "stay")


@pytest.mark.parametrize("content", [b"{}", b"[]", b'{"x":1}', b"not json"], ids=["empty object", "list",
                                                                                   "other keys", "text"])
def test_the_check_before_start_does_not_say_a_file_holds_episodes_when_it_does_not(content: bytes, tmp_path,
                                                                                    suite) -> None:  # noqa: ANN001
    """A file that is no artifact is not said to hold episodes: the early check leaves it to the run, whose
    reader names the fault (CI found `--out r.json` holding `{}` refused for missing a sidecar)."""
    manifest = small_manifest(suite)
    out = tmp_path / "r.json"
    out.write_bytes(content)
    check_before_start(manifest, "m", out, "stay")
    with pytest.raises(Exception) as caught:  # noqa: PT011 - the reader's error, whatever kind
        run_evaluation(manifest, suite, "stay", "m", out)
    assert "no run sidecar" not in str(caught.value)
    assert out.read_bytes() == content


def test_too_many_embedded_workers_are_refused_before_the_output_is_touched(no_ray, tmp_path,
                                                                           suite) -> None:  # noqa: ANN001
    """`--workers` beyond this machine's CPUs is an argument fault: named first, whatever the output holds."""
    from emberbench.cluster import run_on_ray
    from emberbench.errors import ClusterError

    manifest = small_manifest(suite)
    out = tmp_path / "r.json"
    out.write_bytes(b"{}")
    with pytest.raises(ClusterError, match="--workers 1000000 exceeds the"):
        run_on_ray(manifest, suite, "greedy", "m", out, workers=1_000_000)
    assert out.read_bytes() == b"{}" and not sidecar_path_of(out).exists()
