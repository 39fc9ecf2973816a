"""Pieces shared by the aggregate and paired artifacts' output form.

Both artifacts carry the same header fields from the
:class:`~.inputs.StatisticsContext`, the same ``metric_definitions`` list
(taken from :mod:`emberbench.records.metric_defs`, never restated here) and a
``methods`` object naming every rule used. Their JSON text is canonical JSON
plus one newline; their digest is the SHA-256 of the canonical JSON.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..io.canonical import canonical_bytes, digest
from ..errors import MALFORMED, CanonicalFormError, StatisticsInputError
from ..records.metric_defs import METRICS
from ..io.versions import STATISTICS_VERSION
from .bootstrap import LEVEL, MIN_N
from .descriptive import QUANTILE_LEVELS
from .inputs import EpisodeKey, StatisticsContext
from .stream import DOMAIN


def context_header(ctx: StatisticsContext) -> dict[str, Any]:
    """Return the manifest, suite and version fields every artifact starts with."""
    return {
        "statistics_version": STATISTICS_VERSION,
        "evaluation_manifest_hash": ctx.evaluation_manifest_hash,
        "suite_id": ctx.suite_id,
        "suite_version": ctx.suite_version,
        "suite_hash": ctx.suite_hash,
        "simulator_version": ctx.simulator_version,
        "observation_version": ctx.observation_version,
        "metrics_version": ctx.metrics_version,
    }


def key_dict(key: EpisodeKey) -> dict[str, Any]:
    """Return one episode key as ``{index, scenario_id, scenario_hash, seed}``."""
    index, scenario_id, scenario_hash, seed = key
    return {"index": index, "scenario_id": scenario_id, "scenario_hash": scenario_hash, "seed": seed}


def metric_definitions() -> list[dict[str, str]]:
    """Return ``metric_definitions[]``: one object per metric, in table order.

    Keys: ``metric``, ``source`` (dotted metrics field), ``kind``,
    ``direction`` (``higher``, ``lower`` or ``none``), ``definition`` and
    ``undefined_when``.
    """
    return [
        {
            "metric": m.name,
            "source": m.source,
            "kind": m.kind,
            "direction": m.direction,
            "definition": m.definition,
            "undefined_when": m.undefined_when,
        }
        for m in METRICS
    ]


def methods(*, purpose: str, resamples: int) -> dict[str, Any]:
    """Return ``methods{quantiles, variance, std, bootstrap}``.

    Args:
        purpose: ``aggregate_mean`` or ``paired_mean_delta``.
        resamples: the number of bootstrap resamples.
    """
    return {
        "quantiles": {
            "rule": "hyndman_fan_type_7",
            "levels": {name: str(p) for name, p in QUANTILE_LEVELS},
        },
        "variance": {"rule": "sample", "denominator": "n - 1", "min_n": 2},
        "std": {"rule": "sqrt_of_float_variance", "min_n": 2},
        "bootstrap": {
            "method": "percentile",
            "purpose": purpose,
            "unit": "episode" if purpose == "aggregate_mean" else "paired_episode",
            "level": float(LEVEL),
            "bounds": "hyndman_fan_type_7 at 1/40 and 39/40 of the sorted resample means",
            "resamples": resamples,
            "min_n": MIN_N,
            "seed": (
                "sha256 of canonical json {statistics_version, purpose, "
                "evaluation_manifest_hash, result_digests, group, metric, resamples}"
            ),
            "stream": "shake256 counter mode, 512 big-endian uint64 words per block",
            "stream_domain": DOMAIN.decode("ascii").rstrip("\x00"),
            "sampling": "rejection: word < 2^64 - (2^64 mod n), index = word mod n",
        },
    }


def shared_sections(*, purpose: str, resamples: int, overall: Any, scenarios: Any, families: Any,
                    render: Callable[[Any], Any] | None = None) -> dict[str, Any]:
    """The sections every statistics artifact ends with: definitions, methods and the groups.

    ``render(group)`` gives each group's output form (``group.to_dict()`` by default).
    """
    show = render or (lambda group: group.to_dict())
    return {
        "metric_definitions": metric_definitions(),
        "methods": methods(purpose=purpose, resamples=resamples),
        "overall": show(overall),
        "scenarios": [show(g) for g in scenarios],
        "families": [show(g) for g in families],
    }


_GROUP_TOKEN = re.compile(rb'"\\u0000group:([0-9]+)"')
_METRICS_TOKEN = "\x00metrics"


class ArtifactForm:
    """Saved text and digest of an artifact, derived from its output form.

    Each artifact implements ``form(render)``; :meth:`to_dict` renders every
    group whole. :meth:`json_chunks` gives the same canonical text a piece at
    a time (one group head or one metric of one group per piece), so an
    artifact of any size is written without building its whole text or
    dictionary.
    """

    __slots__ = ()

    def form(self, render: Callable[[Any], Any]) -> dict[str, Any]:  # pragma: no cover - provided by each artifact
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        """Return the output form."""
        return self.form(lambda group: group.to_dict())

    def table_form(self) -> dict[str, Any]:
        """The output form without the per-episode delta lists (what the terminal tables read)."""
        return self.form(lambda group: group.to_dict(deltas=False))

    def to_json_bytes(self) -> bytes:
        """Return the canonical JSON text plus a newline."""
        return b"".join(self.json_chunks()) + b"\n"

    def digest(self) -> str:
        """Return the SHA-256 (hex) of the canonical JSON."""
        sha = hashlib.sha256()
        for chunk in self.json_chunks():
            sha.update(chunk)
        return sha.hexdigest()

    def json_chunks(self) -> Iterator[bytes]:
        """The canonical JSON of :meth:`to_dict`, in pieces (no trailing newline)."""
        groups: list[Any] = []

        def token(group: Any) -> str:
            groups.append(group)
            return f"\x00group:{len(groups) - 1}"

        pieces = _GROUP_TOKEN.split(canonical_bytes(self.form(token)))
        for k, piece in enumerate(pieces):
            if k % 2 == 0:
                yield piece
            else:
                yield from _group_chunks(groups[int(piece)])


def _group_chunks(group: Any) -> Iterator[bytes]:
    head = canonical_bytes({**group.head(), "metrics": _METRICS_TOKEN})
    before, after = head.split(canonical_bytes(_METRICS_TOKEN))
    yield before + b"["
    for k, metric in enumerate(group.metrics):
        yield (b"," if k else b"") + canonical_bytes(metric.to_dict())
    yield b"]" + after


def write_artifact(artifact: ArtifactForm, path: str | Path) -> str:
    """Write ``artifact`` (canonical JSON and a newline) atomically, a piece at a time; return its digest.

    Raises:
        StatisticsInputError: ``artifact`` is not a statistics artifact, or
            one of its fields cannot be serialized (it was replaced after
            construction); nothing is written.
    """
    from ..io.atomic import atomic_write_bytes

    if not isinstance(artifact, ArtifactForm):
        raise StatisticsInputError(f"expected AggregateStatistics or PairedStatistics, got {type(artifact).__name__}")
    sha = hashlib.sha256()

    def pieces() -> Iterator[bytes]:
        try:
            for chunk in artifact.json_chunks():
                sha.update(chunk)
                yield chunk
        except CanonicalFormError as exc:
            raise StatisticsInputError(f"statistics: {exc}") from None
        except MALFORMED as exc:
            raise StatisticsInputError(f"the statistics cannot be serialized ({type(exc).__name__}: {exc})") from None
        yield b"\n"

    atomic_write_bytes(path, pieces())
    return sha.hexdigest()


def to_json_bytes(form: dict[str, Any]) -> bytes:
    """Return the saved text of an artifact: canonical JSON and a newline."""
    return canonical_bytes(form) + b"\n"


def form_digest(form: dict[str, Any]) -> str:
    """Return the artifact digest: SHA-256 (hex) of its canonical JSON."""
    return digest(form)
