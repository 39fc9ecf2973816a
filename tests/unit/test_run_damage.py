"""Damage to a run's refs and journal (issue 22, defects 2, 7 and 11), on a local and an S3 store.

Each damage must be an integrity error naming the object for a rerun, for
`store fsck` and for `store audit` alike, and `store fsck --repair` must get
the run back from what it can verify: its stored result.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from emberbench.runs.audit import DAMAGED, OK, audit_store
from emberbench.errors import RunIntegrityError
from emberbench.results.manifest import write_manifest
from emberbench.evaluation.run_info import read_run_info
from emberbench.evaluation.runner import run_evaluation
from emberbench.store.journal import ENTRY, FINISH, HEADER, encode_entry
from emberbench.evaluation.store_runner import open_store
from tests.run_support import invoke, small_manifest


def _s3(store) -> bool:  # noqa: ANN001
    return store.locator.startswith("s3://")


def write_raw(store, rel: str, data: bytes) -> None:  # noqa: ANN001
    """Overwrite a store entry around the store (a file, or an S3 object), as damage would."""
    if _s3(store):
        store.backend.client.put_object(Bucket=store.backend.bucket, Key=store.backend.prefix + rel, Body=data)
        return
    path = store.root / rel
    os.chmod(path, 0o644)
    path.write_bytes(data)


def write_raw_journal(store, name: str, data: bytes) -> None:  # noqa: ANN001
    """Replace a journal by ``data`` around the store (local: the file; S3: one segment)."""
    if _s3(store):
        for item in store.backend.list_prefix(f"{store.backend.prefix}journals/{name}/"):
            store.backend.client.delete_object(Bucket=store.backend.bucket, Key=item["Key"])
        store.backend.import_journal(name, data)
    else:
        store.layout.journal_path(name).write_bytes(data)


@pytest.fixture(params=["local", "s3"])
def finished(request, tmp_path, suite):  # noqa: ANN001
    """A store with one finished greedy run (model 'm'): (store, its locator, manifest file, output, run name)."""
    locator = str(tmp_path / "s") if request.param == "local" else request.getfixturevalue("s3_locator")
    store = open_store(locator)
    manifest = small_manifest(suite)
    write_manifest(manifest, tmp_path / "m.json")
    out = tmp_path / "g.json"
    run_evaluation(manifest, suite, "greedy", "m", out, store=store)
    (name,) = store.journal_names()
    yield store, locator, tmp_path / "m.json", out, name
    store.close()


def _rerun(locator: str, manifest: Path, out: Path):  # noqa: ANN202
    return invoke("run", "--manifest", manifest, "--policy", "greedy", "--model-id", "m", "--out", out,
                  "--executor", "local", "--store", locator)


def _one_error(result) -> str:  # noqa: ANN001
    lines = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert result.exit_code == 1 and len(lines) == 1 and "Traceback" not in result.output, result.output
    return lines[0]


def _drop_episode(store, name: str, index: int) -> None:  # noqa: ANN001
    """Rewrite the finished journal with valid checksums but without the entry of episode ``index``."""
    state = store.read_journal(name)
    kept = [encode_entry(ENTRY, e.data, e.keys) for e in state.entries if e.data.get("index") != index]
    write_raw_journal(store, name, HEADER + b"".join(kept) + encode_entry(FINISH, state.finish.data,
                                                                           state.finish.keys))


def _sound_again(store, locator: str, manifest: Path, out: Path, suite, name: str) -> None:  # noqa: ANN001
    """After a repair: fsck and audit agree the store is sound, and the run can be run again."""
    assert invoke("store", "fsck", "--store", locator, "--connectivity").exit_code == 0
    assert [v.state for v in audit_store(store, suite)] == [OK]
    again = _rerun(locator, manifest, out)
    assert again.exit_code == 0, again.output
    info = read_run_info(store, name)
    assert info is not None and info.model_id == "m" and info.state == "complete"


def test_a_run_info_ref_holding_no_key_is_an_integrity_error_fsck_repair_rebuilds(finished, suite) -> None:  # noqa: ANN001
    """Defect 11: 65 random bytes in refs/runs/run-<id>: rerun, fsck and audit all call it an integrity error
    naming the ref; `fsck --repair` rebuilds the run-info from the verified result; then all is well."""
    store, locator, manifest, out, name = finished
    write_raw(store, f"refs/runs/{name}", os.urandom(65))
    with pytest.raises(RunIntegrityError, match=f"integrity error: ref runs/{name} is damaged"):
        run_evaluation(small_manifest(suite), suite, "greedy", "m", out, store=store)
    line = _one_error(_rerun(locator, manifest, out))
    assert f"integrity error: ref runs/{name} is damaged" in line and "fsck --repair" in line
    verdict, = audit_store(store, suite)
    assert verdict.state == DAMAGED and f"ref runs/{name}" in verdict.message
    audit = invoke("store", "audit", "--store", locator)
    assert audit.exit_code == 1 and f"ref runs/{name}" in audit.output
    check = invoke("store", "fsck", "--store", locator)
    assert check.exit_code == 1 and f"damaged  run {name}: integrity error: ref runs/{name}" in check.output
    repair = invoke("store", "fsck", "--store", locator, "--repair")
    assert repair.exit_code == 0, repair.output
    assert f"ref runs/{name} rebuilt" in repair.output and "0 not repaired" in repair.output
    info = read_run_info(store, name)
    assert info.verification is not None and "rebuilt" in info.verification.detail
    _sound_again(store, locator, manifest, out, suite, name)


def test_a_finished_journal_missing_an_episode_is_an_integrity_error_fsck_repair_rebuilds(finished, suite) -> None:  # noqa: ANN001
    """Defect 11: a finished journal rewritten (valid checksums) without one episode: rerun, fsck and audit all
    call it damage of the journal; `fsck --repair` rebuilds the journal from the verified result."""
    store, locator, manifest, out, name = finished
    before = store.read_journal(name)
    _drop_episode(store, name, 2)
    with pytest.raises(RunIntegrityError, match=f"integrity error: journal {name} is damaged: it is finished but "
                                                r"journals 3 of the manifest's 4 episodes \(episode 2 is missing\)"):
        run_evaluation(small_manifest(suite), suite, "greedy", "m", out, store=store)
    assert f"integrity error: journal {name} is damaged" in _one_error(_rerun(locator, manifest, out))
    verdict, = audit_store(store, suite)
    assert verdict.state == DAMAGED and "episode 2 is missing" in verdict.message
    check = invoke("store", "fsck", "--store", locator)
    assert check.exit_code == 1 and "episode 2 is missing" in check.output
    from emberbench.evaluation.run_damage import store_damage

    assert [d.subject for d in store_damage(store)] == [f"journal {name}"]
    repair = invoke("store", "fsck", "--store", locator, "--repair")
    assert repair.exit_code == 0, repair.output
    assert f"run {name}: journal rebuilt from its verified result" in repair.output
    after = store.read_journal(name)
    assert sorted(e.data["index"] for e in after.entries[1:]) == [0, 1, 2, 3]
    assert after.entries[0].data == before.entries[0].data and after.finish.data == before.finish.data
    _sound_again(store, locator, manifest, out, suite, name)


def test_a_journal_damaged_before_its_end_is_rebuilt_from_the_result(finished, suite) -> None:  # noqa: ANN001
    """A journal with a damaged entry before valid ones (unreadable: no writer can open it) is rebuilt by
    `fsck --repair` from the run's verified result; fsck and audit called it damaged before."""
    store, locator, manifest, out, name = finished
    state = store.read_journal(name)
    frames = [encode_entry(ENTRY, e.data, e.keys) for e in state.entries]
    broken = bytearray(frames[2])
    broken[-1] ^= 0xFF
    frames[2] = bytes(broken)
    write_raw_journal(store, name, HEADER + b"".join(frames) + encode_entry(FINISH, state.finish.data,
                                                                            state.finish.keys))
    line = _one_error(_rerun(locator, manifest, out))
    assert f"integrity error: the run journal {name}" in line and "fsck --repair" in line
    assert [v.state for v in audit_store(store, suite)] == [DAMAGED]
    assert invoke("store", "fsck", "--store", locator).exit_code == 1
    repair = invoke("store", "fsck", "--store", locator, "--repair")
    assert repair.exit_code == 0 and "journal rebuilt from its verified result" in repair.output, repair.output
    assert store.read_journal(name).entries[0].data == state.entries[0].data
    _sound_again(store, locator, manifest, out, suite, name)


def test_damage_without_a_result_is_reported_not_guessed(tmp_path, suite) -> None:  # noqa: ANN001
    """An unfinished run whose run-info ref holds no key: repair removes the ref (a rerun writes it again) and
    says the run-info could not be rebuilt; a journal damaged with no result to rebuild it from is left."""
    store = open_store(tmp_path / "s")
    manifest = small_manifest(suite)
    write_manifest(manifest, tmp_path / "m.json")
    out = tmp_path / "g.json"
    run_evaluation(manifest, suite, "greedy", "m", out, store=store)
    (name,) = store.journal_names()
    store.refs.delete(f"results/{name}")
    state = store.read_journal(name)
    write_raw_journal(store, name, HEADER + b"".join(encode_entry(ENTRY, e.data, e.keys) for e in state.entries))
    write_raw(store, f"refs/runs/{name}", b"x" * 65)
    repair = invoke("store", "fsck", "--store", tmp_path / "s", "--repair")
    assert repair.exit_code == 1
    assert f"removed ref runs/{name}" in repair.output and "model id is unknown" in repair.output
    assert invoke("store", "fsck", "--store", tmp_path / "s").exit_code == 0
    rerun = _rerun(str(tmp_path / "s"), tmp_path / "m.json", out)
    assert rerun.exit_code == 0, rerun.output
    assert read_run_info(store, name).model_id == "m"


@pytest.mark.parametrize("kind", ["fifo", "symlink", "dangling-symlink"])
def test_a_journal_that_is_a_fifo_or_link_is_removed_by_rm_run(kind, tmp_path, suite) -> None:  # noqa: ANN001
    """Defect 7 (last clause): rm-run removes a FIFO or link where the run's journal belongs, without opening
    or following it; the link's target is left as it was."""
    store = open_store(tmp_path / "s")
    run_evaluation(small_manifest(suite), suite, "greedy", "m", tmp_path / "g.json", store=store)
    (name,) = store.journal_names()
    path = store.layout.journal_path(name)
    target = tmp_path / "outside.journal"
    target.write_bytes(path.read_bytes())
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(target if kind == "symlink" else tmp_path / "nowhere")
    done = invoke("store", "rm-run", name, "--store", tmp_path / "s", "--apply")
    assert done.exit_code == 0, done.output
    assert not os.path.lexists(path) and store.journal_names() == [] and list(store.refs.names()) == []
    assert target.read_bytes()[:4] == b"EBSJ"


@pytest.mark.parametrize("kind", ["fifo", "symlink"])
def test_a_journal_that_is_a_fifo_or_link_is_replaced_by_fsck_repair(kind, tmp_path, suite) -> None:  # noqa: ANN001
    """Defect 7 (last clause): `fsck --repair` removes the FIFO or link (never opened, never followed) and
    rebuilds the run's journal from its verified result."""
    store = open_store(tmp_path / "s")
    manifest = small_manifest(suite)
    write_manifest(manifest, tmp_path / "m.json")
    out = tmp_path / "g.json"
    run_evaluation(manifest, suite, "greedy", "m", out, store=store)
    (name,) = store.journal_names()
    path = store.layout.journal_path(name)
    target = tmp_path / "outside.journal"
    target.write_bytes(b"not to be touched")
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(target)
    assert invoke("store", "fsck", "--store", tmp_path / "s").exit_code == 1
    repair = invoke("store", "fsck", "--store", tmp_path / "s", "--repair")
    assert repair.exit_code == 0, repair.output
    assert f"removed a {'FIFO' if kind == 'fifo' else 'symbolic link'}" in repair.output
    assert "journal rebuilt from its verified result" in repair.output
    assert path.is_file() and not path.is_symlink() and target.read_bytes() == b"not to be touched"
    _sound_again(store, str(tmp_path / "s"), tmp_path / "m.json", out, suite, name)


def test_rm_run_with_an_empty_or_short_id_deletes_nothing(finished) -> None:  # noqa: ANN001
    """Defect 2: `store rm-run "" --apply` (or 3 digits) is a usage error on both backends; the run stays."""
    store, locator, _, _, name = finished
    for bad in ("", name[4:7], "run-", f"run-{name[4:7]}"):
        result = invoke("store", "rm-run", bad, "--store", locator, "--apply")
        assert result.exit_code == 2 and "run id" in result.output, (bad, result.output)
    assert store.journal_names() == [name] and f"results/{name}" in store.refs
    done = invoke("store", "rm-run", name[4:8], "--store", locator, "--apply")
    assert done.exit_code == 0 and store.journal_names() == []
