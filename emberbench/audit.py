"""Auditing a store: every stored result artifact, re-verified with full replay."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import EmberError
from .results import Authenticator, authenticate_all, parse_result_bytes, result_from_dict
from .suite import Suite

RESULT_REF_PREFIX = "results/"


@dataclass(frozen=True, slots=True)
class AuditVerdict:
    """The verdict on one stored artifact."""

    ref: str
    key: str
    ok: bool
    message: str


def audit_store(store: Any, suite: Suite, *, authenticator: Authenticator = authenticate_all) -> list[AuditVerdict]:
    """Load every artifact under a ``results/`` ref exactly as the result loader would.

    Each artifact is read through the store (frame and checksum checked),
    must hash to its key, and must pass every check of the result loader,
    including replay of every record. Verdicts come in ref-name order.
    """
    from emberbench.store import StoreError

    verdicts = []
    for name, key in sorted(store.refs.items()):
        if not name.startswith(RESULT_REF_PREFIX):
            continue
        where = f"ref {name} ({key[:12]})"
        try:
            raw = store.get(key, verify_data=True)
            result = result_from_dict(parse_result_bytes(raw, where=where), suite, raw=raw, where=where,
                                      authenticator=authenticator)
        except (EmberError, StoreError) as exc:
            verdicts.append(AuditVerdict(name, key, False, str(exc)))
            continue
        verdicts.append(AuditVerdict(
            name, key, True,
            f"model {result.model_id!r}: {len(result.episodes)}/{len(result.manifest.episodes)} episodes authenticated",
        ))
    return verdicts
