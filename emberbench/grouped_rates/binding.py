"""What a report binds: the exact input bytes, the contract and the reader's source.

The reader's source is the list :data:`READER_SOURCES` of the contract: every
file the reader executes, as stored on disk (a checkout that rewrites line
endings therefore has a different reader digest). Each file is named by its
path relative to the repository root and bound by its SHA-256 and length; the
combined digest is the SHA-256 of the canonical JSON of the ``[path, sha256]``
pairs in that order.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..io.canonical import digest, sha256_hex
from ..errors import GroupedRatesError
from .contract import READER_SOURCES, contract_document

# emberbench/grouped_rates/binding.py -> the folder that holds emberbench/.
_ROOT = Path(__file__).resolve().parent.parent.parent


def input_binding(data: bytes) -> dict[str, Any]:
    """Return the binding of the exact input bytes."""
    return {"sha256": sha256_hex(data), "bytes": len(data)}


def contract_binding() -> dict[str, Any]:
    """Return the contract's format, version and canonical digest."""
    document = contract_document()
    return {
        "format": document["format"],
        "version": document["version"],
        "sha256": digest(document),
    }


def reader_binding(root: Path | None = None) -> dict[str, Any]:
    """Return the binding of every reader source file under ``root``.

    Args:
        root: the folder holding ``emberbench/``; defaults to where this
            module was loaded from.

    Raises:
        GroupedRatesError: if a listed source file cannot be read.
    """
    base = _ROOT if root is None else root
    files = []
    for relative in READER_SOURCES:
        try:
            data = (base / relative).read_bytes()
        except OSError as exc:
            raise GroupedRatesError(f"reader source {relative} cannot be read: {exc}") from exc
        files.append({"path": relative, "sha256": sha256_hex(data), "bytes": len(data)})
    combined = digest([[entry["path"], entry["sha256"]] for entry in files])
    return {"files": files, "sha256": combined}
