"""Recovering a store: `fsck --repair` regenerates lost records and results; `rm-run` deletes a run."""

from __future__ import annotations

import pytest

from emberbench.errors import OutputLockedError, StoreUsageError
from emberbench.policies import GreedyPolicy, StayPolicy
from emberbench.evaluation.runner import run_evaluation
from emberbench.store import fsck, gc
from emberbench.runs.catalog import resolve_run
from emberbench.runs.repair import remove_run, repair_store
from emberbench.evaluation.store_runner import open_store
from tests.run_support import flip_byte, invoke, small_manifest

CHANGING = {"stay": False}


def changing_factory():  # noqa: ANN201
    """Greedy, or (once CHANGING['stay'] is set) stay: a policy that does not reproduce its run."""
    return StayPolicy() if CHANGING["stay"] else GreedyPolicy()


@pytest.fixture()
def finished(tmp_path, suite):  # noqa: ANN001
    """A store with one finished greedy run (model 'm'); yields (store, out, journal name, record keys)."""
    store = open_store(tmp_path / "s")
    out = tmp_path / "g.json"
    run_evaluation(small_manifest(suite), suite, "greedy", "m", out, store=store)
    (name,) = store.journal_names()
    keys = [e.data["digest"] for e in store.read_journal(name).entries if "digest" in e.data]
    return store, out, name, keys


def test_fsck_repair_regenerates_lost_records(finished, suite) -> None:  # noqa: ANN001
    """Issue 11 defect 4: lost records of a finished run (and its manifest) are played again by `fsck --repair`."""
    store, out, name, keys = finished
    gc(store, grace_seconds=0, apply=True)  # deletes what no root holds (the records, before finished journals were roots)
    lost = keys[::2]
    for key in lost:
        store.layout.object_path(key).unlink(missing_ok=True)
    store.layout.object_path(store.read_journal(name).entries[0].keys[0]).unlink(missing_ok=True)  # the manifest
    missing = [k for k in keys if not store.has(k)]
    assert set(lost) <= set(missing)
    report = repair_store(store, suite)
    assert report.ok and len(report.repaired) == len(missing) + 1  # and the manifest, from the stored result
    assert any("manifest" in line for line in report.repaired)
    assert all(store.get(k, verify_data=True) for k in keys)
    assert fsck(store, verify_data=True, connectivity=True).ok


def test_fsck_repair_cli_rebuilds_a_quarantined_result(finished) -> None:  # noqa: ANN001
    """Issue 11 defect 4: `fsck --repair` puts back a result object fsck quarantined, byte for byte."""
    store, out, name, keys = finished
    key = store.refs.get(f"results/{name}")
    flip_byte(store.layout.object_path(key), 150)
    flip_byte(store.layout.object_path(keys[0]), 150)
    result = invoke("store", "fsck", "--store", store.root, "--repair", "--connectivity")
    assert result.exit_code == 0, result.output
    assert f"result {key} rebuilt" in result.output and f"record {keys[0]} regenerated" in result.output
    assert store.get(key, verify_data=True) == out.read_bytes()


def test_fsck_repair_reports_what_it_cannot_repair(tmp_path, suite) -> None:  # noqa: ANN001
    """A policy that no longer reproduces its run is reported, and nothing different is stored."""
    store = open_store(tmp_path / "s")
    spec = "tests.unit.test_store_repair:changing_factory"
    CHANGING["stay"] = False
    run_evaluation(small_manifest(suite), suite, spec, "m", tmp_path / "g.json", store=store)
    (name,) = store.journal_names()
    key = next(e.data["digest"] for e in store.read_journal(name).entries if "digest" in e.data)
    store.layout.object_path(key).unlink()
    CHANGING["stay"] = True
    try:
        result = invoke("store", "fsck", "--store", store.root, "--repair", "--connectivity")
    finally:
        CHANGING["stay"] = False
    assert result.exit_code == 1
    assert f"NOT repaired: run {name}: episode 0 played again gives record" in result.output
    assert not store.has(key)


def test_fsck_repair_needs_a_loadable_policy(tmp_path, suite) -> None:  # noqa: ANN001
    """A run written by a factory object that cannot be loaded by name is not repaired, and says why."""
    store = open_store(tmp_path / "s")
    run_evaluation(small_manifest(suite), suite, lambda: GreedyPolicy(), "m", tmp_path / "g.json", store=store)
    (name,) = store.journal_names()
    key = next(e.data["digest"] for e in store.read_journal(name).entries if "digest" in e.data)
    store.layout.object_path(key).unlink()
    report = repair_store(store, suite)
    assert not report.ok and report.unrepaired[0].startswith(f"run {name}: ")
    assert "policy" in report.unrepaired[0]


def test_rm_run_is_a_dry_run_until_applied(finished) -> None:  # noqa: ANN001
    """rm-run lists the journal and refs it would delete; --apply deletes them and gc then frees the objects."""
    store, out, name, keys = finished
    dry = invoke("store", "rm-run", name[:12], "--store", store.root)
    assert dry.exit_code == 0 and "would delete journal, ref results/" in dry.output and "'greedy'" in dry.output
    assert store.journal_names() == [name]
    done = invoke("store", "rm-run", name, "--store", store.root, "--apply")
    assert done.exit_code == 0, done.output
    assert store.journal_names() == [] and not [n for n, _ in store.refs.items()]
    gc(store, grace_seconds=0, apply=True)
    assert not any(store.has(k) for k in keys)


def test_rm_run_refuses_a_run_in_progress(finished) -> None:  # noqa: ANN001
    """A run whose journal is held by a writer is not removed."""
    store, out, name, keys = finished
    with store.open_journal(name, create=False):
        with pytest.raises(OutputLockedError, match="in progress"):
            remove_run(store, name, apply=True)
    assert store.journal_names() == [name]


def test_rm_run_takes_run_ids_by_the_catalog_rule(tmp_path, suite) -> None:  # noqa: ANN001
    """rm-run resolves its argument as every run command does: a unique prefix of 4+ hex digits, or a full name."""
    store = open_store(tmp_path / "s")
    for model in ("a", "b"):
        run_evaluation(small_manifest(suite), suite, "stay", model, tmp_path / f"{model}.json", store=store)
    names = store.journal_names()
    assert resolve_run(store, names[0]) == names[0]
    with pytest.raises(StoreUsageError, match="at least 4 hex digits"):
        resolve_run(store, "run-")
    with pytest.raises(StoreUsageError, match="lowercase hex"):
        resolve_run(store, "zzzz")
