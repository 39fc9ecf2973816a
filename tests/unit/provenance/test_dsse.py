"""DSSE envelopes: the PAE of the specification, strict decoding that ignores unknown fields, Ed25519 signatures."""

from __future__ import annotations

import base64
import json

import pytest

from emberbench.errors import AttestationError
from emberbench.provenance.attest import sign_statement, verify_envelope
from emberbench.provenance.dsse import MAX_ENVELOPE_BYTES, Envelope, b64decode, pae, sign_envelope, signature_verifies
from emberbench.io.versions import ATTESTATION_PAYLOAD_TYPE
from tests.unit.provenance.support import GOLDEN, GOLDEN_AT, fixed_key, golden_statement, keyring_of, trusted


def test_pae_matches_the_specification_vector() -> None:
    """PAE of the DSSE protocol's test vector, and lengths in bytes (not characters) for UTF-8 types."""
    assert pae("http://example.com/HelloWorld", b"hello world") == \
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    assert pae("t\u00e9", b"") == "DSSEv1 3 t\u00e9 0 ".encode()


def test_golden_envelope_is_reproduced_byte_for_byte() -> None:
    """Signing the golden statement with the golden key gives the golden envelope (Ed25519 is deterministic)."""
    envelope = sign_statement(golden_statement(), fixed_key(0))
    assert envelope.to_bytes() == (GOLDEN / "attestation-envelope-1.0.json").read_bytes()
    assert envelope.payload + b"\n" == (GOLDEN / "attestation-statement-1.0.json").read_bytes()


def test_signature_covers_pae_of_the_exact_payload_bytes() -> None:
    """The signature verifies over PAE(type, payload) and not over the payload alone or another type."""
    key = fixed_key(7)
    envelope = sign_envelope(b'{"a": 1}', ATTESTATION_PAYLOAD_TYPE, key)
    sig = envelope.signatures[0].sig
    assert envelope.signatures[0].keyid == key.keyid and len(sig) == 64
    assert signature_verifies(key.public_key, sig, pae(ATTESTATION_PAYLOAD_TYPE, b'{"a": 1}'))
    assert not signature_verifies(key.public_key, sig, b'{"a": 1}')
    assert not signature_verifies(key.public_key, sig, pae(ATTESTATION_PAYLOAD_TYPE, b'{"a":1}'))
    assert not signature_verifies(key.public_key, sig, pae("application/json", b'{"a": 1}'))
    assert not signature_verifies(fixed_key(8).public_key, sig, pae(ATTESTATION_PAYLOAD_TYPE, b'{"a": 1}'))
    assert not signature_verifies(key.public_key, sig[:63], pae(ATTESTATION_PAYLOAD_TYPE, b'{"a": 1}'))


@pytest.mark.parametrize("encode", [
    lambda b: base64.b64encode(b).decode(),
    lambda b: base64.b64encode(b).decode().rstrip("="),
    lambda b: base64.urlsafe_b64encode(b).decode(),
    lambda b: base64.urlsafe_b64encode(b).decode().rstrip("="),
], ids=["standard", "standard-unpadded", "urlsafe", "urlsafe-unpadded"])
def test_standard_and_url_safe_base64_are_accepted(encode) -> None:  # noqa: ANN001
    """Verifiers must accept either base64 alphabet; padding is optional."""
    data = bytes(range(256)) * 3 + b"\xfb\xff"
    assert b64decode(encode(data), "x") == data


@pytest.mark.parametrize(("text", "message"), [
    ("ab+c-d", "mixes standard and URL-safe"),
    ("abc!", "not valid base64"),
    ("abcde", "truncated"),
    (12, "not a base64 string"),
    ("\u00e9abc", "not a base64 string"),
])
def test_malformed_base64_is_refused(text, message) -> None:  # noqa: ANN001
    """Anything but clean base64 of one alphabet is an envelope error naming the field."""
    with pytest.raises(AttestationError, match=message) as info:
        b64decode(text, "payload")
    assert info.value.check == "envelope"


def _golden() -> dict:
    return json.loads((GOLDEN / "attestation-envelope-1.0.json").read_bytes())


def _ring():  # noqa: ANN202
    return keyring_of(trusted(fixed_key(0), "golden test key"))


def test_unknown_fields_are_ignored_and_keyid_is_optional() -> None:
    """DSSE: consumers ignore unrecognized fields; an unset keyid means every trusted key is tried."""
    document = _golden()
    document["extension"] = {"x": 1}
    document["signatures"][0]["extra"] = "y"
    del document["signatures"][0]["keyid"]
    verified = verify_envelope(json.dumps(document).encode(), _ring(), where="e", now=GOLDEN_AT)
    assert verified.signer.name == "golden test key" and verified.keyid == ""


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.pop("payload"), "missing payload"),
    (lambda d: d.pop("signatures"), "missing signatures"),
    (lambda d: d.update(signatures=[]), "1 to 16 signatures"),
    (lambda d: d["signatures"][0].pop("sig"), "signature 0 has no sig"),
    (lambda d: d.update(payloadType=7), "payloadType must be a string"),
    (lambda d: d["signatures"][0].update(keyid=5), "keyid must be a string"),
    (lambda d: d.update(payload=d["payload"][:-3] + "!!="), "payload is not valid base64"),
])
def test_malformed_envelopes_are_refused(change, message) -> None:  # noqa: ANN001
    """Missing or mistyped required fields are envelope errors, in one line."""
    document = _golden()
    change(document)
    with pytest.raises(AttestationError, match=message) as info:
        Envelope.from_bytes(json.dumps(document).encode(), where="att.json")
    assert info.value.check == "envelope" and "\n" not in str(info.value)


def test_non_json_and_oversized_envelopes_are_refused() -> None:
    """The envelope is read under the input policy's strict JSON, with a size cap."""
    for data, message in ((b"[1]", "JSON object"), (b"{", "not valid JSON"),
                          (b'{"payload":"","payload":""}', "duplicate key"),
                          (b" " * (MAX_ENVELOPE_BYTES + 1), "exceeds")):
        with pytest.raises(AttestationError, match=message):
            Envelope.from_bytes(data, where="e")


def test_one_trusted_signature_among_several_is_enough() -> None:
    """An envelope signed by an unknown key and by a trusted one verifies as signed by the trusted one."""
    statement, stranger, signer = golden_statement(), fixed_key(50), fixed_key(0)
    first = sign_statement(statement, stranger)
    both = Envelope(first.payload, first.payload_type,
                    first.signatures + sign_statement(statement, signer).signatures)
    verified = verify_envelope(both.to_bytes(), _ring(), where="e", now=GOLDEN_AT)
    assert verified.signer.keyid == signer.keyid
