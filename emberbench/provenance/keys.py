"""Signing keys, public key files and the keyring of trusted public keys.

* **A signing key** is an Ed25519 private key in a PEM file (PKCS #8,
  unencrypted, ``-----BEGIN PRIVATE KEY-----``), the form
  ``openssl genpkey -algorithm ed25519`` also writes.
  :func:`generate_key_files` creates one with mode 0600 and never replaces a
  file. Keys live outside the store: whoever can read a key file can sign.
* **A public key file** (``KEY.pub``) is the matching PEM
  SubjectPublicKeyInfo (``-----BEGIN PUBLIC KEY-----``).
* **A key id** is the lowercase hex SHA-256 of the raw 32-byte public key; it
  is the ``keyid`` of the signatures the key makes.
* **A keyring** (format ``keyring_version`` :data:`KEYRING_VERSION`) is a
  JSON file of the public keys a verifier trusts: each with its key id, the
  raw public key (hex), a name for people (who or what signs with it), and
  optionally the first and last time it may have signed (``not_before``,
  ``not_after``, ISO 8601 UTC). It is read through the input policy and
  written through the output policy (:func:`write_keyring`).

Only the CLI reads ``$EMBERBENCH_SIGNING_KEY``; this module takes paths.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SigningKeyError
from ..io.input_policy import KiB, MiB, InputKind, parse_json, read_input
from ..io.versions import KEYRING_VERSION

KEY_FILE = InputKind("key file", 64 * KiB, json_object=False)
KEYRING_FILE = InputKind("keyring", 4 * MiB, max_values=200_000)
MAX_KEYS = 10_000
ALGORITHM = "ed25519"
_TIME_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
_HEX64_RE = re.compile(r"[0-9a-f]{64}")
KEYRING_KEYS = frozenset({"keyring_version", "keys"})
ENTRY_KEYS = frozenset({"keyid", "algorithm", "public_key", "name", "not_before", "not_after"})


def key_id(public_key: bytes) -> str:
    """The key id of a raw Ed25519 public key: the lowercase hex SHA-256 of its 32 bytes."""
    return hashlib.sha256(public_key).hexdigest()


def check_time(value: object, name: str) -> str:
    """``value`` if it is an ISO 8601 UTC time to the second (``2026-01-31T12:00:00Z``).

    Raises:
        SigningKeyError: it is not.
    """
    if not isinstance(value, str) or _TIME_RE.fullmatch(value) is None:
        raise SigningKeyError(f"{name} must be an ISO 8601 UTC time like 2026-01-31T12:00:00Z, got {value!r:.80}")
    return value


@dataclass(frozen=True, slots=True)
class SigningKey:
    """An Ed25519 private key, ready to sign.

    Attributes:
        keyid: its key id.
        public_key: the raw 32-byte public key.
        path: the file it was read from (for messages), or None.
    """

    keyid: str
    public_key: bytes
    _private: Any
    path: str | None = None

    def sign(self, message: bytes) -> bytes:
        """The 64-byte Ed25519 signature of ``message``."""
        return self._private.sign(message)

    def __repr__(self) -> str:  # never show key material
        return f"SigningKey(keyid={self.keyid[:16]}..., path={self.path!r})"


def _raw_public(public: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def load_signing_key(path: str | os.PathLike[str]) -> SigningKey:
    """Read an Ed25519 private key from a PEM (PKCS #8) file under the input policy.

    Raises:
        SigningKeyError: the file is missing, not a regular file, too large,
            not a PEM private key, encrypted, or not an Ed25519 key.
    """
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    where = os.fspath(path)
    data = read_input(path, KEY_FILE, error=SigningKeyError)
    try:
        private = serialization.load_pem_private_key(data, password=None)
    except TypeError:
        raise SigningKeyError(f"{where}: the signing key is encrypted; EMBERBench reads unencrypted PKCS #8 keys "
                              "(protect the file with its permissions instead)") from None
    except (ValueError, Exception) as exc:  # noqa: BLE001 - cryptography raises several types for bad input
        raise SigningKeyError(f"{where}: not a PEM private key ({type(exc).__name__})") from None
    if not isinstance(private, Ed25519PrivateKey):
        raise SigningKeyError(f"{where}: the signing key must be an Ed25519 key, not {type(private).__name__}")
    public = _raw_public(private.public_key())
    return SigningKey(key_id(public), public, private, where)


def load_public_key(path: str | os.PathLike[str]) -> bytes:
    """The raw 32-byte Ed25519 public key in a PEM public key file (``KEY.pub``).

    Raises:
        SigningKeyError: the file is not a PEM Ed25519 public key (a private key is refused too).
    """
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    where = os.fspath(path)
    data = read_input(path, KEY_FILE, error=SigningKeyError)
    if b"PRIVATE KEY" in data:
        raise SigningKeyError(f"{where} holds a private key; give the public key file (KEY.pub)")
    try:
        public = serialization.load_pem_public_key(data)
    except (ValueError, Exception) as exc:  # noqa: BLE001 - cryptography raises several types for bad input
        raise SigningKeyError(f"{where}: not a PEM public key ({type(exc).__name__})") from None
    if not isinstance(public, Ed25519PublicKey):
        raise SigningKeyError(f"{where}: the public key must be an Ed25519 key, not {type(public).__name__}")
    return _raw_public(public)


def generate_key_files(out: str | os.PathLike[str]) -> tuple[str, Path, Path]:
    """Generate an Ed25519 key: the private key at ``out`` (mode 0600), the public key at ``out.pub``.

    Neither file may exist; nothing is ever replaced (the check is repeated
    by the write itself, so a file that appears meanwhile is not replaced
    either). The private key is written before the public one; if the public
    one cannot be written, the private key just made is removed.

    Returns:
        ``(keyid, private key path, public key path)``.

    Raises:
        OutputPathError: either file exists, or the folder is missing.
    """
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from ..io.atomic import check_output_path
    from ..errors import OutputPathError

    private_path = Path(out)
    public_path = private_path.with_name(private_path.name + ".pub")
    for target in (private_path, public_path):
        check_output_path(target)
        if os.path.lexists(target):
            raise OutputPathError(f"{target} exists; a key file is never replaced")
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    public_pem = private.public_key().public_bytes(serialization.Encoding.PEM,
                                                   serialization.PublicFormat.SubjectPublicKeyInfo)
    create_private_file(private_path, pem)
    try:
        _create_public_file(public_path, public_pem)
    except BaseException:
        os.unlink(private_path)
        raise
    return key_id(_raw_public(private.public_key())), private_path, public_path


def _create_public_file(path: Path, data: bytes) -> None:
    create_private_file(path, data)
    os.chmod(path, 0o644)  # a public key may be read by anyone


def create_private_file(path: str | os.PathLike[str], data: bytes) -> Path:
    """Create ``path`` holding ``data``, readable and writable by its owner only (mode 0600).

    For secrets (a signing key). Unlike :func:`emberbench.io.atomic.atomic_write_bytes` it never
    replaces anything: the bytes go to a temporary file (created 0600, so
    they are never readable by others, not even for an instant), are fsynced,
    and the file is then *linked* to its name, which fails if the name
    exists, even if it appeared meanwhile. A crash leaves no file or the
    whole file, at worst a stray ``.tmp`` beside it.

    Raises:
        OutputPathError: something exists at ``path`` (nothing is written),
            or the folder is missing.
    """
    import tempfile

    from ..io.atomic import check_output_path, fsync_dir
    from ..errors import OutputPathError

    target = check_output_path(path)
    if os.path.lexists(target):
        raise OutputPathError(f"{target} exists; it is never replaced")
    folder = target.parent if str(target.parent) else Path(".")
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp_name, target)
        except FileExistsError:
            raise OutputPathError(f"{target} exists; it is never replaced") from None
    finally:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
    fsync_dir(folder)
    return target


# -- the keyring --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TrustedKey:
    """One public key of a keyring.

    Attributes:
        keyid: SHA-256 (hex) of ``public_key``.
        public_key: the raw 32-byte Ed25519 public key.
        name: who or what signs with it, for people (1-256 printable characters).
        not_before, not_after: the first and last time (ISO 8601 UTC) an
            attestation it signed may carry; None for no bound.
    """

    keyid: str
    public_key: bytes
    name: str
    not_before: str | None = None
    not_after: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.public_key, bytes) or len(self.public_key) != 32:
            raise SigningKeyError("public_key must be 32 bytes (a raw Ed25519 public key)")
        if self.keyid != key_id(self.public_key):
            raise SigningKeyError(f"keyid {self.keyid!r:.80} is not the SHA-256 of its public key "
                                  f"({key_id(self.public_key)})")
        if not isinstance(self.name, str) or not 1 <= len(self.name) <= 256 or not self.name.isprintable():
            raise SigningKeyError(f"a key name must be 1-256 printable characters, got {self.name!r:.80}")
        for field in ("not_before", "not_after"):
            if getattr(self, field) is not None:
                check_time(getattr(self, field), field)
        if self.not_before is not None and self.not_after is not None and self.not_after < self.not_before:
            raise SigningKeyError(f"key {self.name!r}: not_after {self.not_after} is before not_before "
                                  f"{self.not_before}")

    def describe(self) -> str:
        """``name (key 1a2b3c4d5e6f7a8b)``: how messages name the key."""
        return f"{self.name} (key {self.keyid[:16]})"

    def validity_problem(self, at: str) -> str | None:
        """Why the key may not have signed at time ``at``, or None when it may."""
        if self.not_before is not None and at < self.not_before:
            return f"key {self.describe()} is not valid before {self.not_before}; the attestation was made at {at}"
        if self.not_after is not None and at > self.not_after:
            return f"key {self.describe()} expired at {self.not_after}; the attestation was made at {at}"
        return None

    def to_dict(self) -> dict[str, Any]:
        return {"keyid": self.keyid, "algorithm": ALGORITHM, "public_key": self.public_key.hex(), "name": self.name,
                "not_before": self.not_before, "not_after": self.not_after}

    @classmethod
    def from_dict(cls, data: Any, where: str) -> TrustedKey:
        if not isinstance(data, dict):
            raise SigningKeyError(f"{where}: a key must be a JSON object")
        unknown, missing = sorted(set(data) - ENTRY_KEYS), sorted(ENTRY_KEYS - set(data))
        if unknown or missing:
            raise SigningKeyError(f"{where}: unknown key(s) {unknown}, missing key(s) {missing}")
        if data["algorithm"] != ALGORITHM:
            raise SigningKeyError(f"{where}: algorithm {data['algorithm']!r:.40} is not supported (only {ALGORITHM})")
        raw = data["public_key"]
        if not isinstance(raw, str) or _HEX64_RE.fullmatch(raw) is None:
            raise SigningKeyError(f"{where}: public_key must be 64 lowercase hex digits (a raw Ed25519 key)")
        try:
            return cls(data["keyid"], bytes.fromhex(raw), data["name"], data["not_before"], data["not_after"])
        except SigningKeyError as exc:
            raise SigningKeyError(f"{where}: {exc}") from None


@dataclass(frozen=True, slots=True)
class Keyring:
    """The public keys a verifier trusts, sorted by key id (no key id twice)."""

    keys: tuple[TrustedKey, ...] = ()

    def __post_init__(self) -> None:
        ids = [k.keyid for k in self.keys]
        if ids != sorted(set(ids)):
            raise SigningKeyError("a keyring holds each key once, sorted by key id")
        if len(ids) > MAX_KEYS:
            raise SigningKeyError(f"a keyring holds at most {MAX_KEYS} keys")

    def get(self, keyid: str) -> TrustedKey | None:
        """The key with this key id, or None."""
        for key in self.keys:
            if key.keyid == keyid:
                return key
        return None

    def with_key(self, key: TrustedKey) -> Keyring:
        """A keyring with ``key`` added, or replacing the key of the same id."""
        kept = [k for k in self.keys if k.keyid != key.keyid] + [key]
        return Keyring(tuple(sorted(kept, key=lambda k: k.keyid)))

    def to_dict(self) -> dict[str, Any]:
        return {"keyring_version": KEYRING_VERSION, "keys": [k.to_dict() for k in self.keys]}

    def to_bytes(self) -> bytes:
        """The file's bytes: indented JSON (people read keyrings), keys sorted, one newline at the end."""
        return (json.dumps(self.to_dict(), indent=2, sort_keys=True, ensure_ascii=True) + "\n").encode("ascii")

    @classmethod
    def from_dict(cls, data: Any, *, where: str) -> Keyring:
        """Validate a keyring document; refuses other versions and unknown or missing keys.

        Raises:
            SigningKeyError: naming ``where`` and the first problem.
        """
        if not isinstance(data, dict):
            raise SigningKeyError(f"{where}: a keyring must be a JSON object")
        if data.get("keyring_version") != KEYRING_VERSION:
            raise SigningKeyError(f"{where}: keyring_version {data.get('keyring_version')!r:.40} is not supported "
                                  f"(this code reads {KEYRING_VERSION!r})")
        unknown, missing = sorted(set(data) - KEYRING_KEYS), sorted(KEYRING_KEYS - set(data))
        if unknown or missing:
            raise SigningKeyError(f"{where}: unknown key(s) {unknown}, missing key(s) {missing}")
        if not isinstance(data["keys"], list):
            raise SigningKeyError(f"{where}: keys must be a list")
        entries = [TrustedKey.from_dict(item, f"{where}: key {n}") for n, item in enumerate(data["keys"])]
        try:
            return cls(tuple(entries))
        except SigningKeyError as exc:
            raise SigningKeyError(f"{where}: {exc}") from None


def read_keyring(path: str | os.PathLike[str]) -> Keyring:
    """Read a keyring file under the input policy.

    Raises:
        SigningKeyError: the file breaks the input policy or the keyring format.
    """
    where = os.fspath(path)
    data = read_input(path, KEYRING_FILE, error=SigningKeyError)
    try:
        document = parse_json(data, where=where, max_values=KEYRING_FILE.max_values)
    except ValueError as exc:
        raise SigningKeyError(str(exc)) from None
    return Keyring.from_dict(document, where=where)


def write_keyring(path: str | os.PathLike[str], keyring: Keyring) -> None:
    """Write ``keyring`` atomically through the output policy."""
    from ..io.atomic import atomic_write_bytes

    atomic_write_bytes(path, keyring.to_bytes())


def trust_key(keyring_path: str | os.PathLike[str], public_key_path: str | os.PathLike[str], name: str, *,
              not_before: str | None = None, not_after: str | None = None, replace: bool = False) -> TrustedKey:
    """Add the public key in ``public_key_path`` to the keyring file (created when missing).

    Raises:
        SigningKeyError: the key file or keyring is unreadable or malformed, a
            bound is malformed, or the key is already there (without ``replace``).
        OutputPathError: the keyring path is refused by the output policy.
    """
    from ..io.atomic import check_output_path

    target = check_output_path(keyring_path)
    keyring = read_keyring(target) if os.path.lexists(target) else Keyring()
    public = load_public_key(public_key_path)
    entry = TrustedKey(key_id(public), public, name, not_before, not_after)
    present = keyring.get(entry.keyid)
    if present is not None and not replace:
        raise SigningKeyError(f"{target} already trusts key {entry.keyid[:16]} as {present.name!r}; "
                              "use --replace to change its entry")
    write_keyring(target, keyring.with_key(entry))
    return entry


__all__ = [
    "KEY_FILE",
    "KEYRING_FILE",
    "Keyring",
    "SigningKey",
    "TrustedKey",
    "check_time",
    "create_private_file",
    "generate_key_files",
    "key_id",
    "load_public_key",
    "load_signing_key",
    "read_keyring",
    "trust_key",
    "write_keyring",
]
