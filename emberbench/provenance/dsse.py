"""DSSE v1: the signed envelope an attestation travels in, and Ed25519 signing and checking of it.

An envelope (DSSE "JSON envelope") is the JSON object
``{"payload": <base64 of the body>, "payloadType": <type>, "signatures":
[{"keyid": <hint>, "sig": <base64 of the signature>}, ...]}``. A signature
is made over the *pre-authentication encoding* of the payload type and the
exact body bytes::

    PAE(type, body) = "DSSEv1" SP len(type) SP type SP len(body) SP body

(lengths in bytes, ASCII decimal without leading zeros; ``type`` UTF-8). So
the signed bytes are the body as it was written, never a re-serialization:
the verifier decodes the payload, checks a signature over PAE of those
bytes (:func:`signature_verifies`), and only then parses them
(:func:`emberbench.provenance.attest.verify_envelope`).

Rules followed from the DSSE envelope specification: ``payload``,
``payloadType``, ``signatures`` and each ``sig`` are required; ``keyid`` is
optional (unset means empty) and only a hint for choosing a key, never a
reason to trust one; fields this code does not know are ignored; base64 may
be standard or URL-safe (with or without padding) on input, and is written
standard with padding. The envelope is written as canonical JSON (sorted
keys, no spaces), which is the stored object's bytes.

Signatures are Ed25519 (RFC 8032) through the ``cryptography`` package,
imported only when a key is used, so ``import emberbench`` stays light.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

from ..io.canonical import canonical_bytes
from ..errors import AttestationError

MAX_ENVELOPE_BYTES = 1 << 20
"""The most bytes an envelope may have (a run's attestation is a few KiB; its run-info at most 64 KiB)."""
MAX_SIGNATURES = 16
"""The most signatures one envelope may carry."""
SIGNATURE_BYTES = 64
"""Length of an Ed25519 signature."""


def pae(payload_type: str, body: bytes) -> bytes:
    """The DSSE v1 pre-authentication encoding of ``payload_type`` and ``body``: the bytes a signature covers."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(body), body)


def b64encode(data: bytes) -> str:
    """Standard base64 with padding (how envelopes are written)."""
    return base64.b64encode(data).decode("ascii")


def b64decode(text: object, what: str) -> bytes:
    """Decode standard or URL-safe base64, padded or not; anything else is refused.

    Raises:
        AttestationError: ``text`` is not base64 (check ``envelope``).
    """
    if not isinstance(text, str) or not text.isascii():
        raise AttestationError(f"{what} is not a base64 string", check="envelope")
    urlsafe, standard = any(c in text for c in "-_"), any(c in text for c in "+/")
    if urlsafe and standard:
        raise AttestationError(f"{what} mixes standard and URL-safe base64", check="envelope")
    if urlsafe:
        text = text.replace("-", "+").replace("_", "/")
    text = text.rstrip("=") if text.endswith("=") else text
    if len(text) % 4 == 1:
        raise AttestationError(f"{what} is not valid base64 (truncated?)", check="envelope")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise AttestationError(f"{what} is not valid base64", check="envelope") from None


@dataclass(frozen=True, slots=True)
class Signature:
    """One signature of an envelope.

    Attributes:
        keyid: the signer's hint of which key signed ("" when unset); never trusted by itself.
        sig: the signature bytes.
    """

    keyid: str
    sig: bytes


@dataclass(frozen=True, slots=True)
class Envelope:
    """A DSSE envelope: the exact payload bytes, their type, and signatures over PAE of both."""

    payload: bytes
    payload_type: str
    signatures: tuple[Signature, ...]

    def signed_bytes(self) -> bytes:
        """PAE of the payload type and the payload: what every signature covers."""
        return pae(self.payload_type, self.payload)

    def to_dict(self) -> dict[str, Any]:
        """The JSON envelope."""
        return {"payload": b64encode(self.payload), "payloadType": self.payload_type,
                "signatures": [{"keyid": s.keyid, "sig": b64encode(s.sig)} for s in self.signatures]}

    def to_bytes(self) -> bytes:
        """The stored form: canonical JSON of :meth:`to_dict`, no trailing newline."""
        return canonical_bytes(self.to_dict())

    @classmethod
    def from_bytes(cls, data: bytes, *, where: str) -> Envelope:
        """Parse an envelope strictly (input policy JSON; required fields present and well typed).

        Unknown fields are ignored, as the DSSE specification requires.

        Raises:
            AttestationError: naming ``where`` (check ``envelope``).
        """
        from ..io.input_policy import parse_json

        if len(data) > MAX_ENVELOPE_BYTES:
            raise AttestationError(f"{where}: envelope of {len(data)} bytes exceeds {MAX_ENVELOPE_BYTES} bytes",
                                   check="envelope")
        try:
            document = parse_json(data, where=where, max_values=10_000)
        except ValueError as exc:
            raise AttestationError(str(exc), check="envelope") from None
        if not isinstance(document, dict):
            raise AttestationError(f"{where}: a DSSE envelope is a JSON object", check="envelope")
        missing = [name for name in ("payload", "payloadType", "signatures") if name not in document]
        if missing:
            raise AttestationError(f"{where}: not a DSSE envelope: missing {', '.join(missing)}", check="envelope")
        payload_type, signatures = document["payloadType"], document["signatures"]
        if not isinstance(payload_type, str):
            raise AttestationError(f"{where}: payloadType must be a string", check="envelope")
        if not isinstance(signatures, list) or not 1 <= len(signatures) <= MAX_SIGNATURES:
            raise AttestationError(f"{where}: signatures must be a list of 1 to {MAX_SIGNATURES} signatures",
                                   check="envelope")
        parsed = []
        for n, item in enumerate(signatures):
            if not isinstance(item, dict) or "sig" not in item:
                raise AttestationError(f"{where}: signature {n} has no sig", check="envelope")
            keyid = item.get("keyid", "")
            if not isinstance(keyid, str) or len(keyid) > 256:
                raise AttestationError(f"{where}: signature {n}: keyid must be a string of at most 256 characters",
                                       check="envelope")
            parsed.append(Signature(keyid, b64decode(item["sig"], f"{where}: signature {n}")))
        return cls(b64decode(document["payload"], f"{where}: payload"), payload_type, tuple(parsed))


def sign_envelope(payload: bytes, payload_type: str, signer: Any) -> Envelope:
    """An envelope of ``payload`` signed by ``signer`` (a :class:`~emberbench.provenance.keys.SigningKey`)."""
    return Envelope(payload, payload_type, (Signature(signer.keyid, signer.sign(pae(payload_type, payload))),))


def signature_verifies(public_key: bytes, signature: bytes, message: bytes) -> bool:
    """Whether ``signature`` is a valid Ed25519 signature of ``message`` by the raw 32-byte ``public_key``."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    if len(signature) != SIGNATURE_BYTES:
        return False
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
    except InvalidSignature:
        return False
    return True


__all__ = ["MAX_ENVELOPE_BYTES", "Envelope", "Signature", "b64decode", "b64encode", "pae", "sign_envelope",
           "signature_verifies"]
