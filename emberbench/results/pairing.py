"""Exact pairing of two results on the same evaluation manifest.

An episode is a comparable pair exactly when both results hold an entry whose
key ``(manifest hash, index, scenario id, scenario hash, seed)`` equals the
scheduled key. Nothing else (model id, file name, order or time) takes part.
Results from different manifests are refused before any replay: the
manifests come from the two artifacts' headers, read before either file is
read in full (:func:`verify_pair`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import PairingError
from .manifest import EvaluationManifest
from .stream import Sink, VerifiedArtifact, read_header, verify_artifact
from .artifact import EvaluationResult, load_result
from ..sim.suite import Suite
from ..io.versions import PAIRING_VERSION

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
    if a.hash != b.hash or a != b:
        raise PairingError(
            f"results use different evaluation manifests ({a.hash} vs {b.hash}); "
            "results from different schedules are never compared"
        )


def pair_results(a: EvaluationResult, b: EvaluationResult) -> PairingReport:
    """Pair two loaded results episode by episode on their shared manifest.

    Each result is checked first (:func:`emberbench.results.held.check_pairable`):
    its types, its manifest and hash, its model id, and that its episodes are
    entries of that manifest in manifest order. Its records are not replayed
    (there is no suite here); the statistics functions replay them.

    Raises:
        ResultError: a result is malformed ("result A: ...", "result B: ...").
        PairingError: the results use different manifests.
    """
    from .held import check_pairable

    check_pairable(a, "result A")
    check_pairable(b, "result B")
    require_same_manifest(a.manifest, b.manifest)
    return pairing_report(a.manifest, a.model_id, b.model_id, [e.index for e in a.episodes],
                          [e.index for e in b.episodes])


def pairing_report(manifest: EvaluationManifest, model_a: str, model_b: str, indices_a: Any,
                   indices_b: Any) -> PairingReport:
    """The pairing of two results of ``manifest`` given the manifest indices each holds."""
    h = manifest.hash
    have_a, have_b = set(indices_a), set(indices_b)
    scheduled = [(e.index, e.key(h)) for e in manifest.episodes]
    return PairingReport(
        manifest_hash=h,
        model_a=model_a,
        model_b=model_b,
        total_scheduled=len(scheduled),
        paired=tuple(k for i, k in scheduled if i in have_a and i in have_b),
        missing_from_a=tuple(k for i, k in scheduled if i not in have_a),
        missing_from_b=tuple(k for i, k in scheduled if i not in have_b),
    )


def verify_pair(path_a: str | Path, path_b: str | Path, suite: Suite, *, sink_a: Sink | None = None,
                sink_b: Sink | None = None, replayer: Any = None) -> tuple[VerifiedArtifact, VerifiedArtifact]:
    """Verify two artifacts for comparison, streaming: their manifests are compared first, from the headers.

    Each file is then verified completely (every record replayed once),
    handing its episodes to its sink (see
    :func:`emberbench.results.stream.verify_artifact`).

    Raises:
        ResultError: a header or an artifact fails a check.
        PairingError: the manifests differ (before any episode is read).
    """
    require_same_manifest(read_header(path_a).manifest, read_header(path_b).manifest)
    done_a = verify_artifact(path_a, suite, sink=sink_a, replayer=replayer)
    done_b = verify_artifact(path_b, suite, sink=sink_b, replayer=replayer)
    require_same_manifest(done_a.manifest, done_b.manifest)
    # One manifest object for both (they are equal): B's copy is released.
    return done_a, dataclasses.replace(done_b, manifest=done_a.manifest)


def pair_artifacts(path_a: str | Path, path_b: str | Path, suite: Suite, *, replayer: Any = None) -> PairingReport:
    """Verify two artifacts (streaming) and pair them."""
    a, b = verify_pair(path_a, path_b, suite, replayer=replayer)
    return pairing_report(a.manifest, a.model_id, b.model_id, a.indices, b.indices)


def load_pair(path_a: str | Path, path_b: str | Path, suite: Suite, **load_kwargs: Any) -> tuple[EvaluationResult, EvaluationResult]:
    """Load two artifacts whole for comparison: manifests are compared (from the headers) before any replay.

    ``load_kwargs`` (an ``authenticator``) go to
    :func:`~emberbench.results.artifact.load_result`. Both results are kept in memory;
    commands use :func:`verify_pair` instead.
    """
    head_a, head_b = read_header(path_a), read_header(path_b)
    require_same_manifest(head_a.manifest, head_b.manifest)
    return load_result(path_a, suite, **load_kwargs), load_result(path_b, suite, **load_kwargs)
