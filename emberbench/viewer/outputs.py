"""Where presentation writes: single files, and report folders.

Every file goes through the output policy (:func:`emberbench.io.atomic.atomic_write_bytes`).
On top of it:

* a single output file that exists is refused unless ``force`` is given;
* a report folder follows the same rule: a new or empty folder is used, a
  folder holding anything (a previous report included) is refused unless
  ``force`` is given, so a rerun never silently replaces a report;
* a report is built in a staging folder beside the target and renamed into
  place only when it is complete, so a report that fails leaves nothing
  behind. With ``force``, a folder that holds exactly a previous report
  (its ``report-files.json`` lists every file in it) is swapped for the new
  one whole; a folder that also holds other files keeps them, and only the
  report's files are replaced.
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


def _dir_mode() -> int:
    """Permission bits a plain ``mkdir`` would give (0777 minus the umask)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o777 & ~mask


_DIR_MODE = _dir_mode()
STAGING = ".staging-"
"""Part of the name of a report's staging folder (``.<name>.staging-<random>``)."""


class ReportFolder:
    """A report folder, built in a staging folder and renamed into place only at the end.

    The constructor only checks the target: a missing or empty folder is
    accepted; a folder holding anything is refused unless ``force`` is given.
    Every file is written (atomically) into a hidden staging folder
    (``.<name>.staging-<random>``) beside the target. :meth:`finish` then puts
    the report in place:

    * a missing or empty target: the staging folder is renamed onto it in one
      step (missing parents are created only then);
    * with ``force``, a target that holds exactly a previous report: the old
      folder is renamed aside, the staging folder renamed into place, and
      the old one removed;
    * with ``force``, a target holding other files too (the staging folder
      then sits inside it): each report file is moved over the old one (each
      move atomic, the file index last, every destination checked first) and
      files only the previous report listed are removed; the other files stay.

    Leaving the ``with`` block without :meth:`finish` (an exception, a
    signal) removes the staging folder, so a failure leaves the target as it was.

    Args:
        folder: the report folder.
        force: replace the report in a folder that is not empty.

    Raises:
        PresentationError: the folder is not empty and ``force`` is not given,
            or it is not a folder.
    """

    def __init__(self, folder: str | os.PathLike[str], *, force: bool) -> None:
        self.folder = Path(folder)
        if self.folder.is_symlink() or (self.folder.exists() and not self.folder.is_dir()):
            raise PresentationError(f"{self.folder} is not a folder; a report is written into a folder")
        self.previous: list[str] = []
        self.replaced = False
        self._merge = False
        if self.folder.exists():
            present, plain = _scan(self.folder)
            listed = _previous_report_files(self.folder)
            if present and not force:
                if listed is not None:
                    raise PresentationError(f"{self.folder} holds a previous report; give --force to replace it, "
                                            "or choose another --out")
                raise PresentationError(f"{self.folder} is not empty; give --force to write the report into it "
                                        "(its other files are kept), or choose another --out")
            self.previous = listed or []
            # The current folder is never renamed away under the process (nor is the folder holding it).
            here = Path.cwd().resolve()
            swappable = here != self.folder.resolve() and self.folder.resolve() not in here.parents
            pure = listed is not None and plain and present == _report_entries(listed) and swappable
            self._merge = bool(present) and not pure
            self.replaced = bool(present)
            self._home = self.folder if self._merge else self.folder.absolute().parent
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
        """Write the report's file index and put the report in place (see the class docstring).

        Raises:
            PresentationError: the target was filled by something else while
                the report was built (and ``force`` was not given).
            OutputPathError: a file or folder the report would replace is not
                a regular file or a real folder (checked for every file before
                anything is moved).
        """
        files = sorted(set(self.written))
        index = {"report_files_version": REPORT_INDEX_VERSION, "files": files}
        staging = self._stage()
        atomic_write_bytes(staging / REPORT_INDEX, (json.dumps(index, indent=1) + "\n").encode("utf-8"))
        if self._merge:
            self._move_into(staging, [*files, REPORT_INDEX])
            for stale in sorted(set(self.previous) - set(files)):
                path = self.folder / stale
                if ".." not in Path(stale).parts and path.is_file() and not path.is_symlink():
                    path.unlink()
            shutil.rmtree(staging)
        elif self.replaced:
            self._swap(staging)
        else:
            self.folder.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.rename(staging, self.folder)  # onto a missing or an empty folder: one atomic step
            except OSError as exc:
                raise PresentationError(f"{self.folder} is no longer empty (something was written there while "
                                        f"the report was built: {exc.strerror}); nothing was changed") from None
            fsync_dir(self.folder.absolute().parent)
        self._staging = None
        self._finished = True

    def discard(self) -> None:
        """Remove the staging folder and everything written so far (``out`` is left as it was)."""
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)
            self._staging = None

    def _swap(self, staging: Path) -> None:
        """Replace a folder that holds exactly a previous report by the staging folder: two renames."""
        present, plain = _scan(self.folder)
        if not plain or present != _report_entries(self.previous):
            raise PresentationError(f"{self.folder} changed while the report was built; nothing was changed")
        aside = Path(tempfile.mkdtemp(prefix=f".{self.folder.name}.replaced-", dir=self._home))
        old = aside / "old"
        os.rename(self.folder, old)
        try:
            os.rename(staging, self.folder)
        except OSError:
            os.rename(old, self.folder)
            raise
        fsync_dir(self.folder.absolute().parent)
        shutil.rmtree(aside, ignore_errors=True)

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


def _scan(folder: Path) -> tuple[set[str], bool]:
    """Every entry below ``folder`` (POSIX paths relative to it, folders ending in ``/``), and whether all
    are regular files and real folders (a link or a special file makes the folder not plain)."""
    out: set[str] = set()
    plain = True
    for root, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            full = Path(root, name)
            mode = os.lstat(full).st_mode
            rel = full.relative_to(folder).as_posix()
            out.add(rel + "/" if stat.S_ISDIR(mode) else rel)
            plain = plain and (stat.S_ISREG(mode) or stat.S_ISDIR(mode))
    return out, plain


def _report_entries(files: Iterable[str]) -> set[str]:
    """The entries a folder holding exactly a report with these files has: the files, their folders, the index."""
    out = {REPORT_INDEX}
    for f in files:
        out.add(f)
        parts = f.split("/")[:-1]
        out.update("/".join(parts[: k + 1]) + "/" for k in range(len(parts)))
    return out


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
