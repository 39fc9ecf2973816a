"""The header of a result artifact: its top-level fields, how they are written and how they are checked.

The header is every top-level member but ``episodes``: the versions, the
model id, the evaluation manifest (complete) and the manifest's fields
repeated (docs/formats.md). The writer (:mod:`emberbench.results.artifact`)
and the streaming reader (:mod:`emberbench.results.stream`) both use this
module, so the artifact's keys and the header's rules are written once.
"""

from __future__ import annotations

from typing import Any

from ..errors import ManifestError, ResultError
from ..io.versions import RESULT_VERSION
from .manifest import EvaluationManifest, manifest_from_dict
from .model_id import validate_model_id

HEADER_FIELDS = (
    "suite_id", "suite_version", "suite_hash", "simulator_version", "observation_version", "metrics_version",
)
RESULT_KEYS = frozenset({"result_version", "model_id", "evaluation_manifest_hash", "manifest", "episodes",
                         *HEADER_FIELDS})
EPISODE_KEYS = frozenset({"index", "scenario_id", "scenario_hash", "seed", "record_digest", "record", "metrics"})
def header_dict(manifest: EvaluationManifest, model_id: str) -> dict[str, Any]:
    """Every top-level artifact field except ``episodes``."""
    out: dict[str, Any] = {
        "result_version": RESULT_VERSION,
        "model_id": model_id,
        "evaluation_manifest_hash": manifest.hash,
        "manifest": manifest.to_dict(),
    }
    for name in HEADER_FIELDS:
        out[name] = getattr(manifest, name)
    return out


def check_header(data: dict[str, Any], where: str) -> tuple[EvaluationManifest, str]:
    """Check the top-level fields of an artifact object (``episodes`` only for presence).

    Returns:
        (manifest, model_id).

    Raises:
        ResultError: the first failing check: version, keys, model id,
            embedded manifest, its hash, then each repeated header field.
    """
    if "result_version" in data and data["result_version"] != RESULT_VERSION:
        raise ResultError(
            f"{where}: unsupported result_version {data['result_version']!r} (this version reads {RESULT_VERSION!r})"
        )
    unknown, missing = sorted(set(data) - RESULT_KEYS), sorted(RESULT_KEYS - set(data))
    if unknown or missing:
        raise ResultError(f"{where}: top-level keys differ: unknown {unknown}, missing {missing}")
    model_id = data["model_id"]
    try:
        validate_model_id(model_id)
        manifest = manifest_from_dict(data["manifest"], where="embedded manifest")
    except (ResultError, ManifestError) as exc:
        raise ResultError(f"{where}: {exc}") from None
    if manifest.hash != data["evaluation_manifest_hash"]:
        raise ResultError(
            f"{where}: embedded manifest hashes to {manifest.hash}, not evaluation_manifest_hash "
            f"{data['evaluation_manifest_hash']}"
        )
    for name in HEADER_FIELDS:
        if data[name] != getattr(manifest, name):
            raise ResultError(f"{where}: header {name} {data[name]!r} differs from the manifest's "
                              f"{getattr(manifest, name)!r}")
    return manifest, model_id


__all__ = [
    "EPISODE_KEYS",
    "HEADER_FIELDS",
    "RESULT_KEYS",
    "check_header",
    "header_dict",
]
