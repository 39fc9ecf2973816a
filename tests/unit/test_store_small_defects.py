"""The small defects of issue 25 (defect 6), on a local and an S3 store where they apply.

A password in an S3 locator's endpoint is never repeated; a foreign key under
``journals/`` is no damaged run; a ref over the 1 KiB cap no longer blocks
reruns for good; a store created by a run says so; gc's summary accounts for
every object.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from emberbench.evaluation.runner import run_evaluation
from emberbench.evaluation.store_runner import open_store
from emberbench.results.manifest import write_manifest
from emberbench.runs.audit import DAMAGED, OK, audit_store
from emberbench.store.journal import ENTRY, HEADER, encode_entry
from tests.run_support import invoke, small_manifest


def _s3(store) -> bool:  # noqa: ANN001
    return store.locator.startswith("s3://")


def _write_raw(store, rel: str, data: bytes) -> None:  # noqa: ANN001
    if _s3(store):
        store.backend.client.put_object(Bucket=store.backend.bucket, Key=store.backend.prefix + rel, Body=data)
        return
    path = store.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        os.chmod(path, 0o644)
    path.write_bytes(data)


@pytest.fixture(params=["local", "s3"])
def locator(request, tmp_path) -> str:  # noqa: ANN001
    return str(tmp_path / "s") if request.param == "local" else request.getfixturevalue("s3_locator")


@pytest.mark.parametrize("endpoint", ["http://user:s3cr3tpw@host:9000", "http%3A%2F%2Fuser%3As3cr3tpw%40host"])
def test_a_password_in_the_endpoint_is_never_echoed(endpoint: str, tmp_path: Path, suite) -> None:  # noqa: ANN001
    """`--store 's3://b/p?endpoint=http://user:pw@host'` is refused in one line that does not repeat the
    password (nor the user name)."""
    bad = f"s3://bucket/p?endpoint={endpoint}"
    for args in (("store", "ls", "--store", bad), ("runs", "ls", "--store", bad)):
        result = invoke(*args)
        assert result.exit_code == 1 and "s3cr3tpw" not in result.output and "user" not in result.output, \
            result.output
        assert "must not carry credentials" in result.output and "***" in result.output
    write_manifest(small_manifest(suite), tmp_path / "m.json")
    run = invoke("run", "--manifest", tmp_path / "m.json", "--policy", "greedy", "--model-id", "m", "--out",
                 tmp_path / "g.json", "--executor", "local", "--store", bad)
    assert run.exit_code == 1 and "s3cr3tpw" not in run.output, run.output


def test_a_foreign_key_under_journals_is_no_damaged_run(s3_locator: str, tmp_path: Path, suite) -> None:  # noqa: ANN001
    """An object `journals/foreign/bar` that the store never wrote makes no run: audit says the store's one
    run is ok, and fsck passes."""
    store = open_store(s3_locator)
    run_evaluation(small_manifest(suite), suite, "greedy", "m", tmp_path / "g.json", store=store)
    _write_raw(store, "journals/foreign/bar", b"not a segment")
    assert [v.state for v in audit_store(store, suite)] == [OK]
    audit = invoke("store", "audit", "--store", s3_locator)
    assert audit.exit_code == 0 and "1 runs audited: 1 ok" in audit.output, audit.output
    assert invoke("store", "fsck", "--store", s3_locator).exit_code == 0


def test_a_ref_over_the_cap_is_removed_by_repair_and_a_rerun_goes_on(locator: str, tmp_path: Path, suite) -> None:  # noqa: ANN001
    """A run-info ref of 2 KiB on an unfinished run: a rerun refuses it, `fsck --repair` removes it (it used to
    say so and leave it), and the rerun then completes the run and writes its run-info again."""
    store = open_store(locator)
    manifest = small_manifest(suite)
    write_manifest(manifest, tmp_path / "m.json")
    run_evaluation(manifest, suite, "greedy", "m", tmp_path / "g.json", store=store)
    (name,) = store.journal_names()
    store.refs.delete(f"results/{name}")
    state = store.read_journal(name)
    unfinished = HEADER + b"".join(encode_entry(ENTRY, e.data, e.keys) for e in state.entries[:3])
    if _s3(store):
        for item in store.backend.list_prefix(f"{store.backend.prefix}journals/{name}/"):
            store.backend.client.delete_object(Bucket=store.backend.bucket, Key=item["Key"])
        store.backend.import_journal(name, unfinished)
    else:
        store.layout.journal_path(name).write_bytes(unfinished)
    _write_raw(store, f"refs/runs/{name}", b"a" * 2048)
    rerun = ("run", "--manifest", tmp_path / "m.json", "--policy", "greedy", "--model-id", "m", "--out",
             tmp_path / "g.json", "--executor", "local", "--store", locator)
    refused = invoke(*rerun)
    assert refused.exit_code == 1 and f"ref runs/{name} is damaged" in refused.output
    repair = invoke("store", "fsck", "--store", locator, "--repair")
    assert f"removed ref runs/{name}" in repair.output, repair.output
    assert not store.refs.exists(f"runs/{name}")
    again = invoke(*rerun)
    assert again.exit_code == 0, again.output
    assert invoke("store", "fsck", "--store", locator).exit_code == 0


def test_a_run_that_creates_its_store_says_so(locator: str, tmp_path: Path, suite) -> None:  # noqa: ANN001
    """A mistyped folder or prefix no longer starts a new store silently: the run says `new empty store at ...`
    (once: the next run into it does not)."""
    write_manifest(small_manifest(suite), tmp_path / "m.json")
    args = ("run", "--manifest", tmp_path / "m.json", "--policy", "greedy", "--model-id", "m", "--out",
            tmp_path / "g.json", "--executor", "local", "--store", locator)
    first = invoke(*args)
    assert first.exit_code == 0 and "note: new empty store at " in first.output, first.output
    again = invoke(*args)
    assert again.exit_code == 0 and "new empty store" not in again.output


def test_gc_accounts_for_every_object(locator: str, tmp_path: Path, suite) -> None:  # noqa: ANN001
    """`store gc` says where every object went: referenced, kept for a live writer, within the grace period,
    or older and unreferenced; and of those, deleted, spared or already gone."""
    store = open_store(locator)
    run_evaluation(small_manifest(suite), suite, "greedy", "m", tmp_path / "g.json", store=store)
    loose = store.put(b"unreferenced")
    store.close()
    for args in (("--grace", "0"), ("--grace", "0", "--apply")):
        result = invoke("store", "gc", "--store", locator, *args)
        assert result.exit_code == 0, result.output
        first, second = result.output.splitlines()[:2]
        total, *parts = map(int, re.findall(r"(\d+) (?:objects|referenced|kept|unreferenced)", first))
        assert len(parts) == 4 and total == sum(parts), first
        older = parts[3]
        assert older >= 1
        if "--apply" in args:
            done = list(map(int, re.findall(r"(\d+) (?:\(|spared|already)", second)))
            assert sum(done) == older, second
    assert not open_store(locator).has(loose)
    assert [v.state for v in audit_store(open_store(locator), suite)] != [DAMAGED]
