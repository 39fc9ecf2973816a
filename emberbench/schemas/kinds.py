"""What kind of EMBERBench file a document is, told by its version key: the one answer of every reader's error path.

Every saved format carries a version key of its own (``result_version``,
``manifest_version``, ``statistics_version`` with ``artifact``...), which the
schemas' ``detect`` annotations name (:func:`emberbench.schemas.detect_format`).
When a reader refuses a file, it asks :func:`not_what_was_wanted` whether the
file is recognizably *another* EMBERBench file, and if so says that instead of
listing the keys it did not expect::

    dev.json is an evaluation manifest, not a result artifact

A reader that holds the parsed object passes it; a reader that streams passes
the text, the bytes or its (seekable) binary handle, and only the top level of
the document is scanned (:func:`skeleton`): its keys, their values when they
are scalars, and the scalar members of objects one level down (a record's
``header.record_version``). The scan reads at most :data:`MAX_SCAN_BYTES`
bytes and keeps nothing below the second level (each deeper value is parsed
by the standard library's C decoder and dropped at once), so a large file
costs a bounded read; a version key beyond that bound is not seen, and the
reader's own message stands. The answer is a hint only: it never accepts a file.
"""

from __future__ import annotations

import json
import re
from typing import Any

from . import detect_format

MAX_SCAN_BYTES = 16 << 20
"""Most bytes of a document :func:`skeleton` scans for its top-level keys."""

NAMES = {
    "attestation-envelope": "an attestation (DSSE envelope)",
    "attestation-statement": "an attestation statement",
    "calibration": "a calibration file",
    "commitment": "a suite commitment",
    "generation": "a suite generation record",
    "grouped-rates-contract": "a grouped-rates contract",
    "grouped-rates-input": "a grouped-rates input",
    "grouped-rates-report": "a grouped-rates report",
    "keyring": "a keyring",
    "known-suites": "a known-suites list",
    "manifest": "an evaluation manifest",
    "metrics": "an episode's metrics",
    "model-cache-entry": "a served model's cache entry",
    "output-lock": "an output lock file",
    "pairing": "a pairing report",
    "recipe": "a generation recipe",
    "record": "a run record",
    "report-files": "a report's file list",
    "result": "a result artifact",
    "reveal": "a suite reveal",
    "run-catalog": "a run catalog (runs ls --json)",
    "run-header": "a run journal header",
    "run-info": "a run-info",
    "run-sidecar": "a run sidecar",
    "scenario": "a scenario file",
    "statistics": "a statistics artifact",
    "statistics-aggregate": "a statistics artifact (stats)",
    "statistics-paired": "a paired statistics artifact (compare)",
    "suite": "a suite manifest (suite.json)",
    "viewer-data": "a viewer page's data",
}
"""How a message names each format (and ``statistics``, either statistics artifact)."""

HINTS = {
    ("manifest", "result"): "run a policy on it first: emberbench run --manifest FILE ...",
    ("result", "manifest"): "a result embeds its manifest; give the manifest file it was run on",
    ("statistics-aggregate", "result"): "statistics are computed from result artifacts",
    ("statistics-paired", "result"): "statistics are computed from result artifacts",
    ("record", "result"): "`emberbench replay` and `emberbench view` take a run record",
}
"""A few words after the message for the mix-ups people make most."""

_STRING_RE = r'"[^"\\]*+(?:\\.[^"\\]*+)*+"'
_TOKEN = re.compile(_STRING_RE + r'\s*(:)?|[{}\[\]]|-?[0-9][0-9.eE+-]*|true|false|null')
_SPACE = re.compile(r"\s*")
_SCALARS = re.compile(r'(?:[^\[\]{}"]++|' + _STRING_RE + r')*+')
"""Everything up to the next bracket or brace that is not inside a string: a run of scalars, commas, colons."""
MAX_MEMBERS = 64
"""Members of a second-level object kept (a format's identifying fields are among the first)."""
MAX_STEPS = 100_000
"""Tokens :func:`skeleton` looks at before it stops (the keys met so far are what it found)."""
_DECODER = json.JSONDecoder()


def describe(fmt: str) -> str:
    """The words a message uses for format ``fmt`` (``an evaluation manifest``)."""
    return NAMES.get(fmt, f"a {fmt} file")


def skeleton(source: Any, *, max_bytes: int = MAX_SCAN_BYTES) -> dict[str, Any]:
    """The top level of a JSON object document, without keeping anything below its second level.

    ``source`` is a parsed object (returned as it is), text, bytes, or a
    seekable binary handle (its first ``max_bytes`` bytes are read, and its
    position is restored). Top-level keys map to their value when it is a
    scalar, to a dict of the scalar members of an object, and to ``[]`` for a
    list. A document that is not an object gives ``{}``; one that is cut or
    not valid JSON gives the keys met before the damage.
    """
    if isinstance(source, dict):
        return source
    if isinstance(source, str):
        return _scan(source[:max_bytes])
    if isinstance(source, (bytes, bytearray, memoryview)):
        return _scan(bytes(source[:max_bytes]).decode("utf-8", "replace"))
    try:
        position = source.tell()
        source.seek(0)
        data = source.read(max_bytes)
        source.seek(position)
    except (OSError, ValueError, AttributeError):
        return {}
    return _scan(data.decode("utf-8", "replace")) if isinstance(data, bytes) else {}


def _value(token: str) -> Any:
    try:
        return json.loads(token)
    except (ValueError, RecursionError):
        return None


def _scan(text: str) -> dict[str, Any]:
    """Walk the tokens of the first two levels; every value below is skipped whole by the C decoder.

    Inside a list, or an object past its first :data:`MAX_MEMBERS` members,
    runs of scalars are skipped by one regular expression, so that a long
    list of numbers or strings costs no Python step per item; at most
    :data:`MAX_STEPS` tokens are looked at in all.
    """
    position = _SPACE.match(text).end()  # type: ignore[union-attr]
    if text[position:position + 1] != "{":
        return {}
    top: dict[str, Any] = {}
    inner: dict[str, Any] | None = None  # the object being read at the second level
    key1: str | None = None
    key2: str | None = None
    depth, position, steps = 1, position + 1, 0
    while steps < MAX_STEPS:
        steps += 1
        if depth == 2 and (inner is None or len(inner) >= MAX_MEMBERS):  # nothing more to keep at this level
            position = _SCALARS.match(text, position).end()  # type: ignore[union-attr]
        match = _TOKEN.search(text, position)
        if match is None:
            break
        position = match.end()
        token = match.group(0)
        first = token[:1]
        if first in "{[":
            if depth == 2:  # a value of the third level: parsed and dropped, one at a time
                try:
                    _, position = _DECODER.raw_decode(text, match.start())
                except (ValueError, RecursionError):
                    break
                key2 = None
                continue
            if key1 is not None:
                top[key1] = {} if first == "{" else []
                inner = top[key1] if first == "{" else None
                key1 = None
            depth += 1
            continue
        if first in "}]":
            depth -= 1
            inner = None
            if depth == 0:
                break
            continue
        if first == '"' and match.group(1):  # a key
            key = _value(token[:token.rindex('"') + 1])
            if depth == 1:
                key1 = key if isinstance(key, str) else None
            else:
                key2 = key if isinstance(key, str) else None
            continue
        if depth == 1 and key1 is not None:
            top[key1], key1 = _value(token), None
        elif depth == 2 and inner is not None and key2 is not None:
            inner[key2], key2 = _value(token), None
    return top


def kind_of(source: Any, *, max_bytes: int = MAX_SCAN_BYTES) -> str | None:
    """The format ``source`` is recognizably of (by its version key, in its first ``max_bytes``), or None."""
    try:
        found = detect_format(skeleton(source, max_bytes=min(max_bytes, MAX_SCAN_BYTES)))
    except ValueError:  # the identifying keys of two formats: not recognizably either
        return None
    return None if found is None else found.format


def not_what_was_wanted(where: str, source: Any, wanted: str | tuple[str, ...], *,
                        max_bytes: int = MAX_SCAN_BYTES) -> str | None:
    """A one-line message when ``source`` is another kind of EMBERBench file than ``wanted``, else None.

    Args:
        where: names the file in the message.
        source: the document, as :func:`skeleton` takes it.
        wanted: the format (or formats) the reader reads; ``statistics``
            stands for both statistics artifacts.
        max_bytes: scan at most this much (a streaming reader passes what it
            has read itself, so that telling the kind never reads further
            than refusing the file did).
    """
    wanted_all = (wanted,) if isinstance(wanted, str) else wanted
    found = kind_of(source, max_bytes=max_bytes)
    accepted = set(wanted_all)
    if "statistics" in accepted:
        accepted |= {"statistics-aggregate", "statistics-paired"}
    if found is None or found in accepted:
        return None
    message = f"{where} is {describe(found)}, not {' or '.join(describe(w) for w in wanted_all)}"
    hint = HINTS.get((found, wanted_all[0]))
    return f"{message} ({hint})" if hint else message


__all__ = ["MAX_SCAN_BYTES", "NAMES", "describe", "kind_of", "not_what_was_wanted", "skeleton"]
