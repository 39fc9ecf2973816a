"""The whole-file result loader as it was before streaming: the reference the streaming reader must match.

It reads the whole file, parses it at once with ``parse_json_strict``,
checks the header, every episode's structure, the canonical form of the whole
text, then replays every record and compares the stored metrics. Tests run
the same bytes through both and require the same verdict and message.

One rule comes before all of that (issue 22): what cannot be a result is
refused where it is met, before anything after it can outrank it. A first
character other than ``{``, and a top-level key that is unknown, repeated or
longer than any key, are found by walking the top-level members of the valid
text; when a value before such a key is itself refused, the whole-file
verdict stands.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import codecs
import json
import re

from emberbench.io.canonical import CanonicalFormError, canonical_bytes, is_sha256_hex, parse_json_strict, sha256_hex
from emberbench.records.episode import authenticate
from emberbench.errors import ManifestError, RecordAuthenticationError, ResultError
from emberbench.io.input_policy import JsonText, check_json_depth
from emberbench.results.manifest import check_manifest, manifest_from_dict
from emberbench.records.record import record_from_dict
from emberbench.results.header import EPISODE_KEYS, HEADER_FIELDS, RESULT_KEYS
from emberbench.results.model_id import validate_model_id
from emberbench.io.versions import RESULT_VERSION


def _header(data: dict[str, Any], where: str) -> Any:
    if "result_version" in data and data["result_version"] != RESULT_VERSION:
        raise ResultError(
            f"{where}: unsupported result_version {data['result_version']!r} (this version reads {RESULT_VERSION!r})"
        )
    unknown, missing = sorted(set(data) - RESULT_KEYS), sorted(RESULT_KEYS - set(data))
    if unknown or missing:
        raise ResultError(f"{where}: top-level keys differ: unknown {unknown}, missing {missing}")
    try:
        validate_model_id(data["model_id"])
        manifest = manifest_from_dict(data["manifest"], where="embedded manifest")
    except (ResultError, ManifestError) as exc:
        raise ResultError(f"{where}: {exc}") from None
    if manifest.hash != data["evaluation_manifest_hash"]:
        raise ResultError(
            f"{where}: embedded manifest hashes to {manifest.hash}, not evaluation_manifest_hash "
            f"{data['evaluation_manifest_hash']}"
        )
    for name in HEADER_FIELDS:
        if data[name] != getattr(manifest, name):
            raise ResultError(f"{where}: header {name} {data[name]!r} differs from the manifest's "
                              f"{getattr(manifest, name)!r}")
    return manifest


_SPACE = re.compile(r"[ \t\n\r]*")
KEY_CHARS = 64


def _valid_prefix(raw: bytes) -> str:
    """The text of ``raw`` up to its first byte that is not valid UTF-8."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return raw[:exc.start].decode("utf-8")


def _refused_where_met(raw: bytes, where: str) -> str | None:
    """The message of a refusal made where it is met (not an object, a bad top-level key), or None."""
    if raw.startswith(codecs.BOM_UTF8):
        return None
    text = _valid_prefix(raw)
    pos = _SPACE.match(text).end()
    if pos >= len(text):
        return None
    if text[pos] != "{":
        return f"{where}: a result artifact must be a JSON object"
    decode = JsonText(text, where, exact=True).decoder().raw_decode
    seen: set[str] = set()
    pos = _SPACE.match(text, pos + 1).end()
    if text[pos:pos + 1] == "}":
        return None
    while True:
        if text[pos:pos + 1] != '"':
            return None
        limit = pos + KEY_CHARS
        try:
            key, end = json.decoder.scanstring(text, pos + 1, True)
        except json.JSONDecodeError as exc:
            if exc.pos >= limit or (exc.msg.startswith("Unterminated string") and len(text) > limit):
                return f"{where}: a top-level key at char {pos} is longer than {KEY_CHARS} characters"
            return None
        if end > limit:
            return f"{where}: a top-level key at char {pos} is longer than {KEY_CHARS} characters"
        if key not in RESULT_KEYS:
            shown = key if len(key) <= 24 else f"{key[:12]}...{key[-6:]} ({len(key)} characters)"
            return f"{where}: unknown top-level key {shown!r} at char {pos} (not a key of a result artifact)"
        if key in seen:
            return f"{where}: duplicate key {key!r}"
        seen.add(key)
        pos = _SPACE.match(text, end).end()
        if text[pos:pos + 1] != ":":
            return None
        pos = _SPACE.match(text, pos + 1).end()
        try:
            _, end = decode(text, pos)
            check_json_depth(text[pos:end], where=where, max_depth=63)
        except (ValueError, RecursionError):
            return None
        pos = _SPACE.match(text, end).end()
        if text[pos:pos + 1] != ",":
            return None
        pos = _SPACE.match(text, pos + 1).end()


def reference_load(raw: bytes, suite: Any, where: str) -> str:
    """The old loader's verdict on ``raw``: the digest if it passes (ResultError otherwise)."""
    refused = _refused_where_met(raw, where)
    if refused is not None:
        raise ResultError(refused)
    try:
        data = parse_json_strict(raw, where=where)
    except CanonicalFormError as exc:
        raise ResultError(str(exc)) from None
    if not isinstance(data, dict):
        raise ResultError(f"{where}: a result artifact must be a JSON object")
    manifest = _header(data, where)
    try:
        check_manifest(manifest, suite)
    except ManifestError as exc:
        raise ResultError(f"{where}: {exc}") from None
    episodes = data["episodes"]
    if not isinstance(episodes, list):
        raise ResultError(f"{where}: episodes must be a list")
    last = -1
    entries = []
    for pos, e in enumerate(episodes):
        at = f"{where}: episodes[{pos}]"
        if not isinstance(e, dict) or set(e) != EPISODE_KEYS:
            keys = sorted(e) if isinstance(e, dict) else type(e).__name__
            raise ResultError(f"{at} must have exactly the keys {sorted(EPISODE_KEYS)}, got {keys}")
        index = e["index"]
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(manifest.episodes):
            raise ResultError(f"{at}: index {index!r} is not in the manifest")
        if index <= last:
            raise ResultError(f"{at}: index {index} is out of manifest order or repeated (after {last})")
        last = index
        entry = manifest.episodes[index]
        for name in ("scenario_id", "scenario_hash", "seed"):
            if e[name] != getattr(entry, name) or type(e[name]) is not type(getattr(entry, name)):
                raise ResultError(f"{at}: {name} {e[name]!r} differs from manifest entry {index}")
        try:
            record = record_from_dict(e["record"])
        except RecordAuthenticationError as exc:
            raise ResultError(f"{at}: {exc}") from None
        for name in ("scenario_id", "scenario_hash", "seed"):
            if getattr(record, name) != getattr(entry, name):
                raise ResultError(f"{at}: record header {name} differs from manifest entry {index}")
        digest = e["record_digest"]
        if not is_sha256_hex(digest):
            raise ResultError(f"{at}: record_digest is not a lowercase SHA-256 hex digest")
        if sha256_hex(canonical_bytes(e["record"])) != digest:
            raise ResultError(f"{at}: record does not match record_digest {digest}")
        entries.append(entry)
    expected = canonical_bytes(data) + b"\n"
    if raw != expected:
        raise ResultError(f"{where}: the artifact is not in canonical form (re-serialization differs)")
    recomputed = []
    for i, e in enumerate(episodes):
        try:
            recomputed.append(authenticate(e["record"], suite))
        except RecordAuthenticationError as exc:
            raise ResultError(f"{where}: authentication failed: episode {i}: {exc}") from None
    for entry, e, metrics in zip(entries, episodes, recomputed):
        if canonical_bytes(e["metrics"]) != canonical_bytes(metrics.to_dict()):
            raise ResultError(f"{where}: episode {entry.index}: stored metrics differ from the metrics "
                              "recomputed from the authenticated record")
    return sha256_hex(expected)


def reference_verdict(path: Path, suite: Any) -> str:
    """``ok <digest>`` or the message of the ResultError the old loader raised for the file."""
    try:
        return f"ok {reference_load(path.read_bytes(), suite, str(path))}"
    except ResultError as exc:
        return str(exc)
