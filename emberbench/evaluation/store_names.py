"""The names a store-backed run uses: the store's in messages, and the ref of a complete result.

A run's records, journal and refs live in the store; these names are shared
by the run itself (:mod:`emberbench.evaluation.store_runner`), what it resumes
from (:mod:`emberbench.evaluation.store_adopt`) and the tools that find runs
again (:mod:`emberbench.runs`).
"""

from __future__ import annotations

from typing import Any

RESULT_REF_PREFIX = "results/"


def store_name(store: Any) -> str:
    """How messages name a store: its locator (which holds no secret), else its folder."""
    return str(getattr(store, "locator", None) or store.root)


def result_ref_name(manifest_hash: str, model_id: str) -> str:
    """The ref under which a complete artifact of (manifest, model) is stored."""
    from emberbench.store import journal_name

    return f"{RESULT_REF_PREFIX}{journal_name(manifest_hash, model_id)}"


__all__ = ["RESULT_REF_PREFIX", "result_ref_name", "store_name"]
