"""``emberbench report``: a static report of several results (HTML, Markdown tables, viewer pages).

The report is built from one pass per result (:func:`collect_result`): every
record is replayed once to verify the result, and what the report shows is
kept on the way. Statistics come from :mod:`emberbench.statistics` on those
verified values (the same functions and inputs as ``emberbench stats`` and
``emberbench compare``, so the artifacts written under ``stats/`` are
byte-identical to theirs). A statistics artifact given with ``--stats`` is
never shown as given: it must be byte-identical to the recomputation, and it
only chooses that artifact's resample count.

The folder is built in a staging folder (:class:`~.outputs.ReportFolder`)
and renamed into place once every input has passed, so a refused input leaves
nothing behind; a folder that is not empty is refused unless ``force``.

Nothing combines metrics: the leaderboard sets the twelve metrics side by
side, each with its own interval, and the reader may order it by one metric.

Folder layout::

    index.html            the report: summary, leaderboard, comparisons, figures (inline, no network), provenance
    report.md             the same in Markdown, same order
    viewer/<model>.html   one episode viewer per result
    stats/*.json          statistics the report computed
    report-files.json     the list of files above (marks the folder as a report)
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import PresentationError
from ..records.metric_defs import METRIC_NAMES
from ..sim.suite import Suite
from .collect import collect_result
from .outputs import ReportFolder
from .page import DEFAULT_EMBED
from .report_html import report_html
from .report_md import report_markdown
from .report_model import Report, ReportInput
from .summary import StatsSummary, read_given_statistics, require_recomputed, summarize

if TYPE_CHECKING:
    from ..statistics.reader import StatisticsFile

DEFAULT_RESAMPLES = 2000


def model_slug(model_id: str) -> str:
    """A file name for ``model_id``: safe characters and a short hash (distinct ids never collide)."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", model_id).strip("-.")[:40] or "model"
    return f"{safe}-{hashlib.sha256(model_id.encode('utf-8')).hexdigest()[:8]}"


def report_statistics(inputs: list[ReportInput], base: ReportInput, suite: Suite, *,
                      stats: Sequence[StatisticsFile], resamples: int,
                      write: Callable[[str, bytes], object] | None = None,
                      ) -> tuple[dict[str, StatsSummary], dict[str, StatsSummary]]:
    """Aggregate statistics of every input and paired statistics of every input against ``base``.

    Every artifact is computed by :mod:`emberbench.statistics` from the
    verified values. An artifact of ``stats`` (already read by
    :func:`~.summary.read_given_statistics`) that matches a result (same
    manifest, same result digests, model - baseline order) sets the resample
    count of that artifact, and the recomputation must then be its exact
    bytes; ``write`` (if given) saves each artifact that no file was given
    for under ``stats/``.

    Raises:
        PresentationError: a given artifact matches none of the results, matches
            one that another file already matched, or differs from the recomputation.
    """
    from ..statistics import aggregate_from_values, paired_from_values
    from ..statistics.verified import context_of

    manifest = base.collection.manifest
    for f in stats:
        if f.form["evaluation_manifest_hash"] != manifest.hash:
            raise PresentationError(f"--stats {f.path}: statistics of manifest {f.form['evaluation_manifest_hash']}, "
                                    f"not of the results' manifest {manifest.hash}")
    ctx = context_of(manifest, suite)
    used: set[int] = set()

    def given(kind: str, digests: tuple[str, ...]) -> StatisticsFile | None:
        matching = [k for k, f in enumerate(stats) if f.artifact == kind and f.result_digests == digests]
        if len(matching) > 1:
            raise PresentationError(f"--stats {stats[matching[1]].path}: a second {kind} artifact for the same "
                                    f"result(s) as {stats[matching[0]].path}; give one")
        if not matching:
            return None
        used.add(matching[0])
        return stats[matching[0]]

    aggregates: dict[str, StatsSummary] = {}
    comparisons: dict[str, StatsSummary] = {}
    b = base.collection
    for item in inputs:
        c = item.collection
        found = given("aggregate", (c.digest,))
        art = aggregate_from_values(ctx, c.model_id, c.digest, c.values, resamples if found is None else found.resamples)
        if found is not None:
            require_recomputed(found, art)
        elif write is not None:
            write(f"stats/{item.slug}.stats.json", art.to_json_bytes())
        aggregates[c.model_id] = summarize(art.to_dict(), digest=art.digest(),
                                           origin="computed" if found is None else found.path)
        if item is base:
            continue
        found = given("paired", (c.digest, b.digest))
        art = paired_from_values(ctx, c.model_id, b.model_id, c.digest, b.digest, c.values, b.values,
                                 resamples if found is None else found.resamples)
        if found is not None:
            require_recomputed(found, art)
        elif write is not None:
            write(f"stats/{item.slug}-vs-{base.slug}.compare.json", art.to_json_bytes())
        comparisons[c.model_id] = summarize(art.to_dict(), digest=art.digest(),
                                            origin="computed" if found is None else found.path)
    unused = [f.path for k, f in enumerate(stats) if k not in used]
    if unused:
        raise PresentationError(f"--stats {unused[0]} matches none of the results (or compares them in the "
                                "other direction: comparisons are MODEL - BASELINE)")
    return aggregates, comparisons


def gather_inputs(results: list[Path], suite: Suite, *, embed: int = DEFAULT_EMBED,
                  write: Callable[[str, bytes], object] | None = None) -> list[ReportInput]:
    """Verify each result once (one replay per record) and keep what a report or a plot needs.

    ``write`` (if given) saves each result's viewer page as ``viewer/<slug>.html``.

    Raises:
        PresentationError: no results, results of different manifests, or a repeated model id.
    """
    if not results:
        raise PresentationError("at least one result artifact is needed")
    inputs: list[ReportInput] = []
    for path in results:
        coll = collect_result(path, suite, source_name=Path(path).name, embed=embed)
        if inputs and coll.manifest.hash != inputs[0].collection.manifest.hash:
            raise PresentationError(f"{path}: manifest {coll.manifest.hash} differs from {results[0]}'s "
                                    f"{inputs[0].collection.manifest.hash}; only results of one manifest compare")
        if any(i.model_id == coll.model_id for i in inputs):
            raise PresentationError(f"{path}: model id {coll.model_id!r} appears twice; give each result its own id")
        slug = model_slug(coll.model_id)
        viewer = f"viewer/{slug}.html"
        reps: dict[str, int] = {}
        if write is not None:
            write(viewer, coll.page.build(model_id=coll.model_id, manifest_hash=coll.manifest.hash,
                                          result_digest=coll.digest))
            embedded = set(coll.page.embedded)
            reps = {sid: i for sid in coll.tallies
                    if (i := coll.page.representative(sid)) is not None and i in embedded}
        coll.page = None  # type: ignore[assignment]  # release the candidate records
        inputs.append(ReportInput(collection=coll, slug=slug, viewer=viewer, representatives=reps))
    return inputs


def choose_baseline(inputs: list[ReportInput], baseline: str | None) -> ReportInput:
    """The baseline input: the one with model id ``baseline``, or the first.

    Raises:
        PresentationError: no input has that model id.
    """
    if baseline is None:
        return inputs[0]
    for item in inputs:
        if item.model_id == baseline:
            return item
    raise PresentationError(f"--baseline {baseline!r} is not the model id of any given result "
                            f"({', '.join(repr(i.model_id) for i in inputs)})")


def build_report(results: list[Path], suite: Suite, out: Path, *, baseline: str | None = None,
                 stats: list[Path] | None = None, resamples: int = DEFAULT_RESAMPLES, order_by: str | None = None,
                 force: bool = False, embed: int = DEFAULT_EMBED,
                 accounting: Callable[[str, str, str], object] | None = None) -> Report:
    """Verify each result once, compute (or read) its statistics, and write the report folder.

    Args:
        results: result artifacts, all of one manifest, with distinct model ids.
        suite: the suite they target.
        out: the report folder.
        baseline: the model every other one is compared with (default: the first).
        stats: statistics artifacts the recomputed ones must equal byte for byte (each
            sets the resample count of the artifact it matches).
        resamples: bootstrap resamples for statistics the report computes.
        order_by: the metric that orders the leaderboard (default: results as given).
        force: write into a folder that is not empty (replacing a previous report).
        embed: most episodes each viewer page embeds.
        accounting: ``accounting(manifest_hash, model_id, result_digest)`` gives the execution
            accounting of the run that wrote a result, or None (the CLI reads the run-infos of a
            store, :func:`emberbench.evaluation.run_info.run_accounting`); results with one get an
            "Execution accounting" section. Never a metric.

    Raises:
        PresentationError: a bad argument, mixed manifests, a refused folder, a
            ``--stats`` file that differs from the recomputation.
        ResultError, InputFileError, StatisticsInputError: an input is refused.

    Whatever fails, nothing new is left on disk.
    """
    if not results:
        raise PresentationError("a report needs at least one result artifact")
    if order_by is not None and order_by not in METRIC_NAMES:
        raise PresentationError(f"--order-by: unknown metric {order_by!r}; choose one of {', '.join(METRIC_NAMES)}")
    folder = ReportFolder(out, force=force)
    given = read_given_statistics(list(stats or []))  # every --stats file is checked before the long pass
    with folder:  # written into a staging folder; nothing reaches ``out`` unless everything passes
        inputs = gather_inputs(results, suite, embed=embed, write=folder.write)
        base = choose_baseline(inputs, baseline)
        base_id = base.model_id
        aggregates, comparisons = report_statistics(inputs, base, suite, stats=given,
                                                    resamples=resamples, write=folder.write)
        usage = {}
        if accounting is not None:
            for item in inputs:
                c = item.collection
                found = accounting(c.manifest.hash, c.model_id, c.digest)
                if found is not None:
                    usage[c.model_id] = found
        report = Report(folder=folder.folder, suite=suite, inputs=tuple(inputs), baseline=base_id,
                        aggregates=aggregates, comparisons=comparisons, order_by=order_by, files=(),
                        accounting=usage)
        folder.write("index.html", report_html(report))
        folder.write("report.md", report_markdown(report))
        folder.finish()
    return Report(folder=report.folder, suite=suite, inputs=report.inputs, baseline=base_id,
                  aggregates=aggregates, comparisons=comparisons, order_by=order_by,
                  files=tuple(sorted(set(folder.written))), replaced=folder.replaced,
                  accounting=report.accounting)
