"""Validating documents against the shipped JSON Schemas (with the ``jsonschema`` package).

Two validators per format, each built once:

* :func:`registry_validator` uses the schemas exactly as shipped, with every
  file of ``emberbench/schemas`` in its registry so that cross-file ``$ref``
  resolve offline (what another language's validator does);
* :func:`validator` uses the same schema with every ``$ref`` replaced by its
  target (none is recursive), which validates the same documents about four
  times faster; the test suite's write check uses it, and a test shows both
  agree.

The ``pattern`` keyword is evaluated with ECMA-262's meaning of ``$`` (the
very end of the string), which JSON Schema prescribes; Python's ``re`` would
also let ``$`` match before a final newline.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from jsonschema import ValidationError, validators
from jsonschema.validators import Draft202012Validator
from referencing import Registry, Resource

from emberbench.schemas import FormatSchema, detect_format, format_schema, load_schema, resolve_pointer, schema_files


def ecma_regex(pattern: str) -> re.Pattern[str]:
    """Compile a JSON Schema pattern for Python: every ``$`` outside a class becomes ``\\Z``."""
    out, in_class, escaped = [], False, False
    for ch in pattern:
        if escaped:
            out.append(ch)
            escaped = False
        elif ch == "\\":
            out.append(ch)
            escaped = True
        elif ch == "[" and not in_class:
            in_class = True
            out.append(ch)
        elif ch == "]" and in_class:
            in_class = False
            out.append(ch)
        elif ch == "$" and not in_class:
            out.append(r"\Z")
        else:
            out.append(ch)
    return re.compile("".join(out))


_compiled = cache(ecma_regex)


def _pattern(validator: Any, pattern: str, instance: Any, schema: dict[str, Any]) -> Any:
    if validator.is_type(instance, "string") and not _compiled(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


EcmaValidator = validators.extend(Draft202012Validator, {"pattern": _pattern})


@cache
def registry() -> Registry:
    """Every shipped schema, by ``$id``."""
    resources = []
    for file in schema_files():
        schema = load_schema(file)
        resources.append((schema["$id"], Resource.from_contents(schema)))
    return Registry().with_resources(resources)


@cache
def registry_validator(format_name: str) -> Any:
    """The validator of one format's schema as shipped (the schema itself is checked first)."""
    schema = format_schema(format_name).schema()
    EcmaValidator.check_schema(schema)
    return EcmaValidator(schema, registry=registry())


_DATA_KEYWORDS = frozenset({"const", "enum", "x-emberbench", "examples", "default"})


def inline_refs(node: Any, base: str) -> Any:
    """``node`` (from schema file ``base``) with every ``$ref`` replaced by a copy of its target."""
    if isinstance(node, list):
        return [inline_refs(item, base) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        file, _, fragment = node["$ref"].partition("#")
        file = file or base
        target = inline_refs(resolve_pointer(load_schema(file), fragment), file)
        rest = {key: value for key, value in node.items() if key != "$ref"}
        return {"allOf": [target, inline_refs(rest, base)]} if rest else target
    return {key: value if key in _DATA_KEYWORDS else inline_refs(value, base) for key, value in node.items()}


@cache
def validator(format_name: str) -> Any:
    """The fast validator of one format: its schema with every reference inlined."""
    entry = format_schema(format_name)
    schema = inline_refs(entry.schema(), entry.file)
    schema.pop("$defs", None)
    return EcmaValidator(schema)


def schema_errors(document: Any, format_name: str, *, shipped: bool = False) -> list[str]:
    """Every way ``document`` breaks the schema of ``format_name`` ("path: message"), sorted.

    Args:
        shipped: validate with the schema files as shipped (references
            resolved through the registry) instead of the inlined copy.
    """
    check = registry_validator(format_name) if shipped else validator(format_name)
    if not shipped and check.is_valid(document):
        return []
    found = check.iter_errors(document)
    return sorted(f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message[:300]}" for e in found)


def schema_accepts(document: Any, format_name: str, *, shipped: bool = False) -> bool:
    """Whether ``document`` meets the schema of ``format_name``; stops at the first error (``schema_errors`` lists
    them all, which through the shipped files' references costs a large part of a second per document)."""
    check = registry_validator(format_name) if shipped else validator(format_name)
    return bool(check.is_valid(document))


def check_document(document: Any) -> tuple[FormatSchema | None, list[str]]:
    """Detect the format of ``document`` and validate it; ``(None, [])`` for an unknown document."""
    entry = detect_format(document)
    if entry is None:
        return None, []
    return entry, schema_errors(document, entry.format)
