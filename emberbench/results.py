"""Per-model result artifacts: layout, streaming serialization and the fail-closed loader.

The artifact is canonical JSON plus one newline (docs/formats.md)::

    {"result_version": "1.0", "model_id": "...", "evaluation_manifest_hash": "<sha256>",
     "suite_id", "suite_version", "suite_hash", "simulator_version",
     "observation_version", "metrics_version",            # repeat the manifest
     "manifest": {...},                                    # the complete manifest
     "episodes": [{"index", "scenario_id", "scenario_hash", "seed",
                   "record_digest", "record": {...}, "metrics": {...}}, ...]}

Because canonical JSON of a nested object is the canonical JSON of its parts,
the artifact can be assembled from the stored canonical bytes of each record
without parsing them again (:func:`artifact_chunks`). The result digest is the
SHA-256 of the artifact file as saved (canonical JSON and the newline).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .canonical import CanonicalFormError, canonical_bytes, is_sha256_hex, parse_json_strict, sha256_hex
from .episode import authenticate
from .errors import ManifestError, RecordAuthenticationError, ResultError
from .manifest import EvaluationManifest, ManifestEntry, check_manifest, manifest_from_dict
from .metrics import EpisodeMetrics
from .record import RunRecord, record_from_dict
from .suite import Suite
from .versions import RESULT_VERSION

HEADER_FIELDS = (
    "suite_id", "suite_version", "suite_hash", "simulator_version", "observation_version", "metrics_version",
)
RESULT_KEYS = frozenset({"result_version", "model_id", "evaluation_manifest_hash", "manifest", "episodes",
                         *HEADER_FIELDS})
EPISODE_KEYS = frozenset({"index", "scenario_id", "scenario_hash", "seed", "record_digest", "record", "metrics"})
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


@dataclass(frozen=True, slots=True)
class ResultEpisode:
    """One completed, authenticated episode of a result."""

    entry: ManifestEntry
    record_digest: str
    record: RunRecord
    metrics: EpisodeMetrics

    @property
    def index(self) -> int:
        """The manifest index."""
        return self.entry.index


@dataclass(frozen=True, slots=True)
class EvaluationResult:
    """A loaded, fully verified per-model result.

    Attributes:
        model_id: the evaluator's label.
        manifest: the evaluation manifest.
        episodes: completed episodes in manifest order.
        digest: SHA-256 of the artifact bytes as saved.
    """

    model_id: str
    manifest: EvaluationManifest
    episodes: tuple[ResultEpisode, ...]
    digest: str

    @property
    def manifest_hash(self) -> str:
        """The evaluation manifest hash."""
        return self.manifest.hash

    def to_dict(self) -> dict[str, Any]:
        """The artifact's JSON object."""
        out = header_dict(self.manifest, self.model_id)
        out["episodes"] = [
            {**e.entry.to_dict(), "record_digest": e.record_digest, "record": e.record.to_dict(),
             "metrics": e.metrics.to_dict()}
            for e in self.episodes
        ]
        return out


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


def episode_chunk(entry: ManifestEntry, record_bytes: bytes, record_digest: str, metrics_bytes: bytes) -> bytes:
    """Canonical JSON of one artifact episode, built around already-canonical parts.

    The keys are written in sorted order (index, metrics, record,
    record_digest, scenario_hash, scenario_id, seed), which is what canonical
    JSON of the whole object would give.
    """
    return b"".join((
        b'{"index":', str(entry.index).encode(),
        b',"metrics":', metrics_bytes,
        b',"record":', record_bytes,
        b',"record_digest":"', record_digest.encode("ascii"),
        b'","scenario_hash":"', entry.scenario_hash.encode("ascii"),
        b'","scenario_id":', canonical_bytes(entry.scenario_id),
        b',"seed":', str(entry.seed).encode(), b"}",
    ))


def artifact_chunks(manifest: EvaluationManifest, model_id: str, chunks: Iterable[bytes]) -> Iterator[bytes]:
    """Yield the artifact bytes (canonical JSON and a newline) around episode chunks.

    ``episodes`` sorts first among the top-level keys, so the header follows
    the list.
    """
    header = canonical_bytes(header_dict(manifest, model_id))
    yield b'{"episodes":['
    first = True
    for chunk in chunks:
        if not first:
            yield b","
        yield chunk
        first = False
    yield b"],"
    yield header[1:]
    yield b"\n"


Authenticator = Callable[[list[dict[str, Any]], Suite], list[EpisodeMetrics]]


def authenticate_all(records: list[dict[str, Any]], suite: Suite) -> list[EpisodeMetrics]:
    """Authenticate records one after another, in process (the default authenticator)."""
    out = []
    for i, record in enumerate(records):
        try:
            out.append(authenticate(record, suite))
        except RecordAuthenticationError as exc:
            raise RecordAuthenticationError(f"episode {i}: {exc}", field=exc.field) from None
    return out


def parse_result_bytes(raw: bytes, *, where: str) -> dict[str, Any]:
    """Parse artifact bytes into the JSON object (strict JSON, no checks yet)."""
    try:
        data = parse_json_strict(raw, where=where)
    except CanonicalFormError as exc:
        raise ResultError(str(exc)) from None
    if not isinstance(data, dict):
        raise ResultError(f"{where}: a result artifact must be a JSON object")
    return data


def read_result_manifest(path: str | Path) -> tuple[EvaluationManifest, str, dict[str, Any], bytes]:
    """Structural read of an artifact: its manifest and model id, without any replay.

    Returns:
        (manifest, model_id, parsed object, raw bytes).
    """
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ResultError(f"{p}: cannot read result artifact: {exc.strerror}") from None
    data = parse_result_bytes(raw, where=str(p))
    manifest, model_id = _check_header(data, str(p))
    return manifest, model_id, data, raw


def _check_header(data: dict[str, Any], where: str) -> tuple[EvaluationManifest, str]:
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


def result_from_dict(data: dict[str, Any], suite: Suite, *, raw: bytes | None = None, where: str = "result",
                     authenticator: Authenticator = authenticate_all) -> EvaluationResult:
    """Verify an artifact object completely and return the result (spec section 5).

    Args:
        data: the parsed artifact.
        suite: the suite the manifest must target.
        raw: the artifact bytes as read; if given they must equal the
            canonical re-serialization (and define the digest).
        where: names the source in messages.
        authenticator: replays the records (in process by default; the
            cluster passes a parallel one with identical verdicts).

    Raises:
        ResultError: the first check that fails, saying what and where.
    """
    manifest, model_id = _check_header(data, where)
    try:
        check_manifest(manifest, suite)
    except ManifestError as exc:
        raise ResultError(f"{where}: {exc}") from None
    episodes = data["episodes"]
    if not isinstance(episodes, list):
        raise ResultError(f"{where}: episodes must be a list")
    last = -1
    parsed: list[tuple[ManifestEntry, str, RunRecord, dict[str, Any]]] = []
    for pos, e in enumerate(episodes):
        at = f"{where}: episodes[{pos}]"
        if not isinstance(e, dict) or set(e) != EPISODE_KEYS:
            keys = sorted(e) if isinstance(e, dict) else type(e).__name__
            raise ResultError(f"{at} must have exactly the keys {sorted(EPISODE_KEYS)}, got {keys}")
        index = e["index"]
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(manifest.episodes):
            raise ResultError(f"{at}: index {index!r} is not in the manifest")
        if index <= last:
            raise ResultError(f"{at}: index {index} is out of manifest order or repeated (after {last})")
        last = index
        entry = manifest.episodes[index]
        for name in ("scenario_id", "scenario_hash", "seed"):
            if e[name] != getattr(entry, name) or type(e[name]) is not type(getattr(entry, name)):
                raise ResultError(f"{at}: {name} {e[name]!r} differs from manifest entry {index}")
        try:
            record = record_from_dict(e["record"])
        except RecordAuthenticationError as exc:
            raise ResultError(f"{at}: {exc}") from None
        for name in ("scenario_id", "scenario_hash", "seed"):
            if getattr(record, name) != getattr(entry, name):
                raise ResultError(f"{at}: record header {name} differs from manifest entry {index}")
        digest = e["record_digest"]
        if not is_sha256_hex(digest):
            raise ResultError(f"{at}: record_digest is not a lowercase SHA-256 hex digest")
        # The whole artifact must re-serialize to its own bytes (checked below),
        # so the record's canonical form here is the form it has in the file.
        if sha256_hex(canonical_bytes(e["record"])) != digest:
            raise ResultError(f"{at}: record does not match record_digest {digest}")
        parsed.append((entry, digest, record, e["metrics"]))
    # Checked before the replay (which may already be running on other
    # workers), so that this serial step overlaps it instead of following it.
    expected = canonical_bytes(data) + b"\n"
    if raw is not None and raw != expected:
        raise ResultError(f"{where}: the artifact is not in canonical form (re-serialization differs)")
    try:
        recomputed = authenticator([e["record"] for e in episodes], suite)
    except RecordAuthenticationError as exc:
        raise ResultError(f"{where}: authentication failed: {exc}") from None
    out = []
    for (entry, digest, record, stored), metrics in zip(parsed, recomputed):
        if canonical_bytes(stored) != canonical_bytes(metrics.to_dict()):
            raise ResultError(f"{where}: episode {entry.index}: stored metrics differ from the metrics "
                              "recomputed from the authenticated record")
        out.append(ResultEpisode(entry=entry, record_digest=digest, record=record, metrics=metrics))
    return EvaluationResult(model_id=model_id, manifest=manifest, episodes=tuple(out), digest=sha256_hex(expected))


def load_result(path: str | Path, suite: Suite, *, authenticator: Authenticator = authenticate_all) -> EvaluationResult:
    """Read and verify a result artifact file (every check of the spec, full replay)."""
    _, _, data, raw = read_result_manifest(path)
    return result_from_dict(data, suite, raw=raw, where=str(path), authenticator=authenticator)


__all__ = [
    "EvaluationResult",
    "ResultEpisode",
    "artifact_chunks",
    "authenticate_all",
    "episode_chunk",
    "load_result",
    "read_result_manifest",
    "result_from_dict",
    "validate_model_id",
]
