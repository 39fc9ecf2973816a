"""Reading and verifying a result artifact as a stream: the header from the end, then one episode at a time.

:func:`verify_artifact` makes every check of the spec on an artifact of any
size while holding only its header, the episode being checked (and the few a
parallel replayer has in flight) and what its caller chooses to keep: each
verified episode goes to a *sink* (a function) and is then dropped. Each
record is replayed exactly once.

The checks, their messages and the order in which the first failure is
chosen are the loader's (docs/evaluation.md, "Loading and verifying a result"):

1. the file is read under the input policy; its text must be valid JSON
   (:mod:`emberbench.results.text` reports exactly what a whole-file parse would);
2. header: version, keys, model id, embedded manifest, its hash, the repeated
   fields; then the manifest against the suite; then ``episodes`` is a list;
3. each episode's structure, in list order (the first one that fails);
4. the text is the canonical JSON of the document plus one newline;
5. each record reproduces under replay (the first in list order);
6. each stored metrics object equals the recomputed one (the first).

A failure of a later kind never hides one of an earlier kind anywhere in the
file, so the file is always parsed to its end; but once a failure of kind 3
or 4 is known, no further record is replayed, since no replay can change the
verdict (and once one of kind 3 is known, the rest of the episodes are parsed
in bulk, see ``ArtifactWalker.skim``). The exception is what cannot be a
result at all (not an object; an unknown, repeated or over-long top-level
key): it is refused where it is met, and nothing after it is read.

Canonical JSON sorts ``episodes`` before every other key, so the header is
the tail of the file: it is read first, from the end, to check the episodes
against the manifest while they stream. A file whose tail cannot be read that
way (it is not canonical, or its header is not valid) is read twice: once to
parse everything and check the header, once for the episodes.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from ..io.canonical import canonical_bytes, canonical_json, is_sha256_hex, sha256_hex
from ..errors import CanonicalFormError, ManifestError, RecordAuthenticationError, ResultError
from ..io.input_policy import RESULT, open_input
from .manifest import EvaluationManifest, ManifestEntry, check_manifest
from ..records.metrics import EpisodeMetrics
from ..records.record import RunRecord, record_from_dict
from ..records.replay import Authenticator, Replayer, ReplayFailure, ReplayJob, as_replayer
from .text import BLOCK_BYTES, DISCARDED, KNOWN, ArtifactWalker, KnownText, prefixed
from .header import EPISODE_KEYS, RESULT_KEYS, check_header
from ..schemas.kinds import not_what_was_wanted
from ..sim.suite import Suite

HEAD = b'{"episodes":['
"""How a canonical artifact starts (``episodes`` sorts first among its keys)."""
TAIL_MARKER = b'],"evaluation_manifest_hash":"'
"""Where the episode list ends and the header begins in canonical JSON (a quote never appears unescaped in a string)."""
MAX_TAIL_BYTES = 256 << 20
"""The header is looked for this far from the end; a larger header is read by the two-pass route."""

STRUCTURE, CANONICAL, REPLAY, METRICS = 1, 2, 3, 4
"""Kinds of per-episode failure, in the order the first failure is chosen."""
FIRST = -1
"""``only=FIRST``: replay only the first episode of the list."""

Source = str | os.PathLike[str] | BinaryIO


@dataclass(frozen=True, slots=True)
class ArtifactHeader:
    """The checked top-level fields of an artifact: everything but its episodes."""

    where: str
    manifest: EvaluationManifest
    model_id: str


@dataclass(frozen=True, slots=True)
class StreamedEpisode:
    """One verified episode, as handed to a sink (which keeps what it needs).

    Attributes:
        position: its place in the artifact's episode list.
        entry: its manifest entry.
        record_digest: SHA-256 of ``record_bytes`` (the store key).
        record: the parsed record.
        record_bytes: the record's canonical JSON.
        metrics: the metrics recomputed by replay (equal to the stored ones).
        metrics_bytes: their canonical JSON, as stored.
    """

    position: int
    entry: ManifestEntry
    record_digest: str
    record: RunRecord
    record_bytes: bytes
    metrics: EpisodeMetrics
    metrics_bytes: bytes

    @property
    def index(self) -> int:
        """The manifest index."""
        return self.entry.index


Sink = Callable[[StreamedEpisode], None]


@dataclass(frozen=True, slots=True)
class VerifiedArtifact:
    """What a complete verification established (the episodes went to the sink).

    Attributes:
        where: names the artifact in messages.
        model_id: the evaluator's label.
        manifest: the evaluation manifest.
        digest: SHA-256 of the artifact bytes.
        indices: manifest indices of its episodes, in manifest order (the done set).
    """

    where: str
    model_id: str
    manifest: EvaluationManifest
    digest: str
    indices: tuple[int, ...]

    @property
    def complete(self) -> bool:
        """True when every scheduled episode is present."""
        return len(self.indices) == len(self.manifest.episodes)


# -- opening a source


@contextlib.contextmanager
def open_source(source: Source, where: str | None = None) -> Iterator[tuple[BinaryIO, str]]:
    """Yield a seekable binary handle on ``source`` and the name messages use.

    A path is opened under the input policy (regular file, size cap). A
    handle that cannot seek is first copied to a temporary file.
    """
    if isinstance(source, (str, os.PathLike)):
        label = where if where is not None else os.fspath(source)
        with open_input(source, RESULT, error=ResultError) as handle:
            yield handle, label
        return
    label = where if where is not None else "result"
    if source.seekable():
        yield source, label
        return
    with tempfile.TemporaryFile() as spool:
        shutil.copyfileobj(source, spool, BLOCK_BYTES)
        spool.seek(0)
        yield spool, label  # type: ignore[misc]


class TailHeader(dict):  # type: ignore[type-arg]
    """The header members read from the tail, with the fingerprints of those whose text was canonical."""

    def __init__(self, members: dict[str, Any], fingerprints: dict[str, KnownText]) -> None:
        super().__init__(members)
        self.fingerprints = fingerprints


def read_tail_header(handle: BinaryIO, where: str) -> dict[str, Any] | None:
    """The header members parsed from the tail of a canonical artifact, or None when that fails.

    Looks for :data:`TAIL_MARKER` backwards from the end (at most
    :data:`MAX_TAIL_BYTES`) and parses what follows it. A file that does not
    start as a canonical artifact does (:data:`HEAD`) has no such tail, and
    is not searched. No message is made here: a caller that gets None reads
    the file from the start.
    """
    handle.seek(0)
    if handle.read(len(HEAD)) != HEAD:
        return None
    size = handle.seek(0, io.SEEK_END)
    pos, carry, offset = size, b"", -1
    while pos > 0 and size - pos < MAX_TAIL_BYTES:
        start = max(0, pos - BLOCK_BYTES)
        handle.seek(start)
        chunk = handle.read(pos - start) + carry[:len(TAIL_MARKER) - 1]
        k = chunk.rfind(TAIL_MARKER)
        if k >= 0:
            offset = start + k
            break
        carry, pos = chunk, start
    if offset < 0:
        return None
    handle.seek(offset + 2)
    walker = ArtifactWalker(prefixed(b"{", handle), where, keep=RESULT_KEYS, fingerprint=True)
    try:
        for _ in walker.episodes():
            pass
    except ResultError:
        return None
    if DISCARDED in walker.header.values():
        return None
    return TailHeader(walker.header, walker.fingerprints or {})


def _check_header(header: dict[str, Any], has_episodes: bool, where: str) -> tuple[EvaluationManifest, str]:
    data = dict(header)
    if has_episodes:
        data["episodes"] = None
    return check_header(data, where)


def _same_header(walked: dict[str, Any], header: dict[str, Any], known: dict[str, KnownText]) -> bool:
    """Whether the header the walk found is ``header`` (members the walk matched by text count as equal)."""
    if set(walked) != set(header):
        return False
    try:
        return all(value is KNOWN and key in known or canonical_bytes(value) == canonical_bytes(header[key])
                   for key, value in walked.items())
    except CanonicalFormError:
        return False


def _parse_all(handle: BinaryIO, where: str) -> ArtifactWalker:
    """Parse the whole text (episodes too, not kept): the first pass of the two-pass route."""
    handle.seek(0)
    walker = ArtifactWalker(handle, where, keep=RESULT_KEYS)
    walker.skim = True
    for _ in walker.episodes():
        pass
    return walker


def _header_of(handle: BinaryIO, where: str, *, use_tail: bool = True) -> tuple[Any, ...]:
    """The checked header: from the tail if it passes, else from a full parse (so the first failure is exact).

    Returns ``(manifest, model_id, header members, episodes kind)``; the kind
    is only known (not None) after a full parse.
    """
    tail = read_tail_header(handle, where) if use_tail else None
    if tail is not None:
        with contextlib.suppress(ResultError):
            manifest, model_id = _check_header(tail, True, where)
            return manifest, model_id, tail, None
    try:
        walker = _parse_all(handle, where)
        manifest, model_id = _check_header(walker.header, walker.episodes_kind is not None, where)
    except ResultError as exc:
        # Another EMBERBench file (a manifest, statistics) is named as what it is, not by the keys it lacks.
        # A tail that held a result's header tells it is a result: nothing to look for.
        # It looks no further than the refusal read (the reader refuses a non-result within a block or so).
        other = None if tail is not None else not_what_was_wanted(where, handle, "result", max_bytes=handle.tell())
        if other is None:
            raise
        raise ResultError(other) from None
    return manifest, model_id, walker.header, walker.episodes_kind


def read_header(source: Source, *, where: str | None = None) -> ArtifactHeader:
    """Read and check an artifact's header (no replay, no suite): model id and manifest.

    Cheap for a canonical artifact (only its tail is read). Otherwise the
    whole file is parsed, so that the error is the one a complete
    verification would report first, or the header is read from the parse.

    Raises:
        ResultError: the first failing check of the header (or of the JSON text).
    """
    with open_source(source, where) as (handle, label):
        manifest, model_id, _, _ = _header_of(handle, label)
    return ArtifactHeader(where=label, manifest=manifest, model_id=model_id)


# -- verification


class _Pass:
    """One walk over the episodes with every per-episode check and the first-failure bookkeeping."""

    def __init__(self, walker: ArtifactWalker, manifest: EvaluationManifest, suite: Suite, replayer: Replayer, *,
                 only: int | None = None) -> None:
        self.walker, self.manifest, self.suite = walker, manifest, suite
        self.replayer, self.only = replayer, only
        self.offered = 0
        self.where = walker.where
        self.pending: tuple[int, str] | None = None
        self.indices: list[int] = []

    def _fail(self, kind: int, message: str) -> None:
        if self.pending is None or kind < self.pending[0]:
            self.pending = (kind, message)

    def replaying(self) -> bool:
        """Whether a replay can still change the verdict."""
        return self.pending is None or self.pending[0] > REPLAY

    def _structure(self, position: int, e: Any, last: int) -> tuple[Any, ...] | None:
        """The loader's structural checks of one episode; None after recording the failure."""
        at = f"{self.where}: episodes[{position}]"
        manifest = self.manifest
        if not isinstance(e, dict) or set(e) != EPISODE_KEYS:
            keys = sorted(e) if isinstance(e, dict) else type(e).__name__
            self._fail(STRUCTURE, f"{at} must have exactly the keys {sorted(EPISODE_KEYS)}, got {keys}")
            return None
        index = e["index"]
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(manifest.episodes):
            self._fail(STRUCTURE, f"{at}: index {index!r} is not in the manifest")
            return None
        if index <= last:
            self._fail(STRUCTURE, f"{at}: index {index} is out of manifest order or repeated (after {last})")
            return None
        entry = manifest.episodes[index]
        for name in ("scenario_id", "scenario_hash", "seed"):
            if e[name] != getattr(entry, name) or type(e[name]) is not type(getattr(entry, name)):
                self._fail(STRUCTURE, f"{at}: {name} {e[name]!r} differs from manifest entry {index}")
                return None
        try:
            record = record_from_dict(e["record"])
        except RecordAuthenticationError as exc:
            self._fail(STRUCTURE, f"{at}: {exc}")
            return None
        for name in ("scenario_id", "scenario_hash", "seed"):
            if getattr(record, name) != getattr(entry, name):
                self._fail(STRUCTURE, f"{at}: record header {name} differs from manifest entry {index}")
                return None
        digest = e["record_digest"]
        if not is_sha256_hex(digest):
            self._fail(STRUCTURE, f"{at}: record_digest is not a lowercase SHA-256 hex digest")
            return None
        record_text = canonical_json(e["record"])
        record_bytes = record_text.encode("ascii")
        if sha256_hex(record_bytes) != digest:
            self._fail(STRUCTURE, f"{at}: record does not match record_digest {digest}")
            return None
        return entry, digest, record, record_text, record_bytes

    def _jobs(self) -> Iterator[ReplayJob]:
        """Walk every episode: structure and canonical form here, replays handed on while they matter."""
        last = -1
        walker = self.walker
        for position, e, text in walker.episodes():
            if self.pending is not None and self.pending[0] <= STRUCTURE:
                walker.skim = True  # only a JSON error later in the file could still change the verdict
                continue
            checked = self._structure(position, e, last)
            if checked is None:
                continue
            entry, digest, record, record_text, record_bytes = checked
            last = entry.index
            metrics_text = canonical_json(e["metrics"])
            if walker.canonical and text != "".join((
                '{"index":', str(entry.index), ',"metrics":', metrics_text, ',"record":', record_text,
                ',"record_digest":"', digest, '","scenario_hash":"', entry.scenario_hash, '","scenario_id":',
                canonical_json(entry.scenario_id), ',"seed":', str(entry.seed), "}",
            )):
                walker.mark_not_canonical()
            if not walker.canonical:
                self._fail(CANONICAL, f"{self.where}: the artifact is not in canonical form (re-serialization differs)")
                continue
            if self.only is not None and entry.index != self.only and not (self.only == FIRST and not self.offered):
                continue
            if self.replaying():
                self.offered += 1
                yield ReplayJob(position, record, record_bytes, (entry, digest, metrics_text))

    def verified(self) -> Iterator[StreamedEpisode]:
        """Walk, replay and check every episode; yield each that passed while nothing has failed.

        A JSON error raises; other failures wait in ``pending`` (see :meth:`finish`).
        """
        for job, verdict in self.replayer.replay(self._jobs(), self.suite):
            if not self.replaying():
                continue
            entry, digest, metrics_text = job.payload
            if isinstance(verdict, ReplayFailure):
                self._fail(REPLAY, f"{self.where}: authentication failed: episode {job.position}: {verdict.message}")
                continue
            recomputed = canonical_json(verdict.to_dict())
            if metrics_text != recomputed:
                self._fail(METRICS, f"{self.where}: episode {entry.index}: stored metrics differ from the metrics "
                                    "recomputed from the authenticated record")
                continue
            if self.pending is None:
                self.indices.append(entry.index)
                yield StreamedEpisode(job.position, entry, digest, job.record, job.record_bytes, verdict,
                                      metrics_text.encode("ascii"))
        if not self.walker.canonical:
            self._fail(CANONICAL, f"{self.where}: the artifact is not in canonical form (re-serialization differs)")

    def finish(self) -> None:
        """Raise the first per-episode failure (by kind, then list order), if any."""
        if self.pending is not None:
            raise ResultError(self.pending[1])


Steps = Generator[StreamedEpisode, None, VerifiedArtifact]


def _verify_steps(handle: BinaryIO, where: str, suite: Suite, replayer: Replayer, only: int | None = None, *,
                  use_tail: bool = True) -> Steps:
    """Verify an open artifact, yielding each verified episode; return what was established.

    ``use_tail=False`` takes the two-pass route (exact in every case).
    """
    manifest, model_id, header, kind = _header_of(handle, where, use_tail=use_tail)
    try:
        check_manifest(manifest, suite)
    except ManifestError as exc:
        if kind is None:
            # From the tail: a JSON or header error elsewhere would come first; the full parse says.
            handle.seek(0)
            return (yield from _verify_steps(handle, where, suite, replayer, only, use_tail=False))
        raise ResultError(f"{where}: {exc}") from None
    if kind is not None and kind != "array":
        raise ResultError(f"{where}: episodes must be a list")
    known: dict[str, KnownText] = {}
    fingerprint = getattr(header, "fingerprints", {}).get("manifest")
    if kind is None and fingerprint is not None:
        # Keep only a fingerprint of the manifest read from the tail, not its parsed value:
        # the walk matches its text instead of parsing it again.
        known["manifest"] = fingerprint
        header["manifest"] = KNOWN
    handle.seek(0)
    walker = ArtifactWalker(handle, where, keep=RESULT_KEYS, known=known)
    walk = _Pass(walker, manifest, suite, replayer, only=only)
    yield from walk.verified()
    if not _same_header(walker.header, header, known):
        if kind is None:
            # The tail was not the header the parse found: the full parse names the real failure.
            handle.seek(0)
            _drive(_verify_steps(handle, where, suite, replayer, only, use_tail=False), None)
        raise ResultError(f"{where}: the artifact changed while it was read")
    if walker.episodes_kind is None:
        _check_header(walker.header, False, where)  # raises: the key is missing
    if walker.episodes_kind != "array":
        raise ResultError(f"{where}: episodes must be a list")
    walk.finish()
    return VerifiedArtifact(where, model_id, manifest, walker.digest, tuple(walk.indices))


def _drive(steps: Steps, sink: Sink | None) -> VerifiedArtifact:
    """Run the verification, handing each episode to ``sink``; return its result."""
    while True:
        try:
            episode = next(steps)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        if sink is not None:
            sink(episode)


def verify_artifact(source: Source, suite: Suite, *, sink: Sink | None = None,
                    replayer: Replayer | Authenticator | None = None, where: str | None = None) -> VerifiedArtifact:
    """Verify a result artifact completely while streaming it; hand each verified episode to ``sink``.

    Args:
        source: a path (read under the input policy) or a binary handle.
        suite: the suite the manifest must target.
        sink: called once per episode, in list order, after the episode
            passed every check. If a later episode fails, this call raises
            and whatever the sink kept must be discarded (nothing is
            verified until this function returns).
        replayer: where records are replayed (in process by default; see
            :mod:`emberbench.records.replay`).
        where: names the artifact in messages (default: the path).

    Returns:
        A :class:`VerifiedArtifact` (digest, manifest, model id, done set).

    Raises:
        ResultError: the first failure, by the order in the module docstring.
    """
    with open_source(source, where) as (handle, label):
        return _drive(_verify_steps(handle, label, suite, as_replayer(replayer)), sink)


def read_episode(source: Source, index: int, suite: Suite, *, replayer: Replayer | Authenticator | None = None,
                 where: str | None = None) -> StreamedEpisode:
    """One episode of an artifact, by manifest index, authenticated by replay.

    The whole artifact is checked as :func:`verify_artifact` checks it
    (structure, canonical form and digest), but only this episode's record is
    replayed, so the cost is one parse of the file and one replay.

    Raises:
        ResultError: the artifact fails a check, or holds no episode ``index``.
    """
    found: list[StreamedEpisode] = []
    with open_source(source, where) as (handle, label):
        _drive(_verify_steps(handle, label, suite, as_replayer(replayer), only=index), found.append)
    if not found:
        raise ResultError(f"{label}: no episode with manifest index {index}")
    return found[0]


def read_first_episode(source: Source, suite: Suite, *, replayer: Replayer | Authenticator | None = None,
                       where: str | None = None) -> StreamedEpisode | None:
    """The first episode of an artifact (None if it has none), authenticated, with the whole file checked.

    As :func:`read_episode`: one parse of the file, one replay.
    """
    found: list[StreamedEpisode] = []
    with open_source(source, where) as (handle, label):
        _drive(_verify_steps(handle, label, suite, as_replayer(replayer), only=FIRST), found.append)
    return found[0] if found else None


class ArtifactStream:
    """The verified episodes of an artifact, one at a time, for callers that pull rather than pass a sink.

    ``model_id`` and ``manifest`` come from the header at once (read from the
    end of the file, so a header error is raised here). Iterating verifies
    the artifact completely, as :func:`verify_artifact` does, and yields each
    episode once it passed every check; a failure anywhere raises from the
    iteration, and the episodes taken before must then be discarded: the
    artifact is verified only once ``verified`` is set, at the end.
    """

    def __init__(self, source: str | os.PathLike[str], suite: Suite, *,
                 replayer: Replayer | Authenticator | None = None, where: str | None = None) -> None:
        head = read_header(source, where=where)
        self.where, self.model_id, self.manifest = head.where, head.model_id, head.manifest
        self._source, self._suite, self._replayer = source, suite, replayer
        self.verified: VerifiedArtifact | None = None

    def __iter__(self) -> Iterator[StreamedEpisode]:
        with open_source(self._source, self.where) as (handle, label):
            self.verified = yield from _verify_steps(handle, label, self._suite, as_replayer(self._replayer))


def stored_records(source: Source, wanted: dict[int, str], *, where: str | None = None) -> Iterator[tuple[int, bytes]]:
    """The canonical record bytes of the episodes ``wanted`` names (manifest index to record digest), in list order.

    For an artifact already verified: no record is replayed here, but each
    one's SHA-256 must still be the digest it was verified with, so a file
    changed since cannot hand out other bytes.

    Raises:
        ResultError: the file cannot be parsed, or a wanted record is not the verified one.
    """
    with open_source(source, where) as (handle, label):
        handle.seek(0)
        for _, e, _ in ArtifactWalker(handle, label, keep=frozenset()).episodes():
            index = e.get("index") if isinstance(e, dict) else None
            digest = wanted.get(index) if isinstance(index, int) and not isinstance(index, bool) else None
            if digest is None:
                continue
            data = canonical_json(e.get("record")).encode("ascii")
            if sha256_hex(data) != digest:
                raise ResultError(f"{label}: the artifact changed while it was read")
            yield index, data


def read_artifact_header(path: str | os.PathLike[str]) -> dict[str, Any]:
    """An artifact's top-level fields other than ``episodes``, read from the end of the file, unchecked.

    Raises:
        ResultError: the file cannot be read, or its tail is not a result header.
    """
    label = os.fspath(path)
    with open_input(path, RESULT, error=ResultError) as handle:
        header = read_tail_header(handle, label)
    if header is None:
        raise ResultError(f"{label}: not a result artifact (no readable header after the episode list)")
    return header


__all__ = [
    "ArtifactHeader",
    "ArtifactStream",
    "Sink",
    "StreamedEpisode",
    "VerifiedArtifact",
    "open_source",
    "read_artifact_header",
    "read_episode",
    "read_first_episode",
    "read_header",
    "read_tail_header",
    "stored_records",
    "verify_artifact",
]
