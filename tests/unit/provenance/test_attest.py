"""Attested runs in a store, on both backends: a signed run verifies; every forgery fails in one line."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from emberbench.io.canonical import canonical_bytes
from emberbench.runs.verify import verify_run
from emberbench.errors import AttestationError, StoreUsageError
from emberbench.provenance import attest_run, attestation_ref, check_run_attestation, verify_attestation
from emberbench.provenance.attest import MAX_ATTESTATION_BYTES, describe_stored_attestation, sign_statement
from emberbench.provenance.dsse import Envelope, Signature, sign_envelope
from emberbench.provenance.statement import parse_statement
from emberbench.evaluation.run_info import read_run_info, run_info_ref
from emberbench.evaluation.runner import run_evaluation
from emberbench.store import journal_name
from emberbench.evaluation.store_runner import open_store
from tests.run_support import SMALL_IDS, small_manifest
from tests.unit.provenance.support import fixed_key, keyring_of, overwrite_object, stored_frame, trusted

SIGNER = fixed_key(0)
RING = keyring_of(trusted(SIGNER, "ci signer"))


@dataclass
class SignedRun:
    store: Any
    run: str
    key: str
    out: Path
    locator: str


def _complete_run(store: Any, suite: Any, out: Path, model: str = "g", policy: str = "greedy") -> str:
    manifest = small_manifest(suite, seeds=(3,), ids=SMALL_IDS[:1])
    run_evaluation(manifest, suite, policy, model, out, store=store)
    return journal_name(manifest.hash, model)


@pytest.fixture(params=["local", "s3"])
def signed(request, tmp_path, suite):  # noqa: ANN001
    """A store with one complete one-episode run, attested by SIGNER."""
    locator = str(tmp_path / "store") if request.param == "local" else request.getfixturevalue("s3_locator")
    store = open_store(locator)
    out = tmp_path / "result.json"
    run = _complete_run(store, suite, out)
    made = attest_run(store, run, SIGNER)
    yield SignedRun(store, run, made.key, out, locator)
    store.close()


def _failure(signed: SignedRun, keyring: Any = RING) -> AttestationError:
    with pytest.raises(AttestationError) as info:
        check_run_attestation(signed.store, signed.run, keyring)
    assert "\n" not in str(info.value)
    return info.value


def _replace_envelope(signed: SignedRun, envelope: Envelope) -> None:
    signed.store.refs.set(attestation_ref(signed.run), signed.store.put(envelope.to_bytes()))


def _stored_envelope(signed: SignedRun) -> Envelope:
    return Envelope.from_bytes(signed.store.get(signed.key), where="test")


def test_signed_run_verifies_and_names_its_signer(signed: SignedRun, suite) -> None:  # noqa: ANN001
    """The attestation binds result, run-info and policy code; runs verify reports the signer and records it."""
    checked = check_run_attestation(signed.store, signed.run, RING)
    assert checked.state == "signed" and checked.key == signed.key
    statement = checked.verified.statement
    info = read_run_info(signed.store, signed.run)
    assert statement.subject_digest == info.result == signed.store.refs.get(f"results/{signed.run}")
    assert statement.predicate.run_info == info.replace(verification=None).to_dict()
    assert statement.predicate.policy_code.rule == "emberbench" and statement.predicate.invocation is None
    assert not statement.predicate.attested.end_of_run
    verdict = verify_run(signed.store, signed.run[4:12], suite, keyring=RING)
    assert verdict.verdict == "ok" and verdict.signature.startswith("signed by ci signer (key ")
    recorded = read_run_info(signed.store, signed.run).verification
    assert "signed by ci signer" in recorded.detail
    # Recording the verification changed the run-info; the attestation still verifies.
    assert check_run_attestation(signed.store, signed.run, RING).state == "signed"


@pytest.mark.s3  # reaches the S3 server through request.getfixturevalue
def test_unsigned_run_still_verifies_and_says_so(tmp_path, suite, request) -> None:  # noqa: ANN001
    """A run without an attestation is `unsigned`; its verdict is unaffected."""
    for locator in (str(tmp_path / "store"), request.getfixturevalue("s3_locator")):
        store = open_store(locator)
        run = _complete_run(store, suite, tmp_path / f"r{len(locator)}.json")
        assert check_run_attestation(store, run, RING).state == "unsigned"
        verdict = verify_run(store, run[4:12], suite, keyring=RING)
        assert verdict.verdict == "ok" and verdict.signature == "unsigned (the run has no attestation)"


def test_forged_result_bytes_fail(signed: SignedRun) -> None:
    """The result object's bytes replaced in place (a valid frame of other content) fail the subject check."""
    result = signed.store.refs.get(f"results/{signed.run}")
    other = signed.store.put(b'{"forged": true}')
    overwrite_object(signed.store, result, stored_frame(signed.store, other))
    error = _failure(signed)
    assert error.check == "subject" and "result fails its check" in str(error)


def test_forged_result_ref_fails(signed: SignedRun, suite, tmp_path) -> None:  # noqa: ANN001
    """The results/ ref pointed at another genuine artifact fails: the attestation is about another result."""
    other = tmp_path / "other.json"
    data = signed.out.read_bytes().replace(b'"model_id":"g"', b'"model_id":"h"')
    other.write_bytes(data)
    forged = signed.store.put(data)
    signed.store.refs.set(f"results/{signed.run}", forged)
    error = _failure(signed)
    assert error.check == "subject" and f"not this result {forged}" in str(error)
    verdict = verify_run(signed.store, signed.run[4:12], suite, keyring=RING)
    assert verdict.verdict == "failed"


@pytest.mark.parametrize(("field", "value"), [("user", "mallory"), ("host", "elsewhere"),
                                              ("policy", "random"), ("ended", "2099-01-01T00:00:00Z")])
def test_forged_run_info_fails(signed: SignedRun, field: str, value: str, suite) -> None:  # noqa: ANN001
    """A run-info rewritten with one field changed fails, naming the field; runs verify records `failed`."""
    info = read_run_info(signed.store, signed.run)
    signed.store.refs.set(run_info_ref(signed.run), signed.store.put(info.replace(**{field: value}).to_bytes()))
    error = _failure(signed)
    assert error.check == "predicate" and f"run-info's {field} is {value!r}" in str(error)
    verdict = verify_run(signed.store, signed.run[4:12], suite, keyring=RING)
    assert verdict.verdict == "failed" and verdict.detail.startswith("attestation: ")
    assert verdict.signature.startswith("attestation FAILED: ")
    assert read_run_info(signed.store, signed.run).verification.verdict == "failed"


def test_forged_run_info_fails_even_without_a_keyring(signed: SignedRun) -> None:
    """Without a keyring only the signature goes unchecked: the predicate is still compared."""
    assert check_run_attestation(signed.store, signed.run, None).state == "unchecked"
    info = read_run_info(signed.store, signed.run)
    signed.store.refs.set(run_info_ref(signed.run), signed.store.put(info.replace(user="x").to_bytes()))
    assert _failure(signed, None).check == "predicate"


def test_edited_predicate_fails_the_signature(signed: SignedRun) -> None:
    """A statement edited after signing (the signature kept) fails the signature check."""
    envelope = _stored_envelope(signed)
    statement = json.loads(envelope.payload)
    statement["predicate"]["run_info"]["user"] = "mallory"
    _replace_envelope(signed, Envelope(canonical_bytes(statement), envelope.payload_type, envelope.signatures))
    error = _failure(signed)
    assert error.check == "signature" and "does not verify" in str(error) and "ci signer" in str(error)


def test_edited_and_resigned_by_an_unknown_key_fails(signed: SignedRun) -> None:
    """Re-signing an edited statement with a key the keyring does not hold fails as an unknown key."""
    envelope = _stored_envelope(signed)
    stranger = fixed_key(99)
    _replace_envelope(signed, sign_envelope(envelope.payload, envelope.payload_type, stranger))
    error = _failure(signed)
    assert error.check == "key" and f"signed by key {stranger.keyid[:16]}, which is not in the keyring" in str(error)


def test_wrong_key_claiming_a_trusted_key_id_fails(signed: SignedRun) -> None:
    """A signature by another key that names the trusted key's id does not verify."""
    envelope = _stored_envelope(signed)
    forged = sign_envelope(envelope.payload, envelope.payload_type, fixed_key(42))
    _replace_envelope(signed, Envelope(forged.payload, forged.payload_type,
                                       (Signature(SIGNER.keyid, forged.signatures[0].sig),)))
    assert _failure(signed).check == "signature"


@pytest.mark.parametrize(("bounds", "message"), [
    ({"not_after": "2000-01-01T00:00:00Z"}, "expired at 2000-01-01T00:00:00Z"),
    ({"not_before": "2999-01-01T00:00:00Z"}, "not valid before 2999-01-01T00:00:00Z"),
])
def test_expired_and_not_yet_valid_keys_fail(signed: SignedRun, bounds, message) -> None:  # noqa: ANN001
    """A trusted key outside its validity period at the attestation's time fails as a key error."""
    ring = keyring_of(trusted(SIGNER, "ci signer", **bounds))
    error = _failure(signed, ring)
    assert error.check == "key" and message in str(error)


def test_truncated_signature_fails(signed: SignedRun) -> None:
    """A signature cut short is named as such."""
    envelope = _stored_envelope(signed)
    cut = Envelope(envelope.payload, envelope.payload_type, (Signature(SIGNER.keyid, envelope.signatures[0].sig[:40]),))
    _replace_envelope(signed, cut)
    error = _failure(signed)
    assert error.check == "signature" and "40 bytes, not the 64" in str(error)


def test_bad_payload_type_fails(signed: SignedRun) -> None:
    """An envelope of another payload type fails, whether its type was changed or it was signed that way."""
    envelope = _stored_envelope(signed)
    _replace_envelope(signed, Envelope(envelope.payload, "application/json", envelope.signatures))
    assert _failure(signed).check == "signature"  # the type is part of what is signed
    _replace_envelope(signed, sign_envelope(envelope.payload, "application/json", SIGNER))
    error = _failure(signed)
    assert error.check == "envelope" and "payloadType 'application/json' is not supported" in str(error)


def test_missing_or_damaged_attestation_object_fails(signed: SignedRun) -> None:
    """The attestation object replaced under its key, or garbage under its ref, fails as an envelope error."""
    overwrite_object(signed.store, signed.key, stored_frame(signed.store, signed.store.put(b"{}")))
    assert _failure(signed).check == "envelope"
    signed.store.refs.set(attestation_ref(signed.run), signed.store.put(b"not json"))
    assert _failure(signed).check == "envelope"


def test_attesting_requires_a_complete_run_with_consistent_refs(tmp_path, suite) -> None:  # noqa: ANN001
    """An incomplete run, or one whose results/ ref and run-info disagree, is refused."""
    store = open_store(tmp_path / "store")
    run = _complete_run(store, suite, tmp_path / "r.json")
    info = read_run_info(store, run)
    store.refs.set(run_info_ref(run), store.put(info.replace(state="failed").to_bytes()))
    with pytest.raises(StoreUsageError, match="is failed .*only a complete run"):
        attest_run(store, run, SIGNER)
    store.refs.set(run_info_ref(run), store.put(info.to_bytes()))
    store.refs.set(f"results/{run}", store.put(b"{}"))
    with pytest.raises(StoreUsageError, match="its results/ ref names"):
        attest_run(store, run, SIGNER)


def test_future_dated_attestation_fails(signed: SignedRun) -> None:
    """A statement claiming a time beyond the clock (plus skew) is refused."""
    statement = _stored_statement(signed)
    later = statement.predicate.attested.at
    assert check_run_attestation(signed.store, signed.run, RING, now=later).state == "signed"
    with pytest.raises(AttestationError, match="in the future"):
        check_run_attestation(signed.store, signed.run, RING, now="2000-01-01T00:00:00Z")


def _stored_statement(signed: SignedRun):  # noqa: ANN202
    return parse_statement(_stored_envelope(signed).payload, where="test")


def test_exported_artifact_checks_subject_manifest_and_model(signed: SignedRun) -> None:
    """verify --attestation's call: the attestation must be about this artifact's digest, manifest and model."""
    data = signed.store.get(signed.key)
    statement = _stored_statement(signed)
    digest = statement.subject_digest
    info = statement.predicate.run_info
    ok = verify_attestation(data, RING, result_digest=digest, where="a", manifest_hash=info["manifest_hash"],
                            model_id=info["model_id"])
    assert ok.signer.name == "ci signer"
    with pytest.raises(AttestationError, match="is about result"):
        verify_attestation(data, RING, result_digest="0" * 64, where="a")
    with pytest.raises(AttestationError, match="it signs model_id 'g', the result has 'h'"):
        verify_attestation(data, RING, result_digest=digest, where="a", model_id="h")


def test_attesting_again_moves_the_ref_and_keeps_history_as_objects(signed: SignedRun) -> None:
    """A second attestation (another key) replaces the ref; the first envelope is still an object until gc."""
    other = fixed_key(5)
    again = attest_run(signed.store, signed.run, other)
    assert signed.store.refs.get(attestation_ref(signed.run)) == again.key != signed.key
    assert signed.store.has(signed.key)
    assert _failure(signed).check == "key"  # the new signer is not in RING
    assert check_run_attestation(signed.store, signed.run, keyring_of(trusted(other, "o"))).state == "signed"


def test_envelope_payload_is_never_reserialized(signed: SignedRun) -> None:
    """Verification reads the payload's bytes as signed: a payload with extra whitespace still verifies."""
    statement = json.loads(_stored_envelope(signed).payload)
    spaced = json.dumps(statement, indent=3).encode()
    envelope = sign_envelope(spaced, "application/vnd.in-toto+json", SIGNER)
    _replace_envelope(signed, envelope)
    assert check_run_attestation(signed.store, signed.run, RING).state == "signed"
    assert base64.b64decode(envelope.to_dict()["payload"]) == spaced


def test_statement_with_another_predicate_type_is_refused() -> None:
    """The future golden statement (predicate v2) is refused by the reader, naming the type."""
    from tests.unit.provenance.support import GOLDEN

    payload = (GOLDEN / "attestation-statement-future.json").read_bytes()
    with pytest.raises(AttestationError, match=r"predicateType '.*run-provenance/v2' is not supported"):
        parse_statement(payload, where="future")
    envelope = sign_statement(parse_statement((GOLDEN / "attestation-statement-1.0.json").read_bytes(),
                                              where="golden"), SIGNER)
    assert parse_statement(envelope.payload, where="again").subject_digest.startswith("46bb")


def test_gc_keeps_the_attestation_and_collects_a_replaced_one(signed: SignedRun) -> None:
    """The attestations/ ref is a gc root: the current envelope stays, one it no longer names is collected."""
    from emberbench.store import gc

    replaced = attest_run(signed.store, signed.run, SIGNER, simulator_version="0.0.1-test")
    assert replaced.key != signed.key
    gc(signed.store, grace_seconds=0, apply=True)
    assert signed.store.has(replaced.key) and not signed.store.has(signed.key)
    assert check_run_attestation(signed.store, signed.run, RING).state == "signed"


def test_an_attestation_over_a_version_1_0_run_info_still_verifies_once_rewritten_as_1_2() -> None:
    """The golden attestation signs a version 1.0 run-info; the run-info read back and written as 1.2
    (``model_usage`` and ``nodes`` null, or counts a later format adds) still matches every field it signed."""
    from emberbench.evaluation.run_info import RunInfo
    from tests.unit.provenance.support import GOLDEN, GOLDEN_AT

    data = (GOLDEN / "attestation-envelope-1.0.json").read_bytes()
    info = RunInfo.from_dict(json.loads((GOLDEN / "run-info-1.0.json").read_bytes()))
    assert info.to_dict()["run_info_version"] == "1.2"
    ring = keyring_of(trusted(fixed_key(0)))
    for current in (info, info.replace(nodes=(("eval-node-1", 36),))):
        verified = verify_attestation(data, ring, result_digest=info.result, where="golden", run_info=current,
                                      now=GOLDEN_AT)
        assert verified.statement.predicate.run_info["run_info_version"] == "1.0"
    with pytest.raises(AttestationError, match="the run-info's host is 'elsewhere'"):
        verify_attestation(data, ring, result_digest=info.result, where="golden",
                           run_info=info.replace(host="elsewhere"), now=GOLDEN_AT)


def test_an_attestation_over_the_cap_is_refused_in_one_line_by_each_reader(signed: SignedRun) -> None:
    """An attestation object larger than the cap is refused from its frame header (one read), by the check,
    by `runs show`'s line and by the reproduction summary, each saying it is too large."""
    from emberbench.runs.reproduce import _signed

    big = signed.store.put(b"{" + b" " * MAX_ATTESTATION_BYTES + b"}")
    signed.store.refs.set(attestation_ref(signed.run), big)
    assert f"is larger than {MAX_ATTESTATION_BYTES} bytes" in str(_failure(signed))
    assert describe_stored_attestation(signed.store, signed.run).endswith(
        f"unreadable: larger than {MAX_ATTESTATION_BYTES} bytes")
    assert _signed(signed.store, signed.run) == {"error": "too large"}
