"""A finished episode as an executor reports it to the coordinator (:class:`EpisodeOutcome`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class EpisodeOutcome:
    """A finished episode as an executor reports it.

    Attributes:
        index: the manifest index.
        record_digest: SHA-256 of the record's canonical JSON.
        record_bytes: the record's canonical JSON, or None when the executor
            put it into the store (then the store holds it under the digest).
        metrics_bytes: canonical JSON of the episode metrics.
        stored_record: the record's bytes when this process already put them
            into the store (``record_bytes`` is then None); the store sink
            keeps a local copy to assemble the artifact without reading
            them back.
        usage: what the episode's policy reports it cost
            (:class:`~emberbench.policies.served.usage.ModelUsage`, a served
            model's requests and tokens), or None. Execution accounting only:
            the coordinator sums it into the run-info, never into a record.
        node: the host name of the machine that played it, when that is not
            this one (a Ray worker's); None means this machine. It goes to
            the run-info and the summary, never into the artifact.
        record_size: the record's length when another process put it into
            the store and the executor vouches that the coordinator's store
            holds it (the Ray executor checks one record per node), so the
            sink need not ask the store; None otherwise.
    """

    index: int
    record_digest: str
    record_bytes: bytes | None
    metrics_bytes: bytes
    stored_record: bytes | None = None
    usage: Any = None
    node: str | None = None
    record_size: int | None = None


__all__ = ["EpisodeOutcome"]
