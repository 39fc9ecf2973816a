"""Where presentation gets its data: authenticated episodes, one at a time.

Every viewer, report and plot reads records and results through this module
and nowhere else, so how a result is read (the streaming reader of
:mod:`emberbench.results.stream`) is decided in one place. Nothing here trusts a
file: a record is authenticated by replay before it is returned, and a
result is verified completely (every record replayed, stored metrics equal
to the recomputed ones) before any of its episodes is used.

The contract callers rely on is a stream: :func:`stream_result` yields one
:class:`AuthenticatedEpisode` after another in manifest order, and callers
keep only what they need of each (a small summary, a few candidate records).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..records.episode import authenticate_bytes
from ..errors import PresentationError, RecordAuthenticationError
from ..io.input_policy import RECORD, RESULT, open_input, read_input
from ..results.manifest import EvaluationManifest
from ..records.metrics import EpisodeMetrics
from ..records.record import RunRecord, record_from_dict
from ..sim.scenario import Scenario
from ..sim.suite import Suite

_RESULT_START = b'{"episodes":'
_RECORD_START = b'{"actions":'


@dataclass(frozen=True, slots=True)
class AuthenticatedEpisode:
    """One episode whose record reproduced exactly under replay.

    Attributes:
        index: the manifest index, or None for a lone run record.
        scenario: the suite scenario the record was replayed on.
        record: the authenticated run record.
        metrics: the metrics recomputed by the replay.
    """

    index: int | None
    scenario: Scenario
    record: RunRecord
    metrics: EpisodeMetrics


class ResultStream:
    """The authenticated episodes of one result artifact, in manifest order, read as a stream.

    ``model_id`` and ``manifest`` are known at once (from the artifact's
    header); :attr:`digest` (the SHA-256 of the artifact) once the stream has
    been read to its end, which is also when the whole artifact is known to
    be valid: a failure anywhere raises from the iteration. To use a single
    episode, :meth:`episode` and :meth:`first` check the whole artifact first
    and replay only that episode.
    """

    def __init__(self, path: str | Path, suite: Suite) -> None:
        from ..results.stream import ArtifactStream

        self._stream = ArtifactStream(path, suite)
        self._suite = suite
        self.path = Path(path)
        self.model_id: str = self._stream.model_id
        self.manifest: EvaluationManifest = self._stream.manifest

    def _authenticated(self, e: Any) -> AuthenticatedEpisode:
        scenario = self._suite.resolve(e.entry.scenario_id, e.entry.scenario_hash)
        return AuthenticatedEpisode(index=e.index, scenario=scenario, record=e.record, metrics=e.metrics)

    def __iter__(self) -> Iterator[AuthenticatedEpisode]:
        for e in self._stream:
            yield self._authenticated(e)

    def episode(self, index: int) -> AuthenticatedEpisode | None:
        """Episode ``index`` (None if the result lacks it), with the whole artifact verified."""
        from ..errors import ResultError
        from ..results.stream import read_episode

        if not 0 <= index < len(self.manifest.episodes):
            return None
        try:
            return self._authenticated(read_episode(self.path, index, self._suite))
        except ResultError as exc:
            if str(exc).endswith(f"no episode with manifest index {index}"):
                return None
            raise

    def first(self) -> AuthenticatedEpisode | None:
        """The first episode (None if there is none), with the whole artifact verified."""
        from ..results.stream import read_first_episode

        e = read_first_episode(self.path, self._suite)
        return None if e is None else self._authenticated(e)

    @property
    def digest(self) -> str:
        """SHA-256 of the artifact as saved (only after the stream was read to its end)."""
        if self._stream.verified is None:
            raise RuntimeError("the result digest is known only after every episode was read")
        return self._stream.verified.digest


def sniff_kind(path: str | Path) -> str:
    """Say whether ``path`` holds a ``"result"`` artifact or a ``"record"``, from its first bytes.

    Both are canonical JSON, whose keys are sorted: a result starts with its
    episode list and a record with its action log.

    Raises:
        InputFileError: the path breaks the input policy.
        PresentationError: the file is neither.
    """
    with open_input(path, RESULT) as handle:
        head = handle.read(len(_RESULT_START))
    if head.startswith(_RESULT_START):
        return "result"
    if head.startswith(_RECORD_START):
        return "record"
    raise PresentationError(f"{path}: neither a result artifact nor a run record (canonical JSON expected)")


def stream_result(path: str | Path, suite: Suite) -> ResultStream:
    """Open a result artifact as a stream of authenticated episodes.

    Raises:
        ResultError: the artifact fails any check (first failure, one line).
    """
    return ResultStream(path, suite)


def read_record(path: str | Path, suite: Suite) -> AuthenticatedEpisode:
    """Read a run record file under the input policy and authenticate it by replay.

    Raises:
        InputFileError: the path breaks the input policy.
        RecordAuthenticationError: the record is not canonical or does not reproduce.
    """
    data = read_input(path, RECORD, error=RecordAuthenticationError)
    metrics = authenticate_bytes(data, suite, where=str(path))
    from ..io.canonical import parse_json_strict

    record = record_from_dict(parse_json_strict(data[:-1] if data.endswith(b"\n") else data, where=str(path)))
    scenario = suite.resolve(record.scenario_id, record.scenario_hash)
    return AuthenticatedEpisode(index=None, scenario=scenario, record=record, metrics=metrics)


def record_episode(record: RunRecord, suite: Suite) -> AuthenticatedEpisode:
    """Authenticate an in-memory record (for ``episode --render``) and wrap it."""
    from ..records.episode import authenticate

    metrics = authenticate(record, suite)
    return AuthenticatedEpisode(index=None, scenario=suite.resolve(record.scenario_id, record.scenario_hash),
                                record=record, metrics=metrics)


def find_episode(stream: ResultStream, *, index: int | None = None, scenario_id: str | None = None,
                 seed: int | None = None) -> AuthenticatedEpisode:
    """The one episode of ``stream`` chosen by manifest index or by (scenario, seed).

    The whole artifact is verified, but only the chosen episode is replayed.

    Raises:
        PresentationError: no such episode in the result.
    """
    if index is None:
        index = next((e.index for e in stream.manifest.episodes if e.scenario_id == scenario_id and e.seed == seed), -1)
    episode = stream.episode(index)
    if episode is None:
        what = f"episode index {index}" if scenario_id is None else f"episode of scenario {scenario_id!r} seed {seed}"
        raise PresentationError(f"{stream.path}: the result has no {what}")
    return episode