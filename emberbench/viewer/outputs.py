"""Where presentation writes: single files, and report folders.

Every file goes through the output policy (:func:`emberbench.atomic.atomic_write_bytes`).
On top of it:

* a single output file that exists is refused unless ``force`` is given;
* a report folder may be created, may be empty, or may hold a previous
  report (its ``report-files.json`` lists every file it wrote, and the folder
  holds nothing else); anything else is refused unless ``force`` is given.
  Files of a previous report that the new one does not write again are
  removed, so a folder never mixes two reports.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from ..atomic import atomic_write_bytes, check_output_path
from ..errors import PresentationError
from ..input_policy import SMALL_JSON, load_json
from ..versions import REPORT_FILES_VERSION

REPORT_INDEX = "report-files.json"
REPORT_INDEX_VERSION = REPORT_FILES_VERSION


def claim_output_file(path: str | os.PathLike[str], *, force: bool) -> Path:
    """Check that ``path`` may be written: nothing there, or a regular file and ``force``.

    Raises:
        PresentationError: the file exists and ``force`` is not given.
        OutputPathError: something other than a regular file is there.
    """
    target = check_output_path(path)
    if target.exists() and not force:
        raise PresentationError(f"{target} exists; use --force to replace it")
    return target


def _previous_report_files(folder: Path) -> list[str] | None:
    """The files a previous report in ``folder`` wrote, or None if it holds no valid report index."""
    index = folder / REPORT_INDEX
    if not index.is_file():
        return None
    try:
        data = load_json(index, SMALL_JSON, error=PresentationError)
    except PresentationError:
        return None
    if (not isinstance(data, dict) or data.get("report_files_version") != REPORT_INDEX_VERSION
            or not isinstance(data.get("files"), list) or not all(isinstance(f, str) for f in data["files"])):
        return None
    return list(data["files"])


def _contents(folder: Path) -> set[str]:
    """Every file below ``folder``, as POSIX paths relative to it (folders themselves left out)."""
    out = set()
    for root, _dirs, files in os.walk(folder):
        for name in files:
            out.add(Path(root, name).relative_to(folder).as_posix())
    return out


class ReportFolder:
    """A folder a report is written into, file by file, each file atomically.

    Args:
        folder: the report folder (created if missing).
        force: write even into a folder holding other files.

    Raises:
        PresentationError: the folder holds files that are not a previous
            report's and ``force`` is not given, or it is not a folder.
    """

    def __init__(self, folder: str | os.PathLike[str], *, force: bool) -> None:
        self.folder = Path(folder)
        if self.folder.is_symlink() or (self.folder.exists() and not self.folder.is_dir()):
            raise PresentationError(f"{self.folder} is not a folder; a report is written into a folder")
        self.previous: list[str] = []
        if self.folder.exists():
            present = _contents(self.folder)
            listed = _previous_report_files(self.folder)
            ours = set(listed or ()) | ({REPORT_INDEX} if listed is not None else set())
            if present - ours and not force:
                raise PresentationError(
                    f"{self.folder} is not empty and holds files that are not a previous EMBERBench report's; "
                    "choose another --out or give --force")
            self.previous = listed or []
        self.written: list[str] = []

    def write(self, relative: str, data: bytes | Iterable[bytes]) -> Path:
        """Write one file of the report (``relative`` uses ``/``), atomically under the output policy."""
        rel = Path(relative)
        if rel.is_absolute() or ".." in rel.parts:
            raise PresentationError(f"report file name {relative!r} leaves the report folder")
        target = self.folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, data)
        self.written.append(rel.as_posix())
        return target

    def finish(self) -> None:
        """Write the report's file index last, then remove files only the previous report had."""
        files = sorted(set(self.written))
        index = {"report_files_version": REPORT_INDEX_VERSION, "files": files}
        atomic_write_bytes(self.folder / REPORT_INDEX, (json.dumps(index, indent=1) + "\n").encode("utf-8"))
        for stale in sorted(set(self.previous) - set(files)):
            path = self.folder / stale
            if ".." not in Path(stale).parts and path.is_file() and not path.is_symlink():
                path.unlink()
