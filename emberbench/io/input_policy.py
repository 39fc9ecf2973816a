"""The one input policy: how every EMBERBench reader opens, caps and parses a file.

Every file a command reads (manifest, result, record, scenario, suite,
statistics artifact, grouped-rates input, JSON given on the command line, an
agent's reply line) goes through this module, so the rules hold everywhere
and are written once (docs/formats.md, "Input policy"):

* **Regular files only.** The path is checked with ``stat`` before it is
  opened, so a device is never opened at all; it is then opened without
  blocking (a FIFO swapped in meanwhile cannot hang the open) and checked
  again with ``fstat``. A FIFO, device, socket or folder is refused at once,
  before a byte is read. Links are followed: a link to a regular file is read.
* **A size cap per kind of file** (:class:`InputKind`), checked against the
  size ``fstat`` reports and again while reading, so a file that grows while
  it is read is still refused.
* **Strict JSON**: UTF-8 only (no byte-order mark, no lone surrogate, no
  UTF-16), no duplicate keys, no NaN or infinity, every number finite and
  every integer within ``±(2**64 - 1)``, nesting at most
  :data:`MAX_JSON_DEPTH` deep and, per kind, at most ``max_values`` values.
  The shape (depth and value count) is measured on the raw bytes before the
  parser runs, so neither a nesting bomb nor a file of a hundred million
  empty objects reaches it.

Memory: the parser holds the file's bytes, their decoded text (as large, for
ASCII) and the parsed objects, which cost at most about 75 bytes per counted
value (small strings and one-key objects are the dearest). A kind's worst case
is therefore about ``3 * max_bytes + 75 * max_values``; docs/formats.md lists
the caps and the peaks measured at them.

Errors are raised as the caller's own error class (``error=``), so a manifest
reader keeps raising ``ManifestError``; every message names the file.

This module uses only the standard library (the stand-alone grouped-rates
reader imports it).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from dataclasses import dataclass
from typing import Any, BinaryIO

from ..errors import CanonicalFormError, InputFileError

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays and objects any EMBERBench format needs, with room to spare."""

MAX_JSON_INT = (1 << 64) - 1
"""Largest magnitude of an integer in any EMBERBench JSON document (seeds reach 2**64 - 1)."""


@dataclass(frozen=True, slots=True)
class InputKind:
    """One kind of input and the limits its reader applies.

    Attributes:
        name: what the input is, for messages ("manifest").
        max_bytes: the most bytes accepted.
        max_values: the most JSON values one document may hold, counted
            from above on the text (:func:`check_json_shape`; object keys
            count too); None for kinds read piece by piece, whose pieces are
            capped by their reader.
        cap_name: a name under which a format's contract states ``max_bytes``
            (messages then cite it); None to cite the byte count alone.
        json_object: the document must be a JSON object (every EMBERBench
            format is); checked on the first byte, before anything is parsed.
    """

    name: str
    max_bytes: int
    max_values: int | None = None
    cap_name: str | None = None
    json_object: bool = True

    def __post_init__(self) -> None:
        if self.max_bytes < 0 or (self.max_values is not None and self.max_values < 1):
            raise ValueError(f"invalid limits for input kind {self.name!r}")

    def cap_text(self) -> str:
        """How messages cite the byte cap."""
        if self.cap_name is not None:
            return f"the cap {self.cap_name} = {self.max_bytes} bytes"
        return f"the cap of {self.max_bytes} bytes"


# Caps are derived from what the formats can legitimately hold (docs/formats.md):
# a scenario is at most 256 x 256 cells; a record at most 10,000 steps; a
# manifest of 1,000,000 episodes is about 157 MB and counts 9,000,000 values
# (the caps allow about 1,300,000 episodes).
MANIFEST = InputKind("manifest", 256 * MiB, max_values=12_000_000)
RESULT = InputKind("result artifact", 64 * GiB)
RECORD = InputKind("run record", 64 * MiB, max_values=2_000_000)
SCENARIO = InputKind("scenario file", 16 * MiB, max_values=1_000_000)
SUITE = InputKind("suite manifest", 16 * MiB, max_values=1_000_000)
STATISTICS = InputKind("statistics artifact", 256 * MiB, max_values=8_000_000)
SMALL_JSON = InputKind("JSON document", 1 * MiB, max_values=100_000)
AGENT_REPLY = InputKind("agent reply", 4 * MiB, max_values=300_000)
"""One line an external agent writes per step (a move for each of up to 65,536 people)."""


def _fail(error: type[Exception], message: str) -> Exception:
    return error(" ".join(message.split()))


def _strerror(exc: OSError) -> str:
    return exc.strerror or str(exc)


def open_input(path: str | os.PathLike[str], kind: InputKind, *,
               error: type[Exception] = InputFileError) -> BinaryIO:
    """Open ``path`` for reading under the input policy; the caller closes it.

    Raises:
        ``error``: the file is missing or unreadable, is not a regular file,
            or is larger than ``kind.max_bytes``.
    """
    where = os.fspath(path)
    try:
        before = os.stat(where)
    except OSError as exc:
        raise _fail(error, f"{where}: cannot read {kind.name}: {_strerror(exc)}") from None
    _check_regular(where, before, kind, error)
    try:
        fd = os.open(where, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise _fail(error, f"{where}: cannot read {kind.name}: {_strerror(exc)}") from None
    try:
        _check_regular(where, os.fstat(fd), kind, error)
        os.set_blocking(fd, True)
        return open(fd, "rb", buffering=0, closefd=True)  # noqa: SIM115 - the caller closes it
    except BaseException:
        os.close(fd)
        raise


def _check_regular(where: str, info: os.stat_result, kind: InputKind, error: type[Exception]) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise _fail(error, f"{where}: {kind.name} must be a regular file, not {_file_type(info.st_mode)}")
    if info.st_size > kind.max_bytes:
        raise _fail(error, f"{where}: {kind.name} of {info.st_size} bytes exceeds {kind.cap_text()}")


def read_input(path: str | os.PathLike[str], kind: InputKind, *,
               error: type[Exception] = InputFileError) -> bytes:
    """Return every byte of ``path`` under the input policy (see :func:`open_input`).

    Memory: one buffer of the file's size (plus one chunk, if the file grew
    while it was read).
    """
    where = os.fspath(path)
    with open_input(path, kind, error=error) as handle:
        size = os.fstat(handle.fileno()).st_size
        try:
            data = _read_upto(handle, min(size, kind.max_bytes) + 1)
            if len(data) > size:  # it grew: keep reading, but never past the cap
                data += _read_upto(handle, kind.max_bytes + 1 - len(data))
        except OSError as exc:
            raise _fail(error, f"{where}: cannot read {kind.name}: {_strerror(exc)}") from None
    if len(data) > kind.max_bytes:
        raise _fail(error, f"{where}: {kind.name} grew past {kind.cap_text()} while it was read")
    return data


def _read_upto(handle: BinaryIO, limit: int) -> bytes:
    """Read until end of file or ``limit`` bytes (one read when the file is that small)."""
    first = handle.read(limit)
    if not first or len(first) >= limit:
        return first or b""
    parts = [first]  # a short read: a large file (one read returns at most ~2 GiB) or a growing one
    got = len(first)
    while got < limit:
        chunk = handle.read(min(limit - got, 64 * MiB))
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


@dataclass(frozen=True, slots=True)
class JsonText:
    """A document's text that passed the input policy's checks, ready to be parsed whole or piece by piece.

    Attributes:
        text: the decoded text.
        where: the source, for messages.
        exact: numbers must be checked one by one (some may be out of range).
    """

    text: str
    where: str
    exact: bool

    def decoder(self) -> json.JSONDecoder:
        """A strict decoder (the policy's rules) whose ``raw_decode`` parses one value at a position."""
        return _decoder(self.where, self.exact)

    def parse(self) -> Any:
        """The whole document.

        Raises:
            CanonicalFormError: the text is not strict JSON.
        """
        return _loads(self.text, self.where, self.exact)


def read_json_text(path: str | os.PathLike[str], kind: InputKind, *,
                   error: type[Exception] = InputFileError) -> JsonText:
    """Read a JSON file under the input policy and check it without parsing it: a reader that parses it
    piece by piece (and so never holds all its objects) starts here.

    Raises:
        ``error``: the file breaks the policy (a special file, over a cap,
            not an object, too deep, not UTF-8); the message names the file.
    """
    where = os.fspath(path)
    data = read_input(path, kind, error=error)
    if kind.json_object and data.lstrip(b" \t\r\n")[:1] != b"{":
        raise _fail(error, f"{where}: {kind.name} must be a JSON object")
    try:
        text, _, exact = _prepare(data, where, kind.max_values)
    except CanonicalFormError as exc:
        if issubclass(error, CanonicalFormError):
            raise
        raise _fail(error, str(exc)) from None
    return JsonText(text, where, exact)


def load_json(path: str | os.PathLike[str], kind: InputKind, *,
              error: type[Exception] = InputFileError) -> Any:
    """Read and strictly parse a JSON file under the input policy.

    The file's bytes are released once decoded, so the peak is the text plus
    the parsed objects (see the module docstring).

    Raises:
        ``error``: the file breaks the policy or is not strict JSON (the
            message names the file).
    """
    document = read_json_text(path, kind, error=error)
    try:
        return document.parse()
    except CanonicalFormError as exc:
        if issubclass(error, CanonicalFormError):
            raise
        raise _fail(error, str(exc)) from None


def parse_json(data: bytes | str, *, where: str, max_values: int | None = None) -> Any:
    """Parse JSON text strictly; the policy's rules are in the module docstring.

    Args:
        data: UTF-8 bytes or text.
        where: names the source (a path or a label) for error messages.
        max_values: the most values the document may hold, or None.

    Raises:
        CanonicalFormError: naming ``where`` and what is wrong.
    """
    return _loads(*_prepare(data, where, max_values))


def _prepare(data: bytes | bytearray | memoryview | str, where: str, max_values: int | None) -> tuple[str, str, bool]:
    """Check the shape of ``data``, decode it as strict UTF-8; tell whether numbers need exact checks."""
    if isinstance(data, str):
        try:
            raw = data.encode("utf-8")
        except UnicodeEncodeError:
            raise CanonicalFormError(f"{where}: text holds a lone surrogate (not valid Unicode text)") from None
    else:
        raw = bytes(data)
    if raw.startswith(b"\xef\xbb\xbf"):
        raise CanonicalFormError(f"{where}: not valid JSON: the text starts with a byte-order mark")
    check_json_shape(raw, where=where, max_values=max_values)
    exact = _may_hold_large_numbers(raw)
    if isinstance(data, str):
        return data, where, exact
    try:
        return raw.decode("utf-8"), where, exact
    except UnicodeDecodeError as exc:
        raise CanonicalFormError(f"{where}: not valid UTF-8 (byte {exc.start} of the text)") from None


def _may_hold_large_numbers(raw: bytes) -> bool:
    """False only when no number in ``raw`` can be out of range (so the parser's C fast path is exact).

    A JSON number starts after a separator (space, ``[``, ``,``, ``:``) or a
    minus sign. After mapping its characters to classes (digits and ``+`` to
    ``D``, ``e``/``E`` to ``e``, separators and ``-`` to a space, anything
    that can occur in a word to ``w``; ``.`` stays), an integer beyond
    ``2**64 - 1`` shows as a space and 20 ``D``; a float that overflows has
    at least 309 digits before its point (20 ``D`` again) or an exponent of
    three characters or more (a space, ``D``, then ``D`` or ``.``, ``e`` and
    three ``D``). Hex digests and words never start with a space, so they do
    not match; free text that does only costs the slower exact parse.
    """
    head = raw.lstrip(b" \t\r\n")[:1]
    if head in b"-0123456789":  # a bare number (or nothing): tiny, check it exactly
        return True
    classes = raw.translate(_NUMBER_CLASSES)
    return classes.find(_LONG_NUMBER) >= 0 or _BIG_EXPONENT_RE.search(classes) is not None


def _loads(text: str, where: str, exact: bool) -> Any:
    try:
        return _decoder(where, exact).decode(text)
    except CanonicalFormError:
        raise
    except (ValueError, RecursionError) as exc:  # RecursionError cannot pass the shape check; kept for safety
        raise CanonicalFormError(f"{where}: not valid JSON: {exc}") from None


def _decoder(where: str, exact: bool) -> json.JSONDecoder:
    """The strict decoder; with ``exact``, every number is checked for range (otherwise C-speed parsing)."""

    def no_constants(name: str) -> Any:
        raise CanonicalFormError(f"{where}: JSON constant {name} is not allowed")

    def unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)
        if len(out) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    raise CanonicalFormError(f"{where}: duplicate key {key!r}")
                seen.add(key)
        return out

    def bounded_int(token: str) -> int:
        # The length test comes first: converting a long digit string costs quadratic time.
        if len(token) <= 21:
            value = int(token)
            if -MAX_JSON_INT <= value <= MAX_JSON_INT:
                return value
        raise CanonicalFormError(f"{where}: integer {_clip(token)} is out of range (at most 2**64 - 1 in magnitude)")

    def finite_float(token: str) -> float:
        value = float(token)
        if math.isfinite(value):
            return value
        raise CanonicalFormError(f"{where}: number {_clip(token)} is out of range (not a finite double)")

    return json.JSONDecoder(parse_constant=no_constants, object_pairs_hook=unique_pairs,
                            parse_int=bounded_int if exact else int, parse_float=finite_float if exact else float)


def _clip(text: str) -> str:
    return text if len(text) <= 24 else f"{text[:12]}...{text[-6:]} ({len(text)} characters)"


def check_json_shape(data: bytes | str, *, where: str, max_depth: int = MAX_JSON_DEPTH,
                     max_values: int | None = None) -> None:
    """Refuse JSON text that nests deeper than ``max_depth``, holds more than ``max_values`` values,
    or escapes a lone surrogate.

    Runs over the raw text before parsing, so a nesting bomb never reaches
    the (recursive) parser and a value bomb never allocates its objects.
    Every step is a C-level bytes operation:

    1. escaped backslashes, then escaped quotes, are deleted, so every quote
       left opens or closes a string (a ``\\u`` left is now a real escape:
       lone surrogates are looked for here);
    2. everything but brackets, commas and quotes is deleted, leaving a
       skeleton;
    3. string contents are deleted from the skeleton (deleting two adjacent
       quotes never moves a character into or out of a string);
    4. the values are counted from above: every value (an object's keys
       too) follows a comma, a colon or an opening bracket, or is the whole
       document; so the count is those plus one (an object costs its bracket
       as well, which is fair: it is the costliest value to build);
    5. each pass then deletes the innermost ``[]`` and ``{}`` pairs (marked
       first, so a pair uncovered in a pass waits for the next): the number
       of passes is the nesting depth, and each opener left unmatched
       counts one level more.

    Malformed text is left to the parser, which names the error.
    """
    if isinstance(data, str):
        try:
            raw = data.encode("utf-8")
        except UnicodeEncodeError:
            raise CanonicalFormError(f"{where}: text holds a lone surrogate (not valid Unicode text)") from None
    else:
        raw = bytes(data)
    opened = raw.count(b"[") + raw.count(b"{")
    few_values = max_values is None or opened + raw.count(b",") + raw.count(b":") + 1 <= max_values
    if opened <= max_depth and few_values and b"\\u" not in raw:
        return
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"")
        if b"\\u" in raw and _SURROGATE_RE.search(raw) and _LONE_SURROGATE_RE.search(raw):
            raise CanonicalFormError(f"{where}: JSON escapes a lone surrogate (not valid Unicode text)")
        raw = raw.replace(b'\\"', b"")
    if opened <= max_depth and few_values:
        return
    skeleton = raw.translate(None, _NOT_SKELETON).replace(b'""', b"")
    del raw
    if b'"' in skeleton:
        skeleton = _STRING_RE.sub(b"", skeleton)
    # An upper bound on the values (keys included): each is preceded by a
    # comma, a colon or an opening bracket, or is the document itself.
    separators = skeleton.count(b",") + skeleton.count(b":")
    skeleton = skeleton.translate(None, b",:")
    values = 1 + separators + skeleton.count(b"[") + skeleton.count(b"{")
    depth = 0
    while skeleton:
        inner = skeleton.replace(b"[]", b"\0").replace(b"{}", b"\0")
        if inner == skeleton:
            break  # no pair left: what remains is unbalanced (the parser names that)
        skeleton = inner.replace(b"\0", b"")
        depth += 1
        if depth > max_depth:
            break
    # Unmatched openers still nest: the parser would descend into each of them.
    if depth + skeleton.count(b"[") + skeleton.count(b"{") > max_depth:
        raise CanonicalFormError(f"{where}: JSON nests deeper than {max_depth} levels")
    if max_values is not None and values > max_values:
        raise CanonicalFormError(f"{where}: JSON holds {values} values, more than the cap of {max_values}")


def check_json_depth(data: bytes | str, *, where: str, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Refuse JSON text nested deeper than ``max_depth`` (:func:`check_json_shape` without a value cap)."""
    check_json_shape(data, where=where, max_depth=max_depth)


def leading_value_count(raw: bytes) -> tuple[int, bool]:
    """Count the values of the array or object ``raw`` starts with; tell whether it closes within ``raw``.

    A reader that parses one value of a larger text (an episode of a result
    artifact) uses this to refuse a value bomb before the parser builds it.
    Values are counted as :func:`check_json_shape` counts a document's (the
    value itself, its keys and every value inside, an array or object once
    more for its bracket), but only up to the bracket that closes the first
    value, so the text after it (read ahead) does not count. ``raw`` may stop
    anywhere: a string left open at its end, and what follows it, are not
    counted, and the count is then that of the part given.

    Brackets are matched by nesting, not by kind (``[}`` is the parser's to
    refuse). The work is C-level bytes operations on chunks of the skeleton,
    and a Python walk over at most the one chunk in which the value closes
    (or one that nests too deep to reduce).
    """
    if raw[:1] not in (b"[", b"{"):
        return 1, True
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    skeleton = raw.translate(_GENERIC_BRACKETS, _NOT_SKELETON).replace(b'""', b"")
    del raw
    if b'"' in skeleton:
        skeleton = _STRING_RE.sub(b"", skeleton)
        open_string = skeleton.find(b'"')
        if open_string >= 0:
            skeleton = skeleton[:open_string]
    count, depth = 2, 1  # the value (1) and its opening bracket (1), as check_json_shape counts a document
    for start in range(1, len(skeleton), _CHUNK):
        chunk = skeleton[start:start + _CHUNK]
        brackets = chunk.translate(None, b",:")
        reduced = brackets
        for _ in range(MAX_JSON_DEPTH + 2):
            inner = reduced.replace(b"[]", b"")
            if inner == reduced:
                break
            reduced = inner
        closers = len(reduced) - len(reduced.lstrip(b"]"))
        if depth - closers <= 0 or b"[]" in reduced:
            # The value may close in this chunk (or the chunk nests too deep to reduce): walk it.
            for c in chunk:
                if c == _CLOSE:
                    depth -= 1
                    if depth == 0:
                        return count, True
                    continue
                count += 1  # an opening bracket, a comma or a colon
                depth += c == _OPEN
            continue
        count += len(chunk) - len(brackets) + brackets.count(b"[")
        depth += len(reduced) - 2 * closers
    return count, False


_STRING_RE = re.compile(rb'"[^"]*"')
_NUMBER_CLASSES = bytes(
    ord("D") if chr(b) in "0123456789+" else ord(".") if b == ord(".") else ord("e") if chr(b) in "eE"
    else ord(" ") if chr(b) in " \t\r\n[]{},:-" else ord("w")
    for b in range(256)
)
_LONG_NUMBER = b" " + b"D" * 20
_BIG_EXPONENT_RE = re.compile(rb" D[D.]*eDDD")
_NOT_SKELETON = bytes(b for b in range(256) if b not in b'[]{}",:')
_GENERIC_BRACKETS = bytes.maketrans(b"{}", b"[]")
_OPEN, _CLOSE = ord("["), ord("]")
_CHUNK = 1 << 12
"""Skeleton bytes :func:`leading_value_count` reduces at a time (and walks in Python at most once)."""
_SURROGATE_RE = re.compile(rb"\\u[dD][89a-fA-F]")
_HIGH = rb"\\u[dD][89abAB][0-9a-fA-F]{2}"
_LOW = rb"\\u[dD][c-fC-F][0-9a-fA-F]{2}"
_LONE_SURROGATE_RE = re.compile(rb"(?:" + _HIGH + rb"(?!" + _LOW + rb"))|(?:(?<!" + _HIGH + rb")" + _LOW + rb")")


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
    "AGENT_REPLY", "GiB", "KiB", "MANIFEST", "MAX_JSON_DEPTH", "MAX_JSON_INT", "MANIFEST", "MiB", "RECORD",
    "RESULT", "SCENARIO", "SMALL_JSON", "STATISTICS", "SUITE", "InputKind", "check_json_depth",
    "JsonText", "check_json_shape", "describe_path", "leading_value_count", "load_json", "open_input", "parse_json",
    "read_input", "read_json_text",
]
