"""The model id rule: what a result's ``model_id`` (and a run's) may be.

Its own module, beside the result header that applies it, so that a reader
of run-infos (``runs ls``) checks model ids without importing manifests,
suites and numpy.
"""

from __future__ import annotations

from ..errors import ResultError

MAX_MODEL_ID = 256


def validate_model_id(model_id: object) -> str:
    """Return ``model_id`` if it is 1-256 printable characters with no outer whitespace.

    Raises:
        ResultError: otherwise.
    """
    if not isinstance(model_id, str):
        raise ResultError(f"model_id must be a string, got {type(model_id).__name__}")
    if not 1 <= len(model_id) <= MAX_MODEL_ID:
        raise ResultError(f"model_id must have 1 to {MAX_MODEL_ID} characters, got {len(model_id)}")
    if not model_id.isprintable():
        raise ResultError(f"model_id {model_id!r} contains non-printable characters")
    if model_id != model_id.strip():
        raise ResultError(f"model_id {model_id!r} has leading or trailing whitespace")
    return model_id
