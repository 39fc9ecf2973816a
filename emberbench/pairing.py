"""Exact pairing of two results on the same evaluation manifest.

An episode is a comparable pair exactly when both results hold an entry whose
key ``(manifest hash, index, scenario id, scenario hash, seed)`` equals the
scheduled key. Nothing else (model id, file name, order or time) takes part.
Results from different manifests are refused before any replay.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .canonical import canonical_bytes
from .errors import PairingError
from .manifest import EvaluationManifest
from .results import EvaluationResult, read_result_manifest, result_from_dict
from .suite import Suite
from .versions import PAIRING_VERSION

Key = tuple[str, int, str, str, int]


@dataclass(frozen=True, slots=True)
class PairingReport:
    """Which scheduled episodes both results have, and which each lacks."""

    manifest_hash: str
    model_a: str
    model_b: str
    total_scheduled: int
    paired: tuple[Key, ...]
    missing_from_a: tuple[Key, ...]
    missing_from_b: tuple[Key, ...]

    @property
    def paired_count(self) -> int:
        """Number of paired episodes."""
        return len(self.paired)

    def to_dict(self) -> dict[str, Any]:
        """JSON object of the report (keys as lists)."""
        return {
            "pairing_version": PAIRING_VERSION,
            "evaluation_manifest_hash": self.manifest_hash,
            "model_a": self.model_a,
            "model_b": self.model_b,
            "total_scheduled": self.total_scheduled,
            "paired_count": self.paired_count,
            "paired": [list(k) for k in self.paired],
            "missing_from_a": [list(k) for k in self.missing_from_a],
            "missing_from_b": [list(k) for k in self.missing_from_b],
        }


def require_same_manifest(a: EvaluationManifest, b: EvaluationManifest) -> None:
    """Raise PairingError unless both manifests are equal in hash and content."""
    if a.hash != b.hash or canonical_bytes(a.to_dict()) != canonical_bytes(b.to_dict()):
        raise PairingError(
            f"results use different evaluation manifests ({a.hash} vs {b.hash}); "
            "results from different schedules are never compared"
        )


def pair_results(a: EvaluationResult, b: EvaluationResult) -> PairingReport:
    """Pair two loaded results episode by episode on their shared manifest."""
    require_same_manifest(a.manifest, b.manifest)
    h = a.manifest.hash
    keys_a = {e.entry.key(h) for e in a.episodes}
    keys_b = {e.entry.key(h) for e in b.episodes}
    scheduled = [e.key(h) for e in a.manifest.episodes]
    return PairingReport(
        manifest_hash=h,
        model_a=a.model_id,
        model_b=b.model_id,
        total_scheduled=len(scheduled),
        paired=tuple(k for k in scheduled if k in keys_a and k in keys_b),
        missing_from_a=tuple(k for k in scheduled if k not in keys_a),
        missing_from_b=tuple(k for k in scheduled if k not in keys_b),
    )


def load_pair(path_a: str | Path, path_b: str | Path, suite: Suite, **load_kwargs: Any) -> tuple[EvaluationResult, EvaluationResult]:
    """Load two artifacts for comparison: manifests are compared before any replay.

    Each file is read and parsed once; ``load_kwargs`` (an ``authenticator``)
    go to :func:`~emberbench.results.result_from_dict`.
    """
    read_a, read_b = read_result_manifest(path_a), read_result_manifest(path_b)
    require_same_manifest(read_a[0], read_b[0])
    return tuple(  # type: ignore[return-value]
        result_from_dict(data, suite, raw=raw, where=str(path), **load_kwargs)
        for path, (_, _, data, raw) in ((path_a, read_a), (path_b, read_b))
    )
