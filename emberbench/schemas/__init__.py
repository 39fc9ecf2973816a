"""JSON Schemas (draft 2020-12) of every format EMBERBench saves, shipped as package data.

Each ``<name>.schema.json`` file in this folder describes one format, so that
tools in any language can check a file's form before handing it to
EMBERBench. The schemas say what each strict reader accepts field by field
(versions as constants, required keys, no unknown keys, patterns for hashes
and ids, integer ranges); rules that relate fields to each other, and every
check that needs the simulator, stay with the readers (docs/formats.md lists
them).

A format schema carries an ``x-emberbench`` annotation (validators ignore
unknown keywords) that this module reads::

    "x-emberbench": {
      "format": "result",                              # the format's name
      "detect": {"/result_version": null},             # JSON pointers that identify a document:
                                                       # null = must be present, else the value
      "versions": {"/result_version": "emberbench.io.versions:RESULT_VERSION"}
    }

``versions`` maps each pointer whose schema holds a ``const`` to the Python
constant it must equal; the tests fail when one changes without the other.
Shared definitions live in files without the annotation (``common``,
``statistics-common``). Schemas refer to each other by relative ``$ref``
against the ``$id`` base :data:`BASE_URI`, a reserved ``.invalid`` address:
the schemas are identified by it, never fetched from it.

Adding a format is one file: drop ``<name>.schema.json`` with its
annotation here (``tests/unit/test_schemas.py`` then checks it against its
constants and validates every matching file the tests write).

This module only reads and inspects the schemas (standard library only);
validating needs a JSON Schema implementation, such as the ``jsonschema``
package the tests use.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

BASE_URI = "https://emberbench.invalid/schemas/"
"""The ``$id`` prefix of every schema; a schema's ``$id`` is this plus its file name."""

SUFFIX = ".schema.json"
ANNOTATION = "x-emberbench"
_ABSENT = object()


@dataclass(frozen=True, slots=True)
class FormatSchema:
    """One saved format and its schema file.

    Attributes:
        format: the format's name (``result``, ``grouped-rates-input``...).
        file: the schema's file name in this package.
        detect: ``(pointer, value)`` pairs that identify a document of the
            format; a value of None only requires the pointer to exist.
        versions: ``(pointer, "module:NAME")`` pairs: the schema's ``const``
            at ``pointer`` must equal that Python constant.
    """

    format: str
    file: str
    detect: tuple[tuple[str, Any], ...]
    versions: tuple[tuple[str, str], ...]

    @property
    def id(self) -> str:
        """The schema's ``$id``."""
        return BASE_URI + self.file

    def schema(self) -> dict[str, Any]:
        """The parsed schema document."""
        return load_schema(self.file)

    def matches(self, document: Any) -> bool:
        """Whether ``document`` carries every identifying field of this format."""
        for pointer, value in self.detect:
            found = resolve_pointer(document, pointer)
            if found is _ABSENT or (value is not None and found != value):
                return False
        return True


def schema_files() -> tuple[str, ...]:
    """File names of every schema in this package, sorted."""
    folder = resources.files(__name__)
    return tuple(sorted(p.name for p in folder.iterdir() if p.name.endswith(SUFFIX)))


@cache
def _load(file: str) -> str:
    return (resources.files(__name__) / file).read_text(encoding="utf-8")


def load_schema(file: str) -> dict[str, Any]:
    """Return a fresh parsed copy of the schema ``file`` (e.g. ``result.schema.json``).

    Raises:
        FileNotFoundError: no such schema in this package.
    """
    if "/" in file or not file.endswith(SUFFIX):
        raise FileNotFoundError(f"not a schema file name: {file!r}")
    return json.loads(_load(file))


@cache
def format_schemas() -> tuple[FormatSchema, ...]:
    """Every schema that describes a saved format (those with an ``x-emberbench`` annotation)."""
    out = []
    for file in schema_files():
        note = load_schema(file).get(ANNOTATION)
        if note is None:
            continue
        out.append(FormatSchema(
            format=note["format"], file=file,
            detect=tuple(sorted(note["detect"].items())),
            versions=tuple(sorted(note.get("versions", {}).items())),
        ))
    return tuple(out)


def format_schema(name: str) -> FormatSchema:
    """The schema of the format called ``name``.

    Raises:
        KeyError: no format has that name.
    """
    for entry in format_schemas():
        if entry.format == name:
            return entry
    raise KeyError(f"no schema for format {name!r}; known: {', '.join(f.format for f in format_schemas())}")


def detect_format(document: Any) -> FormatSchema | None:
    """The format whose identifying fields ``document`` carries, or None.

    Raises:
        ValueError: the document matches more than one format (the schemas'
            ``detect`` annotations overlap).
    """
    found = [entry for entry in format_schemas() if entry.matches(document)]
    if len(found) > 1:
        raise ValueError(f"document matches several formats: {', '.join(f.format for f in found)}")
    return found[0] if found else None


def resolve_pointer(document: Any, pointer: str) -> Any:
    """The value at JSON pointer ``pointer`` in ``document``, or a private marker when absent."""
    value = document
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return _ABSENT
    return value


def schema_const(schema: dict[str, Any], pointer: str) -> Any:
    """The ``const`` the schema requires at document pointer ``pointer``.

    Walks ``properties`` from the root, following references inside the same
    file (``#/...``). A schema that also accepts older versions of its format
    (still read, no longer written) lists every version in an ``enum``, the
    one written last: that one is returned.

    Raises:
        KeyError: the schema pins no constant there.
    """
    node = _follow(schema, schema)
    for token in pointer.split("/")[1:]:
        node = _follow(schema, node.get("properties", {}).get(token, {}))
    if "const" in node:
        return node["const"]
    if isinstance(node.get("enum"), list) and node["enum"]:
        return node["enum"][-1]
    raise KeyError(f"schema {schema.get('$id')} has no const at {pointer}")


def _follow(root: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while isinstance(node.get("$ref"), str) and node["$ref"].startswith("#"):
        target = resolve_pointer(root, node["$ref"][1:])
        if not isinstance(target, dict):
            raise KeyError(f"unresolvable reference {node['$ref']}")
        node = target
    return node


__all__ = [
    "BASE_URI",
    "FormatSchema",
    "detect_format",
    "format_schema",
    "format_schemas",
    "load_schema",
    "resolve_pointer",
    "schema_const",
    "schema_files",
]
