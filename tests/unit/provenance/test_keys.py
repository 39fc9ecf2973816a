"""Key files and keyrings: generated with safe modes and never replaced; keyrings strict and versioned."""

from __future__ import annotations

import json
import os
import pickle
import stat
from pathlib import Path

import pytest

from emberbench.errors import AttestationError, OutputPathError, SigningKeyError
from emberbench.provenance.keys import (
    Keyring,
    create_private_file,
    generate_key_files,
    key_id,
    load_public_key,
    load_signing_key,
    read_keyring,
    trust_key,
)
from tests.unit.provenance.support import GOLDEN, fixed_key, keyring_of, trusted


def test_generated_key_is_private_and_its_public_key_matches(tmp_path: Path) -> None:
    """KEY is 0600 and KEY.pub 0644; the key id is the SHA-256 of the raw public key; both load."""
    keyid, private, public = generate_key_files(tmp_path / "signing.pem")
    assert stat.S_IMODE(os.stat(private).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(public).st_mode) == 0o644
    assert private.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    key = load_signing_key(private)
    assert key.keyid == keyid == key_id(load_public_key(public)) and len(key.public_key) == 32
    assert "PRIVATE" not in repr(key) and keyid[:16] in repr(key)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.parametrize("existing", ["key", "key.pub", "link"])
def test_generate_never_replaces_a_file(tmp_path: Path, existing: str) -> None:
    """An existing private key, public key, or a link at either name is refused before anything is written."""
    target = tmp_path / "key"
    if existing == "link":
        os.symlink(tmp_path / "elsewhere", target)
    else:
        (tmp_path / existing).write_bytes(b"keep me")
    with pytest.raises(OutputPathError):
        generate_key_files(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([existing if existing != "link" else "key"])


def test_private_file_creation_refuses_a_file_that_appears_meanwhile(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """The link that puts the key in place fails on an existing name; the temporary file is removed."""
    target = tmp_path / "key"
    target.write_bytes(b"appeared")
    monkeypatch.setattr(os.path, "lexists", lambda path: False)  # the early check misses it
    with pytest.raises(OutputPathError, match="never replaced"):
        create_private_file(target, b"secret")
    monkeypatch.undo()
    assert target.read_bytes() == b"appeared" and sorted(p.name for p in tmp_path.iterdir()) == ["key"]


def test_key_files_of_the_wrong_kind_are_refused(tmp_path: Path) -> None:
    """A public key as signing key, a private key as public key, non-PEM bytes, an encrypted key: one line each."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    _, private, public = generate_key_files(tmp_path / "k")
    (tmp_path / "junk").write_bytes(b"not a key")
    encrypted = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.BestAvailableEncryption(b"pw"))
    (tmp_path / "enc").write_bytes(encrypted)
    cases = [(load_signing_key, public, "not a PEM private key"), (load_public_key, private, "holds a private key"),
             (load_signing_key, tmp_path / "junk", "not a PEM private key"),
             (load_signing_key, tmp_path / "enc", "encrypted"), (load_signing_key, tmp_path / "none", "cannot read"),
             (load_signing_key, tmp_path, "must be a regular file")]
    for load, path, message in cases:
        with pytest.raises(SigningKeyError, match=message):
            load(path)


def test_golden_keyring_reads_and_a_future_one_is_refused() -> None:
    """The golden keyring is read (key id checked against its key); keyring_version 2.0 is refused."""
    ring = read_keyring(GOLDEN / "keyring-1.0.json")
    assert ring.keys[0].name == "golden test key" and ring.keys[0].keyid == fixed_key(0).keyid
    assert ring.to_bytes() == (GOLDEN / "keyring-1.0.json").read_bytes()
    with pytest.raises(SigningKeyError, match=r"keyring_version '2.0' is not supported \(this code reads '1.0'\)"):
        read_keyring(GOLDEN / "keyring-future.json")


def _entry(**changes: object) -> dict:
    entry = trusted(fixed_key(1), "k").to_dict()
    entry.update(changes)
    return entry


@pytest.mark.parametrize(("keys", "message"), [
    ([_entry(keyid="0" * 64)], "is not the SHA-256 of its public key"),
    ([_entry(algorithm="rsa")], "algorithm 'rsa' is not supported"),
    ([_entry(public_key="AB" * 32)], "64 lowercase hex"),
    ([_entry(name="")], "1-256 printable"),
    ([_entry(not_after="2025-01-01")], "ISO 8601"),
    ([_entry(not_before="2026-01-01T00:00:00Z", not_after="2025-01-01T00:00:00Z")], "is before not_before"),
    ([{**_entry(), "comment": "x"}], r"unknown key\(s\) \['comment'\]"),
    ([_entry(), _entry()], "each key once, sorted"),
    ([trusted(fixed_key(3)).to_dict(), trusted(fixed_key(2)).to_dict()]
     if fixed_key(3).keyid > fixed_key(2).keyid else
     [trusted(fixed_key(2)).to_dict(), trusted(fixed_key(3)).to_dict()], "each key once, sorted"),
])
def test_malformed_keyrings_are_refused(tmp_path: Path, keys, message) -> None:  # noqa: ANN001
    """Each rule of the keyring format is enforced on read, naming the file."""
    path = tmp_path / "ring.json"
    path.write_text(json.dumps({"keyring_version": "1.0", "keys": keys}))
    with pytest.raises(SigningKeyError, match=message) as info:
        read_keyring(path)
    assert str(path) in str(info.value)


def test_trust_key_builds_a_keyring_and_refuses_a_second_entry_for_a_key(tmp_path: Path) -> None:
    """keys add: creates the keyring, keeps keys sorted, refuses a known key unless replace."""
    ring = tmp_path / "ring.json"
    pubs = [generate_key_files(tmp_path / f"k{n}")[2] for n in range(3)]
    for n, pub in enumerate(pubs):
        trust_key(ring, pub, f"signer {n}", not_after="2030-01-01T00:00:00Z" if n == 1 else None)
    loaded = read_keyring(ring)
    assert len(loaded.keys) == 3 and [k.keyid for k in loaded.keys] == sorted(k.keyid for k in loaded.keys)
    with pytest.raises(SigningKeyError, match="already trusts key"):
        trust_key(ring, pubs[0], "again")
    trust_key(ring, pubs[0], "renamed", replace=True)
    assert {k.name for k in read_keyring(ring).keys} == {"renamed", "signer 1", "signer 2"}


def test_validity_bounds_are_inclusive() -> None:
    """A key may have signed at its not_before and at its not_after, not a second outside."""
    key = trusted(fixed_key(1), "k", not_before="2025-01-01T00:00:00Z", not_after="2025-12-31T23:59:59Z")
    assert key.validity_problem("2025-01-01T00:00:00Z") is None and key.validity_problem("2025-12-31T23:59:59Z") is None
    assert "not valid before" in key.validity_problem("2024-12-31T23:59:59Z")
    assert "expired at 2025-12-31T23:59:59Z" in key.validity_problem("2026-01-01T00:00:00Z")


def test_keyring_lookup_and_replacement() -> None:
    """get finds a key by id; with_key adds or replaces, keeping the order."""
    a, b = trusted(fixed_key(1), "a"), trusted(fixed_key(2), "b")
    ring = keyring_of(a).with_key(b)
    assert ring.get(a.keyid) == a and ring.get("0" * 64) is None
    assert ring.with_key(trusted(fixed_key(1), "a2")).get(a.keyid).name == "a2" and len(ring.keys) == 2
    assert Keyring.from_dict(ring.to_dict(), where="x") == ring


@pytest.mark.parametrize("error", [
    AttestationError("attestation x: the run-info's user is 'm'", check="predicate"),
    SigningKeyError("k: not a PEM private key"),
])
def test_new_errors_survive_pickling(error) -> None:  # noqa: ANN001
    """The new error classes cross process boundaries with their message and data."""
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error) and str(again) == str(error)
    assert getattr(again, "check", None) == getattr(error, "check", None)
    assert isinstance(again, ValueError)
