"""What a built report holds: each result's verified pass, the statistics, and where it was written.

:func:`emberbench.viewer.report.build_report` makes a :class:`Report`; the
HTML page (:mod:`.report_html`), the Markdown tables (:mod:`.report_md`) and
the table contents they share (:mod:`.tables`) only read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..sim.suite import Suite
from .collect import ResultCollection
from .summary import StatsSummary


@dataclass(frozen=True, slots=True)
class ReportInput:
    """One result of the report, after its single verified pass.

    Attributes:
        collection: what the pass kept.
        slug: a file-name-safe name for the model.
        viewer: the viewer page's path inside the report.
        representatives: per scenario id, the episode the page opens on for
            that scenario (most casualties), if embedded.
    """

    collection: ResultCollection
    slug: str
    viewer: str
    representatives: dict[str, int]

    @property
    def model_id(self) -> str:
        """The result's model id."""
        return self.collection.model_id


@dataclass(frozen=True, slots=True)
class Report:
    """A built report: its inputs, statistics and where it was written (``replaced``: over files, with --force)."""

    folder: Path
    suite: Suite
    inputs: tuple[ReportInput, ...]
    baseline: str
    aggregates: dict[str, StatsSummary]
    comparisons: dict[str, StatsSummary]
    order_by: str | None
    files: tuple[str, ...]
    replaced: bool = False


__all__ = ["Report", "ReportInput"]
