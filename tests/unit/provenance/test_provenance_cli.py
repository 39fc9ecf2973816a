"""The signing commands: keys, run --signing-key, runs attest/verify/show/export, verify --attestation, rm-run."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from emberbench.results.manifest import write_manifest
from emberbench.provenance import attestation_ref
from emberbench.evaluation.run_info import read_run_info, run_info_ref
from emberbench.store import journal_name
from emberbench.evaluation.store_runner import open_store
from tests.run_support import SMALL_IDS, error_line, invoke, small_manifest


@pytest.fixture
def setup(tmp_path: Path, suite):  # noqa: ANN001
    """A manifest file, a generated key and a keyring trusting it."""
    manifest = small_manifest(suite, seeds=(3,), ids=SMALL_IDS[:1])
    write_manifest(manifest, tmp_path / "m.json")
    assert invoke("keys", "generate", "--out", tmp_path / "key").exit_code == 0
    added = invoke("keys", "add", tmp_path / "key.pub", "--keyring", tmp_path / "ring.json", "--name", "ci")
    assert added.exit_code == 0, added.output
    return tmp_path, manifest


def _run(tmp: Path, *extra: str, store: str | None = None, model: str = "g"):  # noqa: ANN202
    return invoke("run", "--manifest", tmp / "m.json", "--policy", "greedy", "--model-id", model,
                  "--out", tmp / f"{model}.json", "--store", store or tmp / "store", *extra)


def test_keys_generate_add_and_list(tmp_path: Path) -> None:
    """keys generate writes KEY (0600) and KEY.pub, then refuses to overwrite; add and list show the key."""
    made = invoke("keys", "generate", "--out", tmp_path / "k")
    assert made.exit_code == 0 and "signing key " in made.output
    assert stat.S_IMODE(os.stat(tmp_path / "k").st_mode) == 0o600
    again = invoke("keys", "generate", "--out", tmp_path / "k")
    assert "exists" in error_line(again)
    assert invoke("keys", "add", tmp_path / "k.pub", "--keyring", tmp_path / "r.json", "--name", "alice",
                  "--not-after", "2030-01-01T00:00:00Z").exit_code == 0
    listed = invoke("keys", "list", "--keyring", tmp_path / "r.json")
    assert listed.exit_code == 0 and listed.output.rstrip().endswith("- .. 2030-01-01T00:00:00Z  alice")
    bad = invoke("keys", "add", tmp_path / "k.pub", "--keyring", tmp_path / "r.json", "--name", "a",
                 "--not-before", "tomorrow")
    assert bad.exit_code == 2 and "ISO 8601" in bad.output
    assert "already trusts" in error_line(invoke("keys", "add", tmp_path / "k.pub", "--keyring",
                                                 tmp_path / "r.json", "--name", "b"))


def test_signed_run_verifies_with_the_keyring(setup) -> None:  # noqa: ANN001
    """run --signing-key stores an attestation made at the end of the run; runs verify names the signer."""
    tmp, manifest = setup
    ran = _run(tmp, "--signing-key", tmp / "key")
    assert ran.exit_code == 0, ran.output
    assert "attestation: " in ran.output and "signed by key " in ran.output
    run = journal_name(manifest.hash, "g")
    checked = invoke("runs", "verify", run[4:12], "--store", tmp / "store", "--keyring", tmp / "ring.json")
    assert checked.exit_code == 0, checked.output
    assert checked.output.splitlines()[1].startswith("signature: signed by ci (key ")
    unchecked = invoke("runs", "verify", run[4:12], "--store", tmp / "store")
    assert "signature not checked (no keyring given)" in unchecked.output and unchecked.exit_code == 0
    shown = invoke("runs", "show", run[4:12], "--store", tmp / "store").output
    assert f"attestation: attestations/{run} -> " in shown
    store = open_store(tmp / "store")
    from emberbench.provenance.attest import check_run_attestation
    from emberbench.provenance.keys import read_keyring

    predicate = check_run_attestation(store, run, read_keyring(tmp / "ring.json")).verified.statement.predicate
    assert predicate.attested.end_of_run and predicate.invocation.executor == "local"
    assert predicate.invocation.nodes is not None and predicate.simulator_version == manifest.simulator_version


def test_signing_key_from_the_environment_and_runs_attest(setup, monkeypatch) -> None:  # noqa: ANN001
    """$EMBERBENCH_SIGNING_KEY signs a run; runs attest signs an unsigned run after the fact."""
    tmp, manifest = setup
    monkeypatch.setenv("EMBERBENCH_SIGNING_KEY", str(tmp / "key"))
    assert "attestation: " in _run(tmp).output
    monkeypatch.delenv("EMBERBENCH_SIGNING_KEY")
    assert "attestation" not in _run(tmp, model="unsigned").output
    run = journal_name(manifest.hash, "unsigned")
    before = invoke("runs", "verify", run[4:12], "--store", tmp / "store", "--keyring", tmp / "ring.json")
    assert before.output.splitlines()[1] == "signature: unsigned (the run has no attestation)"
    refused = invoke("runs", "attest", run[4:12], "--store", tmp / "store")
    assert refused.exit_code == 2 and "--signing-key" in refused.output
    attested = invoke("runs", "attest", run[4:12], "--store", tmp / "store", "--signing-key", tmp / "key")
    assert attested.exit_code == 0 and "(policy code " in attested.output
    monkeypatch.setenv("EMBERBENCH_KEYRING", str(tmp / "ring.json"))
    after = invoke("runs", "verify", run[4:12], "--store", tmp / "store")
    assert after.output.splitlines()[1].startswith("signature: signed by ci")


def test_bad_signing_key_stops_the_run_before_any_work(setup) -> None:  # noqa: ANN001
    """A missing key file is one error line; nothing is written. --signing-key with --no-store is a usage error."""
    tmp, _ = setup
    assert "cannot read key file" in error_line(_run(tmp, "--signing-key", tmp / "nope"))
    assert not (tmp / "g.json").exists() and not (tmp / "store").exists()
    nostore = invoke("run", "--manifest", tmp / "m.json", "--policy", "greedy", "--model-id", "g", "--out",
                     tmp / "g.json", "--no-store", "--signing-key", tmp / "key")
    assert nostore.exit_code == 2 and "needs a store" in nostore.output


def test_forged_run_info_fails_runs_verify_in_one_line(setup) -> None:  # noqa: ANN001
    """An edited run-info makes runs verify exit 1, with the failed check on its signature line."""
    tmp, manifest = setup
    _run(tmp, "--signing-key", tmp / "key")
    run = journal_name(manifest.hash, "g")
    store = open_store(tmp / "store")
    info = read_run_info(store, run)
    store.refs.set(run_info_ref(run), store.put(info.replace(user="mallory").to_bytes()))
    checked = invoke("runs", "verify", run[4:12], "--store", tmp / "store", "--keyring", tmp / "ring.json")
    assert checked.exit_code == 1
    lines = checked.output.splitlines()
    assert lines[0].startswith("failed: ") and "run-info's user is 'mallory'" in lines[0]
    assert lines[1].startswith("signature: attestation FAILED: ")


def test_exported_attestation_verifies_with_the_artifact(setup) -> None:  # noqa: ANN001
    """runs export --attestation writes the envelope as stored; verify --attestation checks it against a keyring."""
    tmp, manifest = setup
    _run(tmp, "--signing-key", tmp / "key")
    run = journal_name(manifest.hash, "g")
    exported = invoke("runs", "export", run[4:12], "--store", tmp / "store", "--out", tmp / "x.json",
                      "--attestation", tmp / "att.json")
    assert exported.exit_code == 0, exported.output
    store = open_store(tmp / "store")
    assert (tmp / "att.json").read_bytes() == store.get(store.refs.get(attestation_ref(run)))
    checked = invoke("verify", tmp / "x.json", "--attestation", tmp / "att.json", "--keyring", tmp / "ring.json")
    assert checked.exit_code == 0 and checked.output.startswith("ok: ") and "; signed by ci (key " in checked.output
    nokeys = invoke("verify", tmp / "x.json", "--attestation", tmp / "att.json")
    assert nokeys.exit_code == 2 and "--keyring" in nokeys.output
    invoke("keys", "generate", "--out", tmp / "other")
    invoke("keys", "add", tmp / "other.pub", "--keyring", tmp / "other-ring.json", "--name", "other")
    wrong = invoke("verify", tmp / "x.json", "--attestation", tmp / "att.json", "--keyring", tmp / "other-ring.json")
    assert "which is not in the keyring" in error_line(wrong)
    unsigned = invoke("runs", "export", run[4:12], "--store", tmp / "store", "--out", tmp / "y.json",
                      "--attestation", tmp / "att.json")
    assert "exists" in error_line(unsigned) and not (tmp / "y.json").exists()


def test_verify_attestation_of_another_artifact_fails(setup) -> None:  # noqa: ANN001
    """An attestation given with an artifact it is not about fails in one line."""
    tmp, manifest = setup
    _run(tmp, "--signing-key", tmp / "key")
    _run(tmp, model="h")
    run = journal_name(manifest.hash, "g")
    invoke("runs", "export", run[4:12], "--store", tmp / "store", "--out", tmp / "x.json", "--attestation",
           tmp / "att.json")
    wrong = invoke("verify", tmp / "h.json", "--attestation", tmp / "att.json", "--keyring", tmp / "ring.json")
    assert "is about result" in error_line(wrong)


def test_rm_run_removes_the_attestation_ref(setup) -> None:  # noqa: ANN001
    """store rm-run --apply drops attestations/<run> with the run's other refs (gc then collects it)."""
    tmp, manifest = setup
    _run(tmp, "--signing-key", tmp / "key")
    run = journal_name(manifest.hash, "g")
    removed = invoke("store", "rm-run", run, "--store", tmp / "store", "--apply")
    assert removed.exit_code == 0, removed.output
    assert attestation_ref(run) not in open_store(tmp / "store").refs


def test_signed_run_on_s3_verifies(setup, s3_locator) -> None:  # noqa: ANN001
    """The same commands on the S3 backend: signed at the end of the run, verified by runs verify."""
    tmp, manifest = setup
    ran = _run(tmp, "--signing-key", tmp / "key", store=s3_locator)
    assert ran.exit_code == 0, ran.output
    run = journal_name(manifest.hash, "g")
    checked = invoke("runs", "verify", run[4:12], "--store", s3_locator, "--keyring", tmp / "ring.json")
    assert checked.exit_code == 0 and checked.output.splitlines()[1].startswith("signature: signed by ci")
    document = json.loads(open_store(s3_locator).get(open_store(s3_locator).refs.get(attestation_ref(run))))
    assert document["payloadType"] == "application/vnd.in-toto+json"
