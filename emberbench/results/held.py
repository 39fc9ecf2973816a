"""A result held in memory, checked before use: exactly what a file of it would hold, or a one-line error.

:class:`~emberbench.results.artifact.EvaluationResult` and its parts are frozen
dataclasses, but frozen only against plain assignment: a part can still be
replaced (``object.__setattr__``, ``dataclasses.replace``, which skips no
check it does not have) and then hold anything, a ``None`` for an episode or
a string for a record. The public functions that take a result in memory
(``aggregate_statistics``, ``paired_statistics``, ``pair_results``) check it
here first, as strictly as a file:

* :func:`artifact_of` requires every part to be of its type and to serialize
  to canonical JSON; the statistics then verify those bytes exactly as a
  file's (every check, every record replayed) and require the result's
  ``digest`` to be their SHA-256;
* :func:`check_pairable` checks what pairing uses without a suite to replay
  against: the types, the manifest (its fields and its hash), the model id,
  and that the episodes are entries of that manifest in manifest order.

Anything else raises :class:`ResultError` naming the part, never an
``AttributeError`` or ``TypeError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..io.canonical import canonical_bytes
from ..errors import MALFORMED, CanonicalFormError, ManifestError, ResultError
from .manifest import ManifestEntry, check_manifest_hash, check_manifest_object
from ..records.metrics import EpisodeMetrics
from ..records.record import RunRecord
from .artifact import EvaluationResult, ResultEpisode
from .header import header_dict
from .model_id import validate_model_id


def _require(value: object, kind: type, where: str) -> None:
    if not isinstance(value, kind):
        raise ResultError(f"{where}: expected {kind.__name__}, got {type(value).__name__}")


def _serialized(to_dict: Callable[[], Any], where: str) -> Any:
    try:
        return to_dict()
    except CanonicalFormError as exc:
        raise ResultError(f"{where}: {exc}") from None
    except MALFORMED as exc:
        raise ResultError(f"{where} cannot be serialized ({type(exc).__name__}: {exc})") from None


def _episodes(result: EvaluationResult, where: str) -> tuple[ResultEpisode, ...]:
    """The result's episodes, each of its types (its fields are not looked into)."""
    episodes = result.episodes
    if not isinstance(episodes, tuple | list):
        raise ResultError(f"{where}: episodes must be a tuple of ResultEpisode, got {type(episodes).__name__}")
    for k, e in enumerate(episodes):
        at = f"{where}: episodes[{k}]"
        _require(e, ResultEpisode, at)
        _require(e.entry, ManifestEntry, f"{at}.entry")
        _require(e.record, RunRecord, f"{at}.record")
        _require(e.metrics, EpisodeMetrics, f"{at}.metrics")
    return tuple(episodes)


def artifact_of(result: object, where: str) -> tuple[dict[str, Any], bytes]:
    """The artifact object and bytes (canonical JSON and a newline) of an in-memory result.

    Nothing is verified beyond the manifest's fields and what serializing
    needs; the caller verifies the bytes as a file's
    (:func:`emberbench.results.artifact.result_from_dict`) and then compares the
    result's ``digest`` with theirs.

    Raises:
        ResultError: a part is not of its type or cannot be serialized.
    """
    if not isinstance(result, EvaluationResult):
        raise ResultError(f"{where}: expected EvaluationResult, got {type(result).__name__}")
    try:
        check_manifest_object(result.manifest)
    except ManifestError as exc:
        raise ResultError(f"{where}: manifest: {exc}") from None
    data = _serialized(lambda: header_dict(result.manifest, result.model_id), f"{where}: manifest")
    data["episodes"] = [
        {**_serialized(e.entry.to_dict, f"{where}: episodes[{k}].entry"), "record_digest": e.record_digest,
         "record": _serialized(e.record.to_dict, f"{where}: episodes[{k}].record"),
         "metrics": _serialized(e.metrics.to_dict, f"{where}: episodes[{k}].metrics")}
        for k, e in enumerate(_episodes(result, where))
    ]
    return data, _serialized(lambda: canonical_bytes(data) + b"\n", where)


def check_pairable(result: object, where: str) -> EvaluationResult:
    """Check the parts of an in-memory result that pairing uses; return it.

    Raises:
        ResultError: a part is not of its type, the manifest fails its checks
            or its hash, the model id is invalid, or an episode is not the
            manifest's entry at its index, in increasing index order.
    """
    if not isinstance(result, EvaluationResult):
        raise ResultError(f"{where}: expected EvaluationResult, got {type(result).__name__}")
    try:
        check_manifest_hash(check_manifest_object(result.manifest))
        validate_model_id(result.model_id)
    except (ManifestError, ResultError) as exc:
        raise ResultError(f"{where}: {exc}") from None
    entries = result.manifest.episodes
    last = -1
    for k, e in enumerate(_episodes(result, where)):
        index = e.entry.index
        if type(index) is not int or not last < index < len(entries) or e.entry != entries[index]:
            raise ResultError(f"{where}: episodes[{k}] is not the manifest's entry at its index, in manifest order")
        last = index
    return result


__all__ = ["artifact_of", "check_pairable"]
