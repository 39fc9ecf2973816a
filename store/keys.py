"""Object keys, ref names and journal names: what is valid, and how keys are made.

Every string that becomes part of a path is validated here first, so no caller
input can escape the store's folders (``..``, ``/``, NUL, upper-case hex that
would alias a lower-case key on a case-insensitive filesystem).
"""

from __future__ import annotations

import hashlib
import re

import msgpack

from .errors import InvalidKeyError, InvalidNameError

KEY_HEX_LENGTH = 64
_KEY_RE = re.compile(r"[0-9a-f]{64}")
# A component starts with an alphanumeric, so "." and ".." are impossible and
# the store's own dot-prefixed temp files never look like a ref or a journal.
_COMPONENT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_MAX_REF_DEPTH = 8
_MAX_NAME_LENGTH = 255


def validate_key(key: object) -> str:
    """Return ``key`` unchanged if it is 64 lowercase hex digits.

    Raises:
        InvalidKeyError: for anything else (including non-strings).
    """
    if not isinstance(key, str) or _KEY_RE.fullmatch(key) is None:
        raise InvalidKeyError(key)
    return key


def key_of(data: bytes | bytearray | memoryview) -> str:
    """The key of ``data``: the lowercase hex SHA-256 of the raw bytes."""
    return hashlib.sha256(data).hexdigest()


def validate_ref_name(name: object) -> str:
    """Return ``name`` if it is a valid ref name.

    A ref name is 1 to 8 ``/``-separated components, each matching
    ``[A-Za-z0-9][A-Za-z0-9._-]{0,127}``, at most 255 characters in all, and no
    component ends in ``.lock`` or ``.tmp`` (reserved for the store's files).

    Raises:
        InvalidNameError: when it is not.
    """
    rule = "1-8 '/'-separated components of [A-Za-z0-9._-] starting with a letter or digit"
    if not isinstance(name, str) or not name or len(name) > _MAX_NAME_LENGTH:
        raise InvalidNameError("ref", name, rule)
    parts = name.split("/")
    if len(parts) > _MAX_REF_DEPTH:
        raise InvalidNameError("ref", name, rule)
    for part in parts:
        if _COMPONENT_RE.fullmatch(part) is None or part.endswith((".lock", ".tmp")):
            raise InvalidNameError("ref", name, rule)
    return name


def validate_journal_name(name: object) -> str:
    """Return ``name`` if it is a valid journal name (one path component).

    Raises:
        InvalidNameError: when it is not.
    """
    rule = "one component of [A-Za-z0-9._-], starting with a letter or digit, at most 128 chars"
    if (
        not isinstance(name, str)
        or _COMPONENT_RE.fullmatch(name) is None
        or name.endswith((".lock", ".tmp"))
    ):
        raise InvalidNameError("journal", name, rule)
    return name


def journal_name(manifest_hash: str, model_id: str) -> str:
    """A safe journal name for one run: one (manifest hash, model id) pair.

    The pair is encoded without ambiguity (a msgpack array of two strings) and
    hashed, so any model id (slashes, spaces, unicode) maps to a fixed-length
    name and two different pairs never share a journal.

    Returns:
        ``"run-"`` followed by 64 hex digits.
    """
    if not isinstance(manifest_hash, str) or not isinstance(model_id, str):
        raise TypeError("manifest_hash and model_id must be strings")
    packed = msgpack.packb([manifest_hash, model_id], use_bin_type=True)
    return "run-" + hashlib.sha256(packed).hexdigest()
