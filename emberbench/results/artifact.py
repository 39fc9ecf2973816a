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

The header's keys and checks live in :mod:`emberbench.results.header`.
Reading and verifying stream the file (:mod:`emberbench.results.stream`);
:func:`load_result` is a convenience on top that keeps every episode in
memory, for library users with results that fit there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..io.canonical import CanonicalFormError, canonical_bytes, parse_json_strict
from ..records.episode import authenticate
from ..errors import RecordAuthenticationError, ResultError
from ..io.input_policy import RESULT, open_input
from .header import check_header, header_dict
from .manifest import EvaluationManifest, ManifestEntry
from ..records.metrics import EpisodeMetrics
from ..records.record import RunRecord
from ..sim.suite import Suite
from ..tables.table import Table, TableView
from .stream import read_artifact_header as read_tail
from .stream import verify_artifact

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
class EvaluationResult(TableView):
    """A loaded, fully verified per-model result.

    In a notebook or a rich terminal it shows as a table of its episodes
    (a few columns, at most 50 rows); :meth:`to_table`, ``to_pandas()`` and
    ``to_arrow()`` give every episode with every count and metric, beside
    the manifest's scenario, seed and families
    (:mod:`emberbench.results.episode_rows`).

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

    def to_table(self, suite: Suite | None = None) -> Table:
        """One row per episode: model id, index, scenario, seed, families, termination, counts, metrics.

        The families come from ``suite``, else from the shipped suite the
        manifest names; for a suite that is neither, they are None.
        """
        from .episode_rows import result_table

        return result_table(self, suite)

    def _repr_html_(self) -> str:
        from .episode_rows import SHOWN_COLUMNS

        return self.to_table().select(*SHOWN_COLUMNS)._repr_html_()

    def __rich__(self) -> Any:
        from .episode_rows import SHOWN_COLUMNS

        return self.to_table().select(*SHOWN_COLUMNS).__rich__()

    def to_dict(self) -> dict[str, Any]:
        """The artifact's JSON object."""
        out = header_dict(self.manifest, self.model_id)
        out["episodes"] = [
            {**e.entry.to_dict(), "record_digest": e.record_digest, "record": e.record.to_dict(),
             "metrics": e.metrics.to_dict()}
            for e in self.episodes
        ]
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
    """Authenticate records one after another, in process (the older list form of a replayer)."""
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
    """Whole-file structural read of an artifact: its manifest and model id, without any replay.

    This holds the whole file and its parse; commands use
    :func:`emberbench.results.stream.read_header` instead, which reads only the
    header of a canonical artifact.

    Returns:
        (manifest, model_id, parsed object, raw bytes).
    """
    with open_input(path, RESULT, error=ResultError) as handle:
        raw = handle.read()
    data = parse_result_bytes(raw, where=str(path))
    manifest, model_id = check_header(data, str(path))
    return manifest, model_id, data, raw


def _collect(source: Any, suite: Suite, where: str | None, authenticator: Any) -> EvaluationResult:
    episodes: list[ResultEpisode] = []

    def keep(e: Any) -> None:
        episodes.append(ResultEpisode(entry=e.entry, record_digest=e.record_digest, record=e.record,
                                      metrics=e.metrics))

    done = verify_artifact(source, suite, sink=keep, replayer=authenticator, where=where)
    return EvaluationResult(model_id=done.model_id, manifest=done.manifest, episodes=tuple(episodes),
                            digest=done.digest)


def result_from_dict(data: dict[str, Any], suite: Suite, *, raw: bytes | None = None, where: str = "result",
                     authenticator: Any = None) -> EvaluationResult:
    """Verify an artifact held in memory completely and return the result (spec section 5).

    The checks are those of :func:`emberbench.results.stream.verify_artifact`,
    run over ``raw`` (the bytes ``data`` was parsed from) or, without it,
    over the canonical serialization of ``data``.

    Args:
        data: the parsed artifact.
        suite: the suite the manifest must target.
        raw: the artifact bytes as read; they define the digest and must be
            canonical.
        where: names the source in messages.
        authenticator: where records are replayed (a replayer or the older
            list form; in process by default).

    Raises:
        ResultError: the first check that fails, saying what and where.
    """
    import io

    if raw is None:
        try:
            raw = canonical_bytes(data) + b"\n"
        except CanonicalFormError as exc:
            raise ResultError(f"{where}: {exc}") from None
    return _collect(io.BytesIO(raw), suite, where, authenticator)


def load_result(path: str | Path, suite: Suite, *, authenticator: Any = None) -> EvaluationResult:
    """Read and verify a result artifact file (every check of the spec, full replay), keeping every episode.

    Memory grows with the artifact: commands use
    :func:`emberbench.results.stream.verify_artifact` with a sink instead.
    """
    return _collect(path, suite, None, authenticator)


def read_artifact_header(path: str | Path) -> dict[str, Any]:
    """An artifact's top-level fields other than ``episodes``, read from the end (see :mod:`.stream`)."""
    return read_tail(path)


__all__ = [
    "EvaluationResult",
    "ResultEpisode",
    "artifact_chunks",
    "authenticate_all",
    "episode_chunk",
    "load_result",
    "read_artifact_header",
    "read_result_manifest",
    "result_from_dict",
]
