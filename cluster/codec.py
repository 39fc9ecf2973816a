"""The wire format between the coordinator and episode workers (msgpack, small by design).

A batch of tasks goes out as ``[[index, scenario_id, scenario_hash, seed], ...]``.
A reply comes back as ``[node_id, host, seconds, [[index, digest, metrics, record, usage, size], ...]]``
where ``digest`` is the 32 raw bytes of the record's SHA-256, ``metrics`` the
canonical JSON of its metrics, ``record`` the canonical record bytes or nil
when the worker put the record into the shared store (the usual case: then an
outcome is a few hundred bytes whatever the episode length), ``usage``
the episode's model usage (:meth:`ModelUsage.to_dict`) or nil, and ``size``
the record's length in bytes when the worker put it (so the coordinator never
asks the store for it) or nil. ``node_id``, ``host`` (the worker machine's
host name, which every outcome then carries for the run-info's count of
episodes per node), ``seconds`` and ``usage`` serve scheduling, reports and
accounting only; they never reach an artifact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import msgpack

from emberbench.evaluation.outcome import EpisodeOutcome
from emberbench.policies.served.usage import ModelUsage
from emberbench.results.manifest import ManifestEntry


def encode_tasks(entries: Sequence[ManifestEntry]) -> bytes:
    """Pack scheduled episodes for a worker."""
    return msgpack.packb([[e.index, e.scenario_id, e.scenario_hash, e.seed] for e in entries], use_bin_type=True)


def decode_tasks(data: bytes) -> list[ManifestEntry]:
    """Unpack scheduled episodes (inverse of :func:`encode_tasks`)."""
    return [ManifestEntry(index=i, scenario_id=s, scenario_hash=h, seed=seed)
            for i, s, h, seed in msgpack.unpackb(data, raw=False)]


@dataclass(frozen=True, slots=True)
class BatchReply:
    """What one worker call returns.

    Attributes:
        node_id: the Ray node the worker ran on (for reports and tests).
        host: the host name of that node's machine.
        seconds: wall time the worker spent on the batch (sizes later batches).
        outcomes: the finished episodes, in the order they ran.
    """

    node_id: str
    host: str
    seconds: float
    outcomes: tuple[EpisodeOutcome, ...]


def encode_reply(node_id: str, host: str, seconds: float, outcomes: Sequence[EpisodeOutcome]) -> bytes:
    """Pack a worker's reply."""
    rows = [[o.index, bytes.fromhex(o.record_digest), o.metrics_bytes, o.record_bytes,
             None if o.usage is None else o.usage.to_dict(), o.record_size] for o in outcomes]
    return msgpack.packb([node_id, host, float(seconds), rows], use_bin_type=True)


def decode_reply(data: bytes) -> BatchReply:
    """Unpack a worker's reply (inverse of :func:`encode_reply`)."""
    node_id, host, seconds, rows = msgpack.unpackb(data, raw=False)
    outcomes = tuple(
        EpisodeOutcome(index=index, record_digest=bytes(digest).hex(), record_bytes=record,
                       metrics_bytes=bytes(metrics), usage=None if usage is None else ModelUsage.from_dict(usage),
                       node=host, record_size=size)
        for index, digest, metrics, record, usage, size in rows
    )
    return BatchReply(node_id=node_id, host=host, seconds=seconds, outcomes=outcomes)
