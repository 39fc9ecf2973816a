"""Shared helpers of the provenance tests: fixed test keys, keyrings, and the golden attestation's parts."""

from __future__ import annotations

import json
from pathlib import Path

from emberbench.provenance.code_digest import PolicyCode
from emberbench.provenance.keys import Keyring, SigningKey, TrustedKey, key_id
from emberbench.provenance.statement import Attested, Invocation, Predicate, Statement
from tests.conftest import ROOT

GOLDEN = ROOT / "tests" / "golden"


def fixed_key(seed: int) -> SigningKey:
    """A deterministic Ed25519 key (test only): its 32 private bytes are ``seed, seed+1, ...`` mod 256."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    private = Ed25519PrivateKey.from_private_bytes(bytes((seed + i) % 256 for i in range(32)))
    public = private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return SigningKey(key_id(public), public, private, f"<test key {seed}>")


def trusted(key: SigningKey, name: str = "test signer", *, not_before: str | None = None,
            not_after: str | None = None) -> TrustedKey:
    """The keyring entry of ``key``."""
    return TrustedKey(key.keyid, key.public_key, name, not_before, not_after)


def keyring_of(*entries: TrustedKey) -> Keyring:
    """A keyring holding ``entries`` (sorted as a keyring must be)."""
    return Keyring(tuple(sorted(entries, key=lambda k: k.keyid)))


GOLDEN_KEY_SEED = 0
GOLDEN_AT = "2025-01-31T12:05:00Z"


def golden_statement() -> Statement:
    """The statement of the golden attestation: the golden run-info, signed at the end of its run."""
    info = json.loads((GOLDEN / "run-info-1.0.json").read_bytes())
    info["verification"] = None
    predicate = Predicate(
        run_info=info, simulator_version="0.2.0",
        policy_code=PolicyCode("emberbench", "9f" * 32, 183),
        invocation=Invocation(command=("emberbench", "run", "--manifest", "m.json", "--policy", "greedy",
                                       "--model-id", "greedy", "--out", "greedy.json", "--store",
                                       "s3://evals/team?endpoint=https://s3.example.org"),
                              executor="local", ray_address=None, nodes=("eval-node-1",)),
        attested=Attested(at=GOLDEN_AT, by="evaluator@eval-node-1", emberbench_version="0.2.0",
                          python_version="3.11.7", platform="Linux-6.1.0-x86_64-with-glibc2.36", end_of_run=True))
    return Statement(f"results/{info['run']}", info["result"], predicate)


def write_text(path: Path, data: bytes) -> None:
    """Write test bytes (tests/golden regeneration)."""
    path.write_bytes(data)


def overwrite_object(st, key: str, frame: bytes) -> None:  # noqa: ANN001
    """Replace the stored frame of ``key`` around the store, as someone with raw write access could."""
    import os

    if st.locator.startswith("s3://"):
        st.backend.client.put_object(Bucket=st.backend.bucket, Key=f"{st.backend.prefix}objects/{key[:2]}/{key[2:]}",
                                     Body=frame)
        return
    path = st.layout.object_path(key)
    os.chmod(path, 0o644)
    path.write_bytes(frame)


def stored_frame(st, key: str) -> bytes:  # noqa: ANN001
    """The stored frame of ``key``, read around the store."""
    if st.locator.startswith("s3://"):
        reply = st.backend.client.get_object(Bucket=st.backend.bucket,
                                             Key=f"{st.backend.prefix}objects/{key[:2]}/{key[2:]}")
        return reply["Body"].read()
    return st.layout.object_path(key).read_bytes()
