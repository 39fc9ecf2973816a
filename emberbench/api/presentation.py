"""``report``, ``view`` and ``plot``: what the commands of the same names do, as calls (the commands call them).

Each verifies its inputs by replay before showing anything, finds the suite
from the results' manifest when none is given (a shipped suite, or one of
the known-suites list ``known``: :mod:`emberbench.api.suites`), and writes
through the output policy: an existing output is replaced only with
``force=True``. Each returns where it wrote.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .suites import Known, SuiteArg, suite_of_file, suite_of_result

PathLike = str | os.PathLike[str]


def report(results: Sequence[PathLike], out: PathLike = "report", *, suite: SuiteArg = None,
           baseline: str | None = None, stats: Sequence[PathLike] = (), resamples: int = 2000,
           order_by: str | None = None, embed: int = 48, force: bool = False, known: Known = None,
           store: Any = None) -> Any:
    """Write the static report of ``results`` (all of one manifest) into the folder ``out``; return what was built.

    The returned report names its ``folder`` and the ``files`` written
    (``index.html`` and ``report.md`` among them). Arguments as ``emberbench
    report`` (docs/viewer.md): ``baseline`` is the model id the others are
    compared with, ``stats`` statistics artifacts the recomputed ones must
    equal byte for byte, ``order_by`` the metric that orders the leaderboard,
    ``store`` (a locator or an opened store) the store whose run-infos add
    the execution-accounting section.

    Raises:
        PresentationError, ResultError, StatisticsInputError, SuiteError:
            a bad argument or a refused input; nothing new is left on disk.
    """
    from ..viewer.report import build_report

    paths = [Path(p) for p in results]
    if not paths:
        from ..errors import PresentationError

        raise PresentationError("a report needs at least one result artifact")
    accounting = None
    if store is not None:
        from functools import partial

        from ..evaluation.run_info import run_accounting

        if isinstance(store, (str, os.PathLike)):
            from ..evaluation.store_runner import open_store

            store = open_store(os.fspath(store), create=False)
        accounting = partial(run_accounting, store)
    return build_report(paths, suite_of_result(paths[0], suite, known=known), Path(out), baseline=baseline,
                        stats=[Path(p) for p in stats], resamples=resamples, order_by=order_by, force=force,
                        embed=embed, accounting=accounting)


def view(path: PathLike, out: PathLike | None = None, *, suite: SuiteArg = None, episode: int | None = None,
         scenario: str | None = None, seed: int | None = None, embed: int = 48, force: bool = False,
         known: Known = None) -> Path:
    """Write the self-contained viewer page of a run record or a result artifact; return the page's path.

    ``out`` defaults to ``NAME.view.html`` beside the input
    (``NAME.episode-N.view.html`` for a chosen episode of a result). For a
    result, ``episode`` (a manifest index) or ``scenario`` with ``seed``
    chooses the episode opened first; at most ``embed`` episodes are embedded.

    Raises:
        PresentationError: a bad argument.
        ResultError: a refused input (also RecordAuthenticationError, SuiteError).
        OutputPathError: an output that exists (without ``force``) or cannot be written.
    """
    from ..io.atomic import atomic_write_bytes
    from ..viewer import Wanted, claim_output_file, default_page_path, view_page

    wanted = Wanted(index=episode, scenario_id=scenario, seed=seed)
    target = claim_output_file(Path(out) if out is not None else default_page_path(path, wanted), force=force)
    page = view_page(path, suite_of_file(path, suite, known=known), wanted=wanted, embed=embed, page_path=target)
    atomic_write_bytes(target, page)
    return target


def plot(kind: str, results: Sequence[PathLike], out: PathLike, *, suite: SuiteArg = None,
         baseline: str | None = None, metric: str | None = None, scenario: str | None = None,
         stats: Sequence[PathLike] = (), resamples: int = 2000, force: bool = False, known: Known = None) -> Path:
    """Draw one of the report's figures (``forest``, ``egress`` or ``heatmap``) into ``out`` (.png, .svg, .pdf).

    Needs matplotlib (``pip install 'emberbench[plots]'``). Arguments as
    ``emberbench plot`` (docs/viewer.md).

    Raises:
        PresentationError: a bad argument, an unknown kind or format, matplotlib missing.
        ResultError, StatisticsInputError, SuiteError, OutputPathError: a refused input or output.
    """
    from ..errors import PresentationError
    from ..viewer.plots import FigureKind, plot_figure

    try:
        figure = kind if isinstance(kind, FigureKind) else FigureKind(kind)
    except ValueError:
        raise PresentationError(f"unknown figure kind {kind!r} (forest, egress or heatmap)") from None
    paths = [Path(p) for p in results]
    if not paths:
        raise PresentationError("a figure needs at least one result artifact")
    return plot_figure(figure, paths, suite_of_result(paths[0], suite, known=known), Path(out), baseline=baseline,
                       metric=metric, scenario=scenario, stats=[Path(p) for p in stats], resamples=resamples,
                       force=force)


__all__ = ["plot", "report", "view"]
