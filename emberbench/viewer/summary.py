"""Statistics for the report: computed by :mod:`emberbench.statistics`, or read from artifacts, then summarized.

The report and the plots show a few numbers per (group, metric): the mean
(or mean delta), its 95 % bootstrap interval, how many episodes had it
defined, and for comparisons the wins, losses and ties. :func:`summarize`
takes those from a statistics artifact's output form, whichever way the
artifact was obtained, so a report built from given artifacts and one that
computed them show the same thing.

A given artifact is read under the input policy and must be of a known
statistics version and describe exactly the manifest and result digests of
the results the report is built from; anything else is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import PresentationError
from ..input_policy import STATISTICS, load_json
from ..metric_defs import METRIC_NAMES, METRICS_BY_NAME
from ..versions import STATISTICS_VERSION


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


def read_statistics(path: str | Path, *, manifest_hash: str) -> tuple[dict[str, Any], str]:
    """Read a statistics artifact under the input policy; return its form and digest.

    Raises:
        PresentationError: unreadable, of another statistics version, or of another manifest.
    """
    from ..canonical import canonical_bytes, sha256_hex

    form = load_json(path, STATISTICS, error=PresentationError)
    if not isinstance(form, dict):
        raise PresentationError(f"{path}: a statistics artifact is a JSON object")
    version = form.get("statistics_version")
    if version != STATISTICS_VERSION:
        raise PresentationError(f"{path}: unsupported statistics_version {version!r} (this version reads "
                                f"{STATISTICS_VERSION!r})")
    if form.get("artifact") not in ("aggregate", "paired"):
        raise PresentationError(f"{path}: unknown statistics artifact kind {form.get('artifact')!r}")
    if form.get("evaluation_manifest_hash") != manifest_hash:
        raise PresentationError(f"{path}: statistics of manifest {form.get('evaluation_manifest_hash')}, "
                                f"not of the results' manifest {manifest_hash}")
    return form, sha256_hex(canonical_bytes(form))


def verdict(metric: str, cell: Cell) -> str:
    """``better``, ``worse`` (the interval excludes 0 on that side), ``unclear``, or ``none`` (no direction)."""
    direction = METRICS_BY_NAME[metric].direction
    if direction == "none" or cell.lower is None or cell.upper is None:
        return "none" if direction == "none" else "unclear"
    if cell.lower > 0 or cell.upper < 0:
        positive = cell.lower > 0
        return "better" if positive == (direction == "higher") else "worse"
    return "unclear"
