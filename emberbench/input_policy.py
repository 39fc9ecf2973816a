"""The one input policy: how every EMBERBench reader opens, caps and parses a file.

Every file a command reads (manifest, result, record, scenario, suite,
statistics artifact, grouped-rates input, JSON given on the command line...)
goes through this module, so the rules hold everywhere and are written once:

* **Regular files only.** The file is opened without blocking (a FIFO cannot
  hang the open) and checked with ``fstat``: a FIFO, device, socket or folder
  is refused at once, before a byte is read.
* **A size cap per kind of file** (:class:`InputKind`), checked against the
  size ``fstat`` reports and again while reading, so a file that grows while
  it is read is still refused.
* **Strict JSON with a nesting cap**: no duplicate keys, no NaN or infinity,
  UTF-8 only, and never a ``RecursionError``.

Errors are raised as the caller's own error class (``error=``), so a manifest
reader keeps raising ``ManifestError``; every message names the file.

This module uses only the standard library (the stand-alone grouped-rates
reader imports it).
"""

from __future__ import annotations

import io
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from .errors import CanonicalFormError, EmberError, InputFileError

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays and objects any EMBERBench format needs, with room to spare."""


@dataclass(frozen=True, slots=True)
class InputKind:
    """One kind of input file and the most bytes a reader accepts for it."""

    name: str
    max_bytes: int


MANIFEST = InputKind("manifest", 1 * GiB)
RESULT = InputKind("result artifact", 64 * GiB)
RECORD = InputKind("run record", 256 * MiB)
SCENARIO = InputKind("scenario file", 64 * MiB)
SUITE = InputKind("suite file", 16 * MiB)
STATISTICS = InputKind("statistics artifact", 1 * GiB)
SMALL_JSON = InputKind("JSON document", 1 * MiB)


def _kind_fail(error: type[Exception], message: str) -> Exception:
    return error(message)


def open_input(path: str | os.PathLike[str], kind: InputKind, *,
               error: type[Exception] = InputFileError) -> BinaryIO:
    """Open ``path`` for reading under the input policy; the caller closes it.

    Raises:
        ``error``: the file is missing or unreadable, is not a regular file,
            or is larger than ``kind.max_bytes``.
    """
    where = os.fspath(path)
    try:
        fd = os.open(where, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise _kind_fail(error, f"{where}: cannot read {kind.name}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _kind_fail(error, f"{where}: {kind.name} must be a regular file, not {_file_type(info.st_mode)}")
        if info.st_size > kind.max_bytes:
            raise _kind_fail(error, f"{where}: {kind.name} of {info.st_size} bytes exceeds the cap of "
                                    f"{kind.max_bytes} bytes")
        os.set_blocking(fd, True)
        return io.FileIO(fd, "rb", closefd=True)  # type: ignore[return-value]
    except BaseException:
        os.close(fd)
        raise


def read_input(path: str | os.PathLike[str], kind: InputKind, *,
               error: type[Exception] = InputFileError) -> bytes:
    """Return every byte of ``path`` under the input policy (see :func:`open_input`)."""
    with open_input(path, kind, error=error) as handle:
        data = handle.read(kind.max_bytes + 1)
    if len(data) > kind.max_bytes:
        raise _kind_fail(error, f"{os.fspath(path)}: {kind.name} grew past the cap of {kind.max_bytes} bytes "
                                "while it was read")
    return data


def load_json(path: str | os.PathLike[str], kind: InputKind, *,
              error: type[Exception] = InputFileError) -> Any:
    """Read and strictly parse a JSON file under the input policy."""
    where = os.fspath(path)
    data = read_input(path, kind, error=error)
    try:
        return parse_json(data, where=where)
    except CanonicalFormError as exc:
        if issubclass(error, CanonicalFormError):
            raise
        raise _kind_fail(error, str(exc)) from None


def parse_json(data: bytes | str, *, where: str) -> Any:
    """Parse JSON strictly: :func:`emberbench.canonical.parse_json_strict`, which applies the nesting cap."""
    from .canonical import parse_json_strict

    return parse_json_strict(data, where=where)


def check_json_depth(data: bytes | str, *, where: str, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Refuse JSON text whose arrays and objects nest deeper than ``max_depth``.

    Runs over the raw text before parsing, so a nesting bomb never reaches the
    (recursive) parser. Every step is a C-level bytes operation:

    1. escaped backslashes, then escaped quotes, are deleted, so every quote
       left opens or closes a string;
    2. everything but brackets and quotes is deleted, leaving a skeleton;
    3. string contents are deleted from the skeleton (deleting two adjacent
       quotes never moves a character into or out of a string);
    4. each pass then deletes the innermost ``[]`` and ``{}`` pairs (marked
       first, so a pair uncovered in a pass waits for the next): the number
       of passes is the nesting depth.

    Malformed text is left to the parser, which names the error.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if raw.count(b"[") + raw.count(b"{") <= max_depth:
        return
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    skeleton = raw.translate(None, _NOT_SKELETON).replace(b'""', b"")
    if b'"' in skeleton:
        skeleton = _STRING_RE.sub(b"", skeleton)
    for _ in range(max_depth):
        inner = skeleton.replace(b"[]", b"\0").replace(b"{}", b"\0")
        if inner == skeleton:
            return  # no pair left: fully matched, or unbalanced (the parser names that)
        skeleton = inner.replace(b"\0", b"")
        if not skeleton:
            return
    if b"[]" in skeleton or b"{}" in skeleton:
        raise CanonicalFormError(f"{where}: JSON nests deeper than {max_depth} levels")


_STRING_RE = re.compile(rb'"[^"]*"')
_NOT_SKELETON = bytes(b for b in range(256) if b not in b'[]{}"')


def _file_type(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "a special file"


def describe_path(path: str | os.PathLike[str]) -> str:
    """What is at ``path`` (for messages): a regular file, a folder, a FIFO... or nothing."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return "nothing"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "a regular file" if stat.S_ISREG(mode) else _file_type(mode)


__all__ = [
    "GiB", "KiB", "MAX_JSON_DEPTH", "MANIFEST", "MiB", "RECORD", "RESULT", "SCENARIO", "SMALL_JSON", "STATISTICS",
    "SUITE", "InputKind", "Path", "check_json_depth", "describe_path", "load_json", "open_input", "parse_json",
    "read_input", "EmberError",
]
