"""`emberbench run` and `verify` at the command line: summaries, exit statuses, errors naming their cause."""

from __future__ import annotations

import pytest

from emberbench.results.manifest import write_manifest
from emberbench.evaluation.store_runner import open_store
from tests.run_support import error_line, flip_byte, invoke, small_manifest


@pytest.fixture()
def mpath(tmp_path, suite):  # noqa: ANN001
    path = tmp_path / "m.json"
    write_manifest(small_manifest(suite), path)
    return path


def run(mpath, out, *extra: str, policy: str = "greedy", model: str = "m"):  # noqa: ANN001, ANN201
    return invoke("run", "--manifest", mpath, "--policy", policy, "--model-id", model, "--out", out,
                  "--executor", "local", *extra)


def broken_policy_factory():  # noqa: ANN201
    """A policy that raises on its first observation (so a run leaves a 0-episode artifact)."""
    def policy(obs):  # noqa: ANN001, ANN202
        raise RuntimeError("bug")
    return policy


def test_verify_partial_result_exits_3(tmp_path, mpath) -> None:  # noqa: ANN001
    """Issue 11 defect 6: the 0-episode artifact of a failed run is `partial`, exit 3; --allow-partial accepts it."""
    out = tmp_path / "b.json"
    failed = run(mpath, out, "--no-store", policy="tests.unit.test_cli_run_verify:broken_policy_factory")
    assert failed.exit_code == 1
    result = invoke("verify", out)
    assert result.exit_code == 3, result.output
    assert "partial: 0 of 4 episodes" in result.output
    allowed = invoke("verify", out, "--allow-partial")
    assert allowed.exit_code == 0 and "partial: 0 of 4 episodes" in allowed.output


def test_verify_complete_result_exits_0(tmp_path, mpath) -> None:  # noqa: ANN001
    """A complete, authenticated result is `ok` with exit 0."""
    out = tmp_path / "g.json"
    assert run(mpath, out, "--no-store").exit_code == 0
    result = invoke("verify", out)
    assert result.exit_code == 0 and result.output.startswith("ok: ") and "4/4 episodes" in result.output


def test_store_corruption_during_a_run_is_not_blamed_on_the_policy(tmp_path, mpath) -> None:  # noqa: ANN001
    """Issue 11 defect 7: a corrupt record met during a run is reported as an integrity error naming it."""
    store_dir = tmp_path / "s"
    assert run(mpath, tmp_path / "g.json", "--store", store_dir).exit_code == 0
    store = open_store(store_dir)
    (name,) = store.journal_names()
    path = store.layout.journal_path(name)
    data = bytearray(path.read_bytes())
    data[12] ^= 0xFF
    path.write_bytes(bytes(data))
    line = error_line(run(mpath, tmp_path / "new.json", "--store", store_dir))
    assert "policy raised" not in line and "integrity" in line and name in line


def test_resume_from_the_journal_is_stated_in_the_summary(tmp_path, mpath) -> None:  # noqa: ANN001
    """Issue 11 defect 1: a run that takes its episodes from the store's journal says so, with its start time."""
    store_dir = tmp_path / "s"
    first = run(mpath, tmp_path / "g.json", "--store", store_dir)
    assert first.exit_code == 0 and "(4 run now, 0 resumed)" in first.output
    again = run(mpath, tmp_path / "new.json", "--store", store_dir)
    assert again.exit_code == 0, again.output
    assert "4 from the store's run journal started 20" in again.output
    other = run(mpath, tmp_path / "other.json", "--store", store_dir, "--no-resume", policy="stay")
    line = error_line(other)
    assert "--no-resume" in line and not (tmp_path / "other.json").exists()


def test_corrupt_record_is_regenerated_and_reported(tmp_path, mpath) -> None:  # noqa: ANN001
    """Issue 11 defect 7: a corrupt record met on resume is regenerated (same digest) and counted, not blamed."""
    store_dir = tmp_path / "s"
    assert run(mpath, tmp_path / "g.json", "--store", store_dir).exit_code == 0
    store = open_store(store_dir)
    (name,) = store.journal_names()
    key = next(e.data["digest"] for e in store.read_journal(name).entries if "digest" in e.data)
    flip_byte(store.layout.object_path(key), 100)
    (tmp_path / "g.json").unlink()
    again = run(mpath, tmp_path / "g.json", "--store", store_dir)
    assert again.exit_code == 0, again.output
    assert "1 regenerated" in again.output and "policy raised" not in again.output
    assert store.get(key, verify_data=True)


def test_run_on_a_locked_output_is_refused_in_one_line(tmp_path, mpath) -> None:  # noqa: ANN001
    """Issue 11 defect 3: a run whose --out another run holds is refused at once, naming the holder."""
    import os

    from emberbench.evaluation.output_lock import OutputLock

    out = tmp_path / "g.json"
    with OutputLock(out):
        line = error_line(run(mpath, out, "--no-store"))
    assert f"is being written by another run (pid {os.getpid()} on host" in line
    assert not out.exists()


# -- the suite comes from the manifest (issue 27, defect 4) -----------------------------------------------------

@pytest.fixture(scope="module")
def generated(tmp_path_factory):  # noqa: ANN201
    """A folder holding a generated suite (`gen`, remembered by `suite generate`), a manifest of it and two
    results on it, all made without --suite after the suite was generated."""
    import os

    folder = tmp_path_factory.mktemp("generated")
    here = os.getcwd()
    os.chdir(folder)
    try:
        for args in (("suite", "generate", "--recipe", "dev", "--count", "2", "--seed", "1", "--out", "gen"),
                     ("manifest", "build", "--seeds", "0", "1", "2", "--suite", "gen", "--out", "dev.json"),
                     ("run", "--manifest", "dev.json", "--policy", "greedy", "--model-id", "greedy", "--out",
                      "g.json", "--executor", "local"),
                     ("run", "--manifest", "dev.json", "--policy", "stay", "--model-id", "stay", "--out", "s.json",
                      "--executor", "local", "--no-store")):
            result = invoke(*args)
            assert result.exit_code == 0, (args, result.output)
    finally:
        os.chdir(here)
    return folder


# (name, arguments, what the output says); every one runs in the folder without --suite
FROM_THE_MANIFEST = [
    ("verify", ("verify", "g.json"), "ok: g.json"),
    ("stats", ("stats", "g.json", "--resamples", "100"), "greedy · overall"),
    ("compare", ("compare", "g.json", "s.json", "--resamples", "100"), "A = greedy vs B = stay"),
    ("pair", ("pair", "g.json", "s.json"), "paired 6"),
    ("view", ("view", "g.json", "--episode", "1", "--out", "v.html", "--force"), "viewer written to v.html"),
    ("report", ("report", "g.json", "s.json", "--resamples", "100", "--out", "rep", "--force"), "report written"),
    ("plot", ("plot", "egress", "g.json", "--scenario", "{scenario}", "--out", "e.svg", "--force"),
     "figure written to e.svg"),
    ("run (resumed)", ("run", "--manifest", "dev.json", "--policy", "greedy", "--model-id", "greedy", "--out",
                       "g.json", "--executor", "local"), "(0 run now, 6 resumed"),
    ("episode", ("episode", "{scenario}", "--seed", "0"), "seed=0 policy=greedy: evacuated="),
    ("replay", ("episode", "{scenario}", "--record", "r.json", "--force"), "record written to r.json"),
]


@pytest.mark.parametrize(("name", "args", "says"), FROM_THE_MANIFEST, ids=[c[0] for c in FROM_THE_MANIFEST])
def test_the_suite_comes_from_the_manifest(name: str, args: tuple[str, ...], says: str, generated,  # noqa: ANN001
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 27 (defect 4): a manifest records its suite, yet run, verify, compare, view, report, stats, pair and
    plot on a generated suite's manifest failed ("manifest suite_id is 'generated-dev', but the suite/running
    code has 'emberbench-v1-public'") until --suite was repeated. The suite given once (`suite generate`,
    `manifest build --suite`) is remembered by its hash, and every command finds it from the manifest."""
    import json

    monkeypatch.chdir(generated)
    scenario = json.loads((generated / "gen" / "suite.json").read_text())["scenarios"][0]["id"]
    result = invoke(*(a.replace("{scenario}", scenario) for a in args))
    assert result.exit_code == 0, result.output
    assert says in result.output, result.output
    if name == "replay":
        assert invoke("replay", "r.json").exit_code == 0


def test_an_unknown_suite_and_a_wrong_suite_say_what_to_do(generated, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Issue 27 (defect 4): elsewhere (no remembered suite), a generated suite's result names the suite and says to
    give its folder with --suite; a --suite that is not the manifest's suggests leaving it out; given once, the
    folder is remembered."""
    import shutil

    for name in ("g.json", "dev.json"):
        shutil.copy(generated / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    unknown = error_line(invoke("verify", "g.json"))
    assert "names suite 'generated-dev', which is not shipped" in unknown and "--suite FOLDER" in unknown
    wrong = error_line(invoke("verify", "g.json", "--suite", "emberbench-v1-public"))
    assert ("manifest suite_id is 'generated-dev', but the suite/running code has 'emberbench-v1-public' (this "
            "manifest's suite is generated-dev 1.0.0: leave --suite out to use it, or give its folder with --suite)"
            ) in wrong
    built = invoke("manifest", "build", "--seeds", "0", "1", "2", "--suite", str(generated / "gen"), "--out", "m.json")
    assert built.exit_code == 0 and (tmp_path / "m.json").read_bytes() == (tmp_path / "dev.json").read_bytes()
    assert invoke("verify", "g.json").exit_code == 0
