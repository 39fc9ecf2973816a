"""The structure of every run in a store, checked the same way by ``store fsck``, ``store audit`` and repair.

:mod:`emberbench.evaluation.run_damage` checks what a run's own path reads
(its refs, journal, run-info and the objects they reference). A signed run
has one more part, its attestation (:mod:`emberbench.provenance`), which sits
above the run path: its envelope must parse and bind the run's result and its
current run-info. The signature itself is not checked here (that needs the
trusted keys: ``runs verify --keyring``).
"""

from __future__ import annotations

from typing import Any

from ..evaluation.run_damage import RunDamage, run_damage


def attestation_damage(store: Any, run: str) -> RunDamage | None:
    """The damage of the attestation of ``run``, if it has one (unreadable, or bound to another result or run-info).

    Raises:
        StoreIOError: the store cannot be read.
    """
    from emberbench.store import StoreError, StoreIOError

    from ..errors import AttestationError
    from ..provenance.attest import attestation_ref, check_run_attestation

    ref = attestation_ref(run)
    if not store.refs.exists(ref):
        return None
    try:
        check_run_attestation(store, run, None, check_content=False)
    except StoreIOError:
        raise
    except (AttestationError, StoreError) as exc:
        return RunDamage(run, f"ref {ref}", " ".join(str(exc).split()))
    return None


def structure_damage(store: Any, run: str, *, journals: frozenset[str] | None = None, against_ref: bool = True,
                     present: frozenset[str] | None = None) -> RunDamage | None:
    """The first structural damage of ``run``: its run path's (refs, journal, run-info, objects), then its attestation."""
    found = run_damage(store, run, journals=journals, against_ref=against_ref, present=present)
    return found if found is not None else attestation_damage(store, run)


def store_structure_damage(store: Any, *, present: frozenset[str] | None = None) -> list[RunDamage]:
    """:func:`structure_damage` of every run of ``store``, in run-name order (what ``store fsck`` prints)."""
    from ..evaluation.store_names import run_names

    journals = frozenset(store.journal_names())
    found = (structure_damage(store, run, journals=journals, present=present) for run in run_names(store))
    return [damage for damage in found if damage is not None]


__all__ = ["attestation_damage", "store_structure_damage", "structure_damage"]
