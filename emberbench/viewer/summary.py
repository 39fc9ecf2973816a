"""Statistics for the report: computed by :mod:`emberbench.statistics`, or read from artifacts, then summarized.

The report and the plots show a few numbers per (group, metric): the mean
(or mean delta), its 95 % bootstrap interval, how many episodes had it
defined, and for comparisons the wins, losses and ties. :func:`summarize`
takes those from a statistics artifact's output form, whichever way the
artifact was obtained, so a report built from given artifacts and one that
computed them show the same thing.

A given artifact (``--stats``) is only a claim: it passes the strict
statistics reader (:mod:`emberbench.statistics.reader`) before the results
are read, and once they are verified it must be byte-identical to the
artifact recomputed from them (:func:`require_recomputed`); what is shown is
always the recomputation.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import PresentationError
from ..records.metric_defs import METRIC_NAMES, METRICS_BY_NAME

if TYPE_CHECKING:
    from ..statistics.reader import StatisticsFile


@dataclass(frozen=True, slots=True)
class Cell:
    """One metric in one group: mean (or mean delta) and its interval.

    ``wins``/``losses``/``ties`` count paired episodes where the model was
    better, worse or equal to the baseline (None for aggregates and for
    metrics without a direction).
    """

    mean: float | None
    lower: float | None
    upper: float | None
    n: int
    undefined: int
    wins: int | None = None
    losses: int | None = None
    ties: int | None = None


@dataclass(frozen=True, slots=True)
class GroupCells:
    """The cells of one group (``overall``, a scenario or a family), by metric name."""

    kind: str
    name: str
    cells: dict[str, Cell]


@dataclass(frozen=True, slots=True)
class StatsSummary:
    """What the report keeps of one statistics artifact.

    Attributes:
        artifact: ``aggregate`` or ``paired``.
        models: (model,) or (model A, model B).
        result_digests: the result digests it was computed from, same order.
        digest: SHA-256 of the artifact's canonical JSON.
        origin: ``computed`` or the file it was read from.
        resamples: bootstrap resamples.
        groups: overall first, then scenarios, then families.
    """

    artifact: str
    models: tuple[str, ...]
    result_digests: tuple[str, ...]
    digest: str
    origin: str
    resamples: int
    groups: tuple[GroupCells, ...]

    def group(self, kind: str, name: str) -> GroupCells | None:
        """The group of that kind and name, if present."""
        for g in self.groups:
            if g.kind == kind and g.name == name:
                return g
        return None

    @property
    def overall(self) -> GroupCells:
        """The overall group."""
        return self.groups[0]


def _cell(m: dict[str, Any], paired: bool) -> Cell:
    ci = m.get("mean_delta_ci" if paired else "mean_ci")
    stats = m["statistics"]
    return Cell(
        mean=stats.get("mean"), lower=None if ci is None else ci["lower"], upper=None if ci is None else ci["upper"],
        n=int(stats["n"]), undefined=int(m.get("undefined", 0)),
        wins=m.get("a_better") if paired else None, losses=m.get("b_better") if paired else None,
        ties=m.get("ties") if paired else None,
    )


def summarize(form: dict[str, Any], *, digest: str, origin: str) -> StatsSummary:
    """Summarize a statistics artifact's output form (``to_dict()`` or its parsed JSON).

    Raises:
        PresentationError: the form lacks what the report shows.
    """
    try:
        paired = form["artifact"] == "paired"
        groups = []
        for g in (form["overall"], *form["scenarios"], *form["families"]):
            cells = {m["metric"]: _cell(m, paired) for m in g["metrics"]}
            if tuple(cells) != METRIC_NAMES:
                raise PresentationError(f"{origin}: group {g['name']!r} does not list the twelve metrics in order")
            groups.append(GroupCells(kind=g["kind"], name=g["name"], cells=cells))
        models = (form["model_a"], form["model_b"]) if paired else (form["model_id"],)
        digests = (form["result_digest_a"], form["result_digest_b"]) if paired else (form["result_digest"],)
        return StatsSummary(artifact=form["artifact"], models=models, result_digests=digests, digest=digest,
                            origin=origin, resamples=int(form["methods"]["bootstrap"]["resamples"]),
                            groups=tuple(groups))
    except (KeyError, TypeError, ValueError) as exc:
        raise PresentationError(f"{origin}: not a statistics artifact the report can show ({exc!r})") from None


def read_given_statistics(paths: Sequence[str | Path]) -> list[StatisticsFile]:
    """Read every ``--stats`` file with the strict statistics reader, before anything else is done.

    Raises:
        StatisticsInputError: a file breaks the input policy, the schema or the specification.
    """
    from ..statistics.reader import read_statistics_artifact

    return [read_statistics_artifact(p) for p in paths]


def require_recomputed(given: StatisticsFile, computed: Any) -> None:
    """Require a given artifact to be byte-identical to the one recomputed from the verified results.

    Raises:
        PresentationError: naming the first field that differs, or saying that
            only the JSON text differs.
    """
    sha = hashlib.sha256()
    for chunk in computed.json_chunks():  # the saved text (canonical JSON and a newline), a piece at a time
        sha.update(chunk)
    sha.update(b"\n")
    if given.file_digest == sha.hexdigest():
        return
    where = _first_difference(given.form, computed.to_dict(), "")
    if where is None:
        raise PresentationError(f"--stats {given.path}: holds the recomputed statistics but not as the exact "
                                "bytes emberbench stats/compare --out write; only those bytes are accepted")
    raise PresentationError(f"--stats {given.path}: differs from the statistics recomputed from the verified "
                            f"results at {where}")


def _first_difference(given: Any, computed: Any, path: str) -> str | None:
    """Where ``given`` first differs from ``computed`` (keys sorted, lists in order), or None."""
    if type(given) is not type(computed):
        return f"{path or 'top level'} (the file has {_clip(given)}, recomputed {_clip(computed)})"
    if isinstance(given, dict):
        for key in sorted(set(given) | set(computed)):
            if key not in given or key not in computed:
                return f"{path}.{key}".lstrip(".") + (" (not in the file)" if key not in given else " (unexpected)")
            found = _first_difference(given[key], computed[key], f"{path}.{key}".lstrip("."))
            if found is not None:
                return found
        return None
    if isinstance(given, list):
        for k, (a, b) in enumerate(zip(given, computed)):
            found = _first_difference(a, b, f"{path}[{k}]")
            if found is not None:
                return found
        return None if len(given) == len(computed) else f"{path} ({len(given)} items, recomputed {len(computed)})"
    if given != computed:
        return f"{path} (the file has {_clip(given)}, recomputed {_clip(computed)})"
    return None


def _clip(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def verdict(metric: str, cell: Cell) -> str:
    """``better``, ``worse`` (the interval excludes 0 on that side), ``unclear``, or ``none`` (no direction)."""
    direction = METRICS_BY_NAME[metric].direction
    if direction == "none" or cell.lower is None or cell.upper is None:
        return "none" if direction == "none" else "unclear"
    if cell.lower > 0 or cell.upper < 0:
        positive = cell.lower > 0
        return "better" if positive == (direction == "higher") else "worse"
    return "unclear"
