"""Replaying a stream of records: the seam between reading an artifact and where replays run.

A reader hands records to a :class:`Replayer` one :class:`ReplayJob` at a
time and gets each back with its verdict, in the order given. The in-process
replayer authenticates each record as it arrives; the cluster's replayer
(:class:`emberbench.cluster.RayAuthenticator`) sends them out in chunks, keeps
a bounded number in flight and restores the order. Either way a record is
replayed once, and no more than a bounded number of records is held.

Older code passes an *authenticator*: a function ``(records, suite) ->
metrics`` over a whole list. :func:`as_replayer` accepts those too, calling
them on a bounded batch of records at a time.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from .episode import authenticate_parsed
from ..errors import RecordAuthenticationError
from .metrics import EpisodeMetrics
from .record import RunRecord
from ..sim.suite import Suite


@dataclass(frozen=True, slots=True)
class ReplayJob:
    """One record to replay.

    Attributes:
        position: the record's place in the artifact's episode list.
        record: the parsed record (structure already checked).
        record_bytes: its canonical JSON; the replay must reproduce these bytes.
        payload: anything the caller wants back with the verdict (passed through).
    """

    position: int
    record: RunRecord
    record_bytes: bytes
    payload: Any = None


@dataclass(frozen=True, slots=True)
class ReplayFailure:
    """A record that does not authenticate: the error's message and field."""

    message: str
    field: str | None


Verdict = EpisodeMetrics | ReplayFailure


class Replayer(Protocol):
    """Where records are replayed."""

    def replay(self, jobs: Iterable[ReplayJob], suite: Suite) -> Iterator[tuple[ReplayJob, Verdict]]:
        """Yield every job with its verdict, in the order the jobs came.

        A replayer may take a bounded number of jobs ahead of what it has
        yielded (to run them in parallel). A record that does not
        authenticate gives a :class:`ReplayFailure`; any other error is
        raised.
        """
        ...  # pragma: no cover - protocol


class InProcessReplayer:
    """Replays each record in this process as it arrives (the default)."""

    def replay(self, jobs: Iterable[ReplayJob], suite: Suite) -> Iterator[tuple[ReplayJob, Verdict]]:
        """See :meth:`Replayer.replay`."""
        for job in jobs:
            try:
                verdict: Verdict = authenticate_parsed(job.record, suite, job.record_bytes)
            except RecordAuthenticationError as exc:
                verdict = ReplayFailure(str(exc), exc.field)
            yield job, verdict


Authenticator = Callable[[list[dict[str, Any]], Suite], list[EpisodeMetrics]]
"""The older list form: ``authenticator(records, suite)`` returns every record's metrics in order."""


class AuthenticatorReplayer:
    """Adapts an :data:`Authenticator` (list form) by calling it on a bounded batch of records at a time.

    Batches let an authenticator that spreads its list over workers (the
    cluster executor's) do so; at most ``batch`` records are held. Such an
    authenticator raises for the first failing record of its list only, so a
    batch that raises is replayed again one record at a time (once the file
    is known to be refused, exact verdicts matter more than speed). A failing
    record is named ``episode {i}`` by its place in the list it was given;
    that prefix (always ``episode 0`` one at a time) is removed, so the
    reader can name the record's place in the artifact instead.
    """

    def __init__(self, authenticator: Authenticator, *, batch: int = 256) -> None:
        self.authenticator, self.batch = authenticator, max(1, batch)

    def replay(self, jobs: Iterable[ReplayJob], suite: Suite) -> Iterator[tuple[ReplayJob, Verdict]]:
        """See :meth:`Replayer.replay`."""
        source = iter(jobs)
        while part := list(itertools.islice(source, self.batch)):
            try:
                verdicts: list[Verdict] = list(self.authenticator([job.record.to_dict() for job in part], suite))
            except RecordAuthenticationError:
                verdicts = [self._one(job, suite) for job in part]
            yield from zip(part, verdicts, strict=True)

    def _one(self, job: ReplayJob, suite: Suite) -> Verdict:
        try:
            return self.authenticator([job.record.to_dict()], suite)[0]
        except RecordAuthenticationError as exc:
            return ReplayFailure(str(exc).removeprefix("episode 0: "), exc.field)


def as_replayer(replayer: Replayer | Authenticator | None) -> Replayer:
    """A :class:`Replayer` for ``replayer``: itself, an adapted authenticator, or the in-process default."""
    if replayer is None:
        return InProcessReplayer()
    if hasattr(replayer, "replay"):
        return replayer  # type: ignore[return-value]
    if callable(replayer):
        return AuthenticatorReplayer(replayer)
    raise TypeError(f"not a replayer or an authenticator: {type(replayer).__name__}")


__all__ = ["Authenticator", "AuthenticatorReplayer", "InProcessReplayer", "ReplayFailure", "ReplayJob", "Replayer",
           "Verdict", "as_replayer"]
