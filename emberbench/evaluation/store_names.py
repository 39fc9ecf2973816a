"""The names a store-backed run uses: the store's in messages, the ref of a complete result, the runs of a store.

A run's records, journal and refs live in the store; these names are shared
by the run itself (:mod:`emberbench.evaluation.store_runner`), what it resumes
from (:mod:`emberbench.evaluation.store_adopt`), the checks of a run's
structure (:mod:`emberbench.evaluation.run_damage`) and the tools that find
runs again (:mod:`emberbench.runs`).
"""

from __future__ import annotations

import re
from typing import Any

from .run_info import RUN_INFO_REF_PREFIX

RESULT_REF_PREFIX = "results/"
_RUN_RE = re.compile(r"run-[0-9a-f]{64}")


def store_name(store: Any) -> str:
    """How messages name a store: its locator (which holds no secret), else its folder."""
    return str(getattr(store, "locator", None) or store.root)


def result_ref_name(manifest_hash: str, model_id: str) -> str:
    """The ref under which a complete artifact of (manifest, model) is stored."""
    from emberbench.store import journal_name

    return f"{RESULT_REF_PREFIX}{journal_name(manifest_hash, model_id)}"


def is_run_name(name: str) -> bool:
    """Whether ``name`` is the name of an EMBERBench run (``run-`` and 64 lowercase hex digits)."""
    return _RUN_RE.fullmatch(name) is not None


def run_names(store: Any) -> list[str]:
    """Every run of ``store``, sorted: journals and ``runs/``/``results/`` refs named ``run-<64 hex>``.

    A run whose journal was lost still has its refs, and a run whose run-info
    was never written still has its journal: each is listed once.
    """
    names = {name for name in store.journal_names() if _RUN_RE.fullmatch(name)}
    for ref in store.refs.names():
        for lead in (RUN_INFO_REF_PREFIX, RESULT_REF_PREFIX):
            if ref.startswith(lead) and _RUN_RE.fullmatch(ref[len(lead):]):
                names.add(ref[len(lead):])
    return sorted(names)


__all__ = ["RESULT_REF_PREFIX", "is_run_name", "result_ref_name", "run_names", "store_name"]
