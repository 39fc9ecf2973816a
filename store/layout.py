"""Where everything lives inside a store, the versioned format marker, and creation.

::

    <root>/
      format               {"format": "emberbench-store", "version": 1}
      gc.lock              flock target: gc holds it exclusively, puts shared
      refs.lock            flock target of ref compare-and-swap (made on demand)
      objects/ab/cdef...   one framed object per file, 256 two-hex fan-out folders
      tmp/                 temps of puts in progress (same filesystem as objects/)
      refs/<name>          one key per ref, rewritten atomically
      journals/<name>.journal   append-only run journals
      quarantine/          corrupt objects moved aside by fsck or put
      reflog/<seq>         the ref log: one write-once entry per ref change (store.reflog);
                           made on demand in a store created before it existed

An S3 store uses the same names as object keys under its prefix (without
the lock files and ``tmp/``, plus ``leases/``; see :mod:`store.s3`).
Keys and names are validated before any path is built from them.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from . import _fs, _nofollow
from .errors import StoreFormatError, StoreIOError, StoreLayoutError
from .keys import validate_journal_name, validate_key, validate_ref_name

FORMAT_FILE = "format"
FORMAT_NAME = "emberbench-store"
FORMAT_VERSION = 1
FORMAT_CAP = 4096
JOURNAL_SUFFIX = ".journal"
REFLOG_FOLDER = "reflog"
FOLDERS = ("objects", "tmp", "refs", "journals", "quarantine", REFLOG_FOLDER)
LOCK_FILES = ("gc.lock", "refs.lock")
_HEX = frozenset("0123456789abcdef")


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

    @property
    def refs_lock(self) -> Path:
        return self.root / "refs.lock"

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


def format_text() -> bytes:
    """The bytes of the format marker this code writes."""
    return (json.dumps({"format": FORMAT_NAME, "version": FORMAT_VERSION}, sort_keys=True) + "\n").encode()


def check_format(text: bytes, where: str) -> int:
    """Check the bytes of a format marker read from ``where``; return its version.

    Raises:
        StoreFormatError: not JSON, another format, or a version this code does
            not know (a newer store is refused, never guessed at).
    """
    try:
        doc = json.loads(text)
    except ValueError:
        raise StoreFormatError(f"{where} is not valid JSON", path=where) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT_NAME:
        raise StoreFormatError(f"{where} does not describe an {FORMAT_NAME}", path=where)
    version = doc.get("version")
    if version != FORMAT_VERSION:
        raise StoreFormatError(
            f"store {where} has format version {version!r}; this code reads version {FORMAT_VERSION}",
            path=where, found=version, supported=FORMAT_VERSION,
        )
    return FORMAT_VERSION


def read_format(root: Path) -> int:
    """Check the format file of the folder ``root`` and return its version.

    Raises:
        StoreFormatError: no format file (a store's marker is never recreated:
            a folder without one is not a store), or see :func:`check_format`.
    """
    where = str(root / FORMAT_FILE)
    try:
        with _nofollow.in_dir(str(root), ()) as dfd:
            fd = _nofollow.open_file(dfd, FORMAT_FILE, os.O_RDONLY, where)
            try:
                text = _nofollow.read_capped(fd, FORMAT_CAP, where)
            finally:
                os.close(fd)
    except FileNotFoundError:
        raise StoreFormatError(_not_a_store(root), path=str(root)) from None
    return check_format(text, where)


def _not_a_store(root: Path) -> str:
    try:
        entries = set(os.listdir(root))
    except OSError:
        return f"{root} is not a store (no such folder)"
    if entries and entries <= set(FOLDERS) | set(LOCK_FILES):
        return f"{root} is not a store: its {FORMAT_FILE} file is missing (it is never recreated; restore it)"
    return f"{root} is not a store (no {FORMAT_FILE} file)"


def check_layout(root: Path) -> None:
    """Refuse a store whose top level or fan-out holds links, special or foreign entries.

    Checks every entry of the root, and the 256 fan-out folders of
    ``objects/``, with ``lstat`` (nothing is followed). Deeper levels are
    checked as they are walked.

    Raises:
        StoreLayoutError: naming the first offending entry.
    """
    expected = {name: stat.S_ISDIR for name in FOLDERS}
    expected.update({name: stat.S_ISREG for name in (FORMAT_FILE, *LOCK_FILES)})
    with _nofollow.in_dir(str(root), ()) as dfd:
        for entry in sorted(os.listdir(dfd)):
            info = _nofollow.lstat(dfd, entry)
            if info is None:
                continue
            test = expected.get(entry)
            if test is None:
                if entry.startswith(".") and entry.endswith(_fs.TEMP_SUFFIX) and stat.S_ISREG(info.st_mode):
                    continue  # a temp of an interrupted format or ref write
                raise StoreLayoutError(str(root / entry), "not part of a store's layout")
            if not test(info.st_mode):
                kind = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "of the wrong file type"
                raise StoreLayoutError(str(root / entry), f"{kind} (links inside a store are never followed)")
    with _nofollow.in_dir(str(root), ("objects",)) as ofd:
        for entry in os.listdir(ofd):
            info = _nofollow.lstat(ofd, entry)
            if info is not None and stat.S_ISLNK(info.st_mode):
                raise StoreLayoutError(str(root / "objects" / entry), "a symbolic link (never followed)")


def open_layout(root: str | os.PathLike[str], *, create: bool = False) -> tuple[Layout, bool]:
    """Return the layout of the store at ``root`` and whether this call created it (only if asked).

    A store is created only where nothing is: ``root`` must not exist or be an
    empty folder. The store is built in a temp folder beside ``root`` and
    renamed into place, so a concurrent opener sees no store or a whole one,
    and two creators racing both end up with the one that won.

    Raises:
        StoreFormatError: ``root`` is not a store (and ``create`` is false, or
            it is a non-empty folder that is not a store), its format marker is
            missing or unknown.
        StoreLayoutError: the store holds links or foreign entries.
        StoreIOError: creating the store failed.
    """
    layout = Layout(Path(root))
    created = False
    if create and not _has_format(layout.root):
        created = _create(layout)
    read_format(layout.root)
    check_layout(layout.root)
    return layout, created


def _has_format(root: Path) -> bool:
    try:
        os.lstat(root / FORMAT_FILE)
        return True
    except FileNotFoundError:
        return False
    except NotADirectoryError:
        raise StoreFormatError(f"{root} is not a folder", path=str(root)) from None


def _create(layout: Layout) -> bool:
    """Make the store; whether this process made it (False: another creator won the race)."""
    root = layout.root
    try:
        if root.exists() and any(root.iterdir()):
            message = _not_a_store(root)
            if "missing" not in message:
                message = f"{root} is a non-empty folder that is not a store: refusing to turn it into one"
            raise StoreFormatError(message, path=str(root))
    except NotADirectoryError:
        raise StoreFormatError(f"{root} is not a folder", path=str(root)) from None
    parent = root.parent
    tmp = parent / f".{root.name[:40]}.{os.getpid()}.{secrets.token_hex(6)}.tmp"
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp.mkdir()
        for name in FOLDERS:
            (tmp / name).mkdir()
        # All 256 fan-out folders exist from the start, so a put never races a
        # mkdir and only ever fsyncs the one folder it links into.
        for i in range(256):
            (tmp / "objects" / f"{i:02x}").mkdir()
        for name in LOCK_FILES:
            (tmp / name).touch()
        (tmp / FORMAT_FILE).write_bytes(format_text())
        _fs.fsync_dir(tmp / "objects")
        _fs.fsync_dir(tmp)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise StoreIOError("create store", str(root), exc) from exc
    try:
        os.rename(tmp, root)  # replaces only a missing root or an empty folder
        created = True
    except OSError:
        # Another process created the store (or filled the folder) first.
        shutil.rmtree(tmp, ignore_errors=True)
        created = False
    _fs.fsync_dir(parent)
    return created
