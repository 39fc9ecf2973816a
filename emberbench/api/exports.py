"""Tables out: per-episode metrics of results and the run catalog of a store, as files or as tables.

:func:`export_episodes` streams the episodes of one or more result artifacts
into a CSV, JSON-lines or Parquet file (:mod:`emberbench.tables.writers`),
one row per episode with the manifest's columns
(:data:`emberbench.results.episode_rows.EPISODE_COLUMNS`). Every artifact is
read by the library's streaming verifier (each record replayed once,
:class:`~emberbench.results.stream.ArtifactStream`) and its rows are written
as its episodes pass; the file appears only after the last artifact has
passed completely, so a file that fails leaves nothing. Memory holds one
episode (and, for Parquet, one batch of rows), whatever the sizes.

:func:`run_catalog` is a store's run catalog as a table (``to_pandas()``...),
:func:`export_run_catalog` the same written to a file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .suites import Known, SuiteArg, suite_of_result

PathLike = str | os.PathLike[str]


@dataclass(frozen=True, slots=True)
class Exported:
    """What an export wrote: the file, its format and the number of rows."""

    path: Path
    format: str
    rows: int


def export_episodes(results: Sequence[PathLike], out: PathLike, *, format: str, suite: SuiteArg = None,
                    force: bool = False, known: Known = None, replayer: Any = None) -> Exported:
    """Write one row per episode of every artifact of ``results`` (in the order given) to ``out``.

    Args:
        results: result artifacts (any manifests; each row names its model).
        out: the file to write (nothing there, or a regular file with ``force``).
        format: ``csv``, ``jsonl`` or ``parquet`` (Parquet needs pyarrow).
        suite: the suite of every artifact; default: the suite each one's
            manifest names (shipped, or known to ``known``).
        replayer: where records are replayed (in process by default).

    Raises:
        OutputPathError: ``out`` exists (without ``force``) or is refused.
        ResultError, SuiteError: an artifact is refused; no file is written.
        ValueError: an unknown format; ImportError: Parquet without pyarrow.
    """
    from ..io.atomic import check_output_path
    from ..results.episode_rows import EPISODE_COLUMNS, EPISODE_TABLE_VERSION, artifact_rows
    from ..tables.writers import FORMATS, write_rows

    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    target = _claim(out, force, check_output_path)
    paths = [Path(p) for p in results]
    if not paths:
        raise ValueError("nothing to export: give at least one result artifact")

    def rows() -> Iterator[tuple[Any, ...]]:
        for path in paths:
            yield from artifact_rows(path, suite_of_result(path, suite, known=known), replayer=replayer)

    count = write_rows(target, EPISODE_COLUMNS, rows(), format=format,
                       metadata={"emberbench_table": "episodes", "emberbench_table_version": EPISODE_TABLE_VERSION})
    return Exported(target, format, count)


def run_catalog(store: Any, *, model: str | None = None, manifest: str | None = None,
                state: str | None = None) -> Any:
    """The runs of ``store`` (a locator or an opened store) as a table: one row per run, like ``runs ls``.

    The result shows in a notebook and a terminal, and gives ``to_pandas()``,
    ``to_arrow()`` and ``to_table()``; filters as ``runs ls``. A run whose
    run-info cannot be read is a row with only its ``damage``.
    """
    from ..runs.catalog import CatalogTable, iter_catalog

    opened = _open_store(store)
    return CatalogTable(iter_catalog(opened, model=model, manifest=manifest, state=state), opened.locator)


def export_run_catalog(store: Any, out: PathLike, *, format: str, force: bool = False, model: str | None = None,
                       manifest: str | None = None, state: str | None = None) -> Exported:
    """Write :func:`run_catalog` to ``out`` (rows streamed from the store one run at a time)."""
    from ..io.atomic import check_output_path
    from ..io.versions import RUN_CATALOG_VERSION
    from ..runs.catalog import CATALOG_COLUMNS, catalog_row, iter_catalog
    from ..tables.writers import FORMATS, write_rows

    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    target = _claim(out, force, check_output_path)
    opened = _open_store(store)
    rows = (catalog_row(r) for r in iter_catalog(opened, model=model, manifest=manifest, state=state))
    count = write_rows(target, CATALOG_COLUMNS, rows, format=format,
                       metadata={"emberbench_table": "run-catalog", "emberbench_table_version": RUN_CATALOG_VERSION})
    return Exported(target, format, count)


def _claim(out: PathLike, force: bool, check: Any) -> Path:
    from ..errors import OutputPathError

    target = check(Path(out))
    if os.path.lexists(target) and not force:
        raise OutputPathError(f"{target} exists; use --force to replace it")
    return target


def _open_store(store: Any) -> Any:
    """An opened store as it is; a locator opened (never created: an empty catalog is not a store)."""
    if not isinstance(store, (str, os.PathLike)):
        return store
    from ..evaluation.store_runner import open_store

    return open_store(os.fspath(store), create=False)


__all__ = ["Exported", "export_episodes", "export_run_catalog", "run_catalog"]
