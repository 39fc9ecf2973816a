"""Where everything lives inside a store folder, and the versioned format file.

::

    <root>/
      format               {"format": "emberbench-store", "version": 1}
      gc.lock              flock target: gc holds it exclusively, puts shared
      objects/ab/cdef...   one framed object per file, 256 two-hex fan-out folders
      tmp/                 temps of puts in progress (same filesystem as objects/)
      refs/<name>          one key per ref, rewritten atomically
      journals/<name>.journal   append-only run journals
      quarantine/          corrupt objects moved aside by fsck or put

Keys and names are validated before any path is built from them.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from . import _fs
from .errors import StoreFormatError, StoreIOError
from .keys import validate_journal_name, validate_key, validate_ref_name

FORMAT_FILE = "format"
FORMAT_NAME = "emberbench-store"
FORMAT_VERSION = 1
JOURNAL_SUFFIX = ".journal"
_FOLDERS = ("objects", "tmp", "refs", "journals", "quarantine")


@dataclass(frozen=True, slots=True)
class Layout:
    """The paths of one store folder. Holds no open files; cheap to copy."""

    root: Path

    @property
    def objects(self) -> Path:
        return self.root / "objects"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @property
    def refs(self) -> Path:
        return self.root / "refs"

    @property
    def journals(self) -> Path:
        return self.root / "journals"

    @property
    def quarantine(self) -> Path:
        return self.root / "quarantine"

    @property
    def gc_lock(self) -> Path:
        return self.root / "gc.lock"

    def fanout(self, key: str) -> Path:
        """The two-hex-digit folder that holds ``key`` (validated first)."""
        validate_key(key)
        return self.objects / key[:2]

    def object_path(self, key: str) -> Path:
        """The file of the object ``key`` (validated first)."""
        return self.fanout(key) / key[2:]

    def ref_path(self, name: str) -> Path:
        """The file of the ref ``name`` (validated first)."""
        return self.refs.joinpath(*validate_ref_name(name).split("/"))

    def journal_path(self, name: str) -> Path:
        """The file of the journal ``name`` (validated first)."""
        return self.journals / (validate_journal_name(name) + JOURNAL_SUFFIX)


def _format_text() -> bytes:
    return (json.dumps({"format": FORMAT_NAME, "version": FORMAT_VERSION}, sort_keys=True) + "\n").encode()


def read_format(root: Path) -> int:
    """Check the format file of ``root`` and return its version.

    Raises:
        StoreFormatError: no format file, not a store, or a version this code
            does not know (a newer store is refused, never guessed at).
    """
    path = root / FORMAT_FILE
    try:
        text = path.read_bytes()
    except FileNotFoundError:
        raise StoreFormatError(f"{root} is not a store (no {FORMAT_FILE} file)", path=str(root)) from None
    try:
        doc = json.loads(text)
    except ValueError:
        raise StoreFormatError(f"{path} is not valid JSON", path=str(path)) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT_NAME:
        raise StoreFormatError(f"{path} does not describe an {FORMAT_NAME}", path=str(path))
    version = doc.get("version")
    if version != FORMAT_VERSION:
        raise StoreFormatError(
            f"store {root} has format version {version!r}; this code reads version {FORMAT_VERSION}",
            path=str(path),
            found=version,
            supported=FORMAT_VERSION,
        )
    return FORMAT_VERSION


def open_layout(root: str | os.PathLike[str], *, create: bool = False) -> Layout:
    """Return the layout of the store at ``root``, creating it if asked.

    Creation is idempotent and safe against other processes creating the same
    store at once: folders are made with ``exist_ok`` and the format file is
    linked into place, so the first creator wins and the others check it.

    Raises:
        StoreFormatError: ``root`` is not a store (and ``create`` is false), or
            has an unknown format version.
        StoreIOError: creating a folder or the format file failed.
    """
    layout = Layout(Path(root))
    if create and not (layout.root / FORMAT_FILE).exists():
        _create(layout)
    read_format(layout.root)
    return layout


def _create(layout: Layout) -> None:
    try:
        layout.root.mkdir(parents=True, exist_ok=True)
        for name in _FOLDERS:
            (layout.root / name).mkdir(exist_ok=True)
        # All 256 fan-out folders exist from the start, so a put never races a
        # mkdir and only ever fsyncs the one folder it links into.
        for i in range(256):
            (layout.objects / f"{i:02x}").mkdir(exist_ok=True)
        layout.gc_lock.touch(exist_ok=True)
    except OSError as exc:
        raise StoreIOError("create store", str(layout.root), exc) from exc
    _fs.fsync_dir(layout.objects)
    tmp = _fs.write_temp(layout.root, FORMAT_FILE, _format_text())
    try:
        os.link(tmp, layout.root / FORMAT_FILE)
    except FileExistsError:
        pass  # another process created the store first; read_format checks it
    except OSError as exc:
        raise StoreIOError("link", str(layout.root / FORMAT_FILE), exc) from exc
    finally:
        _fs.remove_quietly(tmp)
    _fs.fsync_dir(layout.root)
