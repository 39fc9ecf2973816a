"""What a built report holds: each result's verified pass, the statistics, and where it was written.

:func:`emberbench.viewer.report.build_report` makes a :class:`Report`; the
HTML page (:mod:`.report_html`), the Markdown tables (:mod:`.report_md`) and
the table contents they share (:mod:`.tables`) only read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
    """A built report: its inputs, statistics and where it was written (``replaced``: over files, with --force).

    ``accounting`` maps a model id to the execution accounting of the run
    that wrote its result (a :class:`~emberbench.policies.served.usage.ModelUsage`),
    for the results whose run-info was found and reports one; empty otherwise.
    """

    folder: Path
    suite: Suite
    inputs: tuple[ReportInput, ...]
    baseline: str
    aggregates: dict[str, StatsSummary]
    comparisons: dict[str, StatsSummary]
    order_by: str | None
    files: tuple[str, ...]
    replaced: bool = False
    accounting: dict[str, Any] = field(default_factory=dict)


ACCOUNTING_NOTE = ("What running each model cost, as its run recorded in the store (the run-info's model_usage): "
                   "it depends on the response cache, the network and the server, not on the episodes, so it is "
                   "no metric and two runs with the same records may differ in it.")
ACCOUNTING_COLUMNS = ("model", "steps", "from the cache", "requests", "retries", "prompt tokens",
                      "completion tokens", "seconds waiting", "slowest step (s)")


def accounting_rows(report: Report) -> list[list[str]]:
    """One row per model with accounting, in report order: :data:`ACCOUNTING_COLUMNS` as text."""
    rows = []
    for item in report.inputs:
        u = report.accounting.get(item.model_id)
        if u is not None:
            rows.append([item.model_id, str(u.steps), str(u.cache_hits), str(u.requests), str(u.retries),
                         str(u.prompt_tokens), str(u.completion_tokens), f"{u.latency_ms / 1000:.1f}",
                         f"{u.max_latency_ms / 1000:.1f}"])
    return rows


__all__ = ["ACCOUNTING_COLUMNS", "ACCOUNTING_NOTE", "Report", "ReportInput", "accounting_rows"]
