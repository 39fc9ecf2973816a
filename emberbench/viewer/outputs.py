"""Where presentation writes: single files, and report folders.

Every file goes through the output policy (:func:`emberbench.io.atomic.atomic_write_bytes`).
On top of it:

* a single output file that exists is refused unless ``force`` is given;
* a report folder may be created, may be empty, or may hold a previous
  report (its ``report-files.json`` lists every file it wrote, and the folder
  holds nothing else); anything else is refused unless ``force`` is given.
  Files of a previous report that the new one does not write again are
  removed, so a folder never mixes two reports;
* a report is built in a staging folder and moved into place only when it
  is complete, so a report that fails leaves nothing behind.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ..io.atomic import atomic_write_bytes, check_output_path, fsync_dir
from ..errors import OutputPathError, PresentationError
from ..io.input_policy import SMALL_JSON, load_json
from ..io.versions import REPORT_FILES_VERSION

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


def _dir_mode() -> int:
    """Permission bits a plain ``mkdir`` would give (0777 minus the umask)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o777 & ~mask


_DIR_MODE = _dir_mode()
STAGING = ".staging-"
"""Part of the name of a report's staging folder (``.<name>.staging-<random>``)."""


class ReportFolder:
    """A report folder, built in a staging folder and moved into place only at the end.

    The constructor only checks the target. Every file is written (atomically)
    into a hidden staging folder: beside the target when the target does not
    exist yet, inside it when it does. :meth:`finish` then moves the report
    into place: a new folder is the staging folder renamed in one step;
    into an existing folder every file is moved over the old one (each move
    atomic, the file index last) and files only the previous report had are
    removed. Leaving the ``with`` block without :meth:`finish` (an
    exception, a signal) removes the staging folder, so a failure leaves
    nothing new on disk.

    Args:
        folder: the report folder (created, with missing parents, when the report is finished).
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
            self._home = self.folder
        else:
            self._home = _nearest_existing(self.folder.absolute().parent)
            if not self._home.is_dir():
                raise PresentationError(f"{self.folder}: {self._home} is not a folder")
        self.written: list[str] = []
        self._staging: Path | None = None
        self._finished = False

    def __enter__(self) -> ReportFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._finished:
            self.discard()

    def _stage(self) -> Path:
        if self._staging is None:
            name = self.folder.name if self.folder.name not in ("", ".", "..") else "report"
            self._staging = Path(tempfile.mkdtemp(prefix=f".{name}{STAGING}", dir=self._home))
            os.chmod(self._staging, _DIR_MODE)  # mkdtemp makes it 0700; the report folder gets ordinary permissions
        return self._staging

    def write(self, relative: str, data: bytes | Iterable[bytes]) -> Path:
        """Write one file of the report (``relative`` uses ``/``) into the staging folder, atomically.

        Returns:
            where the file will be once the report is finished.
        """
        rel = Path(relative)
        if rel.is_absolute() or ".." in rel.parts or not rel.parts:
            raise PresentationError(f"report file name {relative!r} leaves the report folder")
        target = self._stage() / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, data)
        self.written.append(rel.as_posix())
        return self.folder / rel

    def finish(self) -> None:
        """Write the report's file index, move the report into place, then remove files only the previous report had.

        Raises:
            OutputPathError: a file or folder the report would replace is not
                a regular file or a real folder (checked for every file before
                anything is moved).
        """
        files = sorted(set(self.written))
        index = {"report_files_version": REPORT_INDEX_VERSION, "files": files}
        staging = self._stage()
        atomic_write_bytes(staging / REPORT_INDEX, (json.dumps(index, indent=1) + "\n").encode("utf-8"))
        if not os.path.lexists(self.folder):
            self.folder.parent.mkdir(parents=True, exist_ok=True)
            os.rename(staging, self.folder)
            fsync_dir(self.folder.parent if str(self.folder.parent) else Path("."))
        else:
            self._move_into(staging, [*files, REPORT_INDEX])
            for stale in sorted(set(self.previous) - set(files)):
                path = self.folder / stale
                if ".." not in Path(stale).parts and path.is_file() and not path.is_symlink():
                    path.unlink()
            shutil.rmtree(staging)
        self._staging = None
        self._finished = True

    def discard(self) -> None:
        """Remove the staging folder and everything written so far (``out`` is left as it was)."""
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)
            self._staging = None

    def _move_into(self, staging: Path, files: list[str]) -> None:
        """Move ``files`` from ``staging`` over the existing report folder: all checked first, then moved."""
        for rel in files:
            _check_destination(self.folder, rel)
        touched = set()
        for rel in files:
            dest = self.folder / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            check_output_path(dest)
            os.replace(staging / rel, dest)
            touched.add(dest.parent)
        for folder in sorted(touched):
            fsync_dir(folder)


def _nearest_existing(path: Path) -> Path:
    """``path`` or its closest ancestor that exists."""
    while not os.path.lexists(path) and path != path.parent:
        path = path.parent
    return path


def _check_destination(folder: Path, rel: str) -> None:
    """A report file may replace only a regular file, inside real folders (no link, no special file)."""
    path = folder
    for part in Path(rel).parts[:-1]:
        path = path / part
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            return
        if not stat.S_ISDIR(mode):
            raise OutputPathError(f"{path} is not a folder (a link or a file); a report writes only into real folders")
    check_output_path(folder / rel)
