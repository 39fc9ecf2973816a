"""Signed provenance: attestations of runs, signing keys, keyrings and the policy code digest.

A finished run's provenance is signed as an in-toto Statement (v1) in a DSSE
envelope with an Ed25519 key, and stored in the run's store as one more
content-addressed object (``attestations/<run>``). Verifying it is one
library call (:func:`check_run_attestation` for a run in a store,
:func:`verify_attestation` for envelope bytes) shared by ``emberbench runs
verify`` and ``emberbench verify --attestation``. docs/provenance.md is the
user's account.

Modules: :mod:`.dsse` (envelope, PAE, signing and checking a signature),
:mod:`.keys` (key files and keyrings), :mod:`.statement` (the statement and
its predicate), :mod:`.code_digest` (the policy code digest), :mod:`.attest`
(attesting and verifying runs). ``cryptography`` is imported only when a key
is used.
"""

from __future__ import annotations

from .attest import (
    ATTESTATION_REF_PREFIX,
    Attestation,
    RunAttestation,
    Verified,
    attest_run,
    attestation_ref,
    check_run_attestation,
    verify_attestation,
)
from .code_digest import PolicyCode, policy_code_digest
from .keys import (
    Keyring,
    SigningKey,
    TrustedKey,
    generate_key_files,
    load_signing_key,
    read_keyring,
    trust_key,
    write_keyring,
)
from .statement import Invocation, redact_command

__all__ = [
    "ATTESTATION_REF_PREFIX",
    "Attestation",
    "Invocation",
    "Keyring",
    "PolicyCode",
    "RunAttestation",
    "SigningKey",
    "TrustedKey",
    "Verified",
    "attest_run",
    "attestation_ref",
    "check_run_attestation",
    "generate_key_files",
    "load_signing_key",
    "policy_code_digest",
    "read_keyring",
    "redact_command",
    "trust_key",
    "verify_attestation",
    "write_keyring",
]
