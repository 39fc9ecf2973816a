"""The JSON text of a result artifact, read as a stream: one top-level member or episode at a time.

A result artifact can be far larger than memory allows to parse at once, so
this module reads its text in blocks and parses the top-level object member
by member, and the ``episodes`` array element by element, with the same
strict parser every reader uses (no duplicate keys, no NaN or infinity,
nesting capped). Only the element being parsed, and the header members, are
held at any time.

What cannot be a result is refused as soon as it is met, without reading
further: a document whose first character is not ``{``, and a top-level key
that is not a key of a result or is repeated. Every value is capped as the
input policy caps the files other readers read: the embedded manifest as a
manifest file, each episode as a run record (plus its metrics), every other
top-level value as a small JSON document, in characters and in values. The
values of an array or object are counted before the parser builds it, so a
value bomb costs its text, not its objects. An integer too long for Python
to convert (over 4,300 digits) goes to the exact parser, which measures a
number's length before converting it and refuses it in the policy's words.
Memory is therefore bounded for any input by the caps of the largest value,
and time by the bytes read.

Otherwise the verdict on malformed text is the one the whole-document parse
under the input policy (:func:`emberbench.io.canonical.parse_json_strict`)
gives, message for message:

* the text must be UTF-8 without a byte-order mark; a mark is refused first,
  and an undecodable byte anywhere in the file is reported (by its byte
  offset) before a syntax error found earlier, as the whole-document parse
  decodes everything first: after a syntax error the rest of the file is
  still decoded, and not kept;
* the positions in "Expecting ',' delimiter: line 1 column 52 (char 51)" are
  those of the whole document, not of the block being parsed;
* nesting deeper than 64 levels is reported as such, also where the C parser
  would give up first, and openers left unclosed at a syntax error count;
* integers beyond 2**64 - 1 and numbers beyond a double are refused with the
  policy's words, naming the file.

Two more things differ from parsing the whole text, both only for input that
is refused anyway: a nesting bomb that lies after the value holding the first
syntax or encoding error is not looked for (the first error is reported), and
a lone surrogate escape is found per value rather than before everything
else. A header member nobody reads is checked without building its value.

:class:`ArtifactWalker` also tracks whether the text is exactly the canonical
JSON of what it holds, except for the episode elements themselves, whose
canonical form the caller checks from the parts it parses anyway.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO

from ..io.canonical import canonical_json
from ..errors import CanonicalFormError, ResultError
from ..io.input_policy import (
    MANIFEST,
    MAX_JSON_DEPTH,
    MAX_JSON_INT,
    RECORD,
    SMALL_JSON,
    MiB,
    check_json_depth,
    leading_value_count,
)
from .header import RESULT_KEYS

BLOCK_BYTES = 1 << 20
"""Bytes read from the file at a time."""
TRUNCATION_MARGIN = 32
"""A parse error this close to the end of the text read so far may just mean the value goes on."""
COUNT_WINDOW = 1 << 16
"""Characters of a value first measured exactly (then four times as many, and so on)."""
SKIM_CHARS = 1 << 18
"""Text of episodes nobody reads that is parsed at once (see :attr:`ArtifactWalker.skim`)."""


@dataclass(frozen=True, slots=True)
class ValueCap:
    """The most characters and values one JSON value of a kind may hold (the input policy's caps)."""

    chars: int
    values: int
    what: str = "a single JSON value"


MANIFEST_CAP = ValueCap(MANIFEST.max_bytes, MANIFEST.max_values or 1)
"""The embedded manifest: as a manifest file."""
EPISODE_CAP = ValueCap(RECORD.max_bytes + MiB, (RECORD.max_values or 1) + 100_000)
"""One episode: a run record (as a record file) plus its metrics and manifest entry."""
HEADER_CAP = ValueCap(SMALL_JSON.max_bytes, SMALL_JSON.max_values or 1)
"""Every other top-level value (ids, versions, digests)."""
KEY_CAP = ValueCap(64, 1, "a top-level key")
"""A top-level key (the longest key of a result has 24 characters)."""


def _cap_of(key: str) -> ValueCap:
    """The cap on the value of top-level member ``key`` (for ``episodes``: on each element)."""
    return MANIFEST_CAP if key == "manifest" else EPISODE_CAP if key == "episodes" else HEADER_CAP

DISCARDED = object()
"""Stands in the header for a member whose value was checked but not kept."""
KNOWN = object()
"""Stands in the header for a member whose text was exactly a :class:`KnownText`."""


@dataclass(frozen=True, slots=True)
class KnownText:
    """The canonical text of a header value parsed before, by length and SHA-256 (not kept itself)."""

    length: int
    sha256: bytes

    @classmethod
    def of(cls, value: Any) -> KnownText | None:
        """The known text of ``value``, or None unless its JSON ends by itself (a string, object or array)."""
        if not isinstance(value, str | dict | list):
            return None
        text = canonical_json(value)
        return cls(len(text), _sha256_text(text))

    def matches(self, text: str) -> bool:
        """Whether ``text`` (of this length) is the known text."""
        return len(text) == self.length and text.isascii() and _sha256_text(text) == self.sha256


def _canonical_pieces(value: Any) -> Iterator[str]:
    """The canonical JSON of ``value`` in pieces: objects by member, long arrays by element."""
    if isinstance(value, dict):
        yield "{"
        for k, (key, item) in enumerate(sorted(value.items())):
            yield ("," if k else "") + canonical_json(key) + ":"
            yield from _canonical_pieces(item)
        yield "}"
    elif isinstance(value, list) and len(value) > 64:
        yield "["
        for k, item in enumerate(value):
            yield ("," if k else "") + canonical_json(item)
        yield "]"
    else:
        yield canonical_json(value)


def _sha256_text(text: str, start: int = 0, stop: int | None = None) -> bytes:
    """SHA-256 of ``text[start:stop]`` as ASCII, encoded a piece at a time (no copy of the whole)."""
    stop = len(text) if stop is None else stop
    sha = hashlib.sha256()
    for k in range(start, stop, 1 << 16):
        sha.update(text[k:min(k + (1 << 16), stop)].encode("ascii"))
    return sha.digest()

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_WS = " \t\n\r"


DEPTH_BY_OBJECT = 1 << 20
"""Values longer than this many characters have their nesting measured on the parsed value."""


def _depth(value: Any, limit: int) -> int:
    """Nesting depth of parsed JSON (an array or object is one level), stopping once past ``limit``."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            if deepest > limit:
                return deepest
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item)
                         if isinstance(child, dict | list))
    return deepest


class _Prefixed(io.RawIOBase):
    """``prefix`` followed by the rest of ``handle``, read lazily (a header read from the tail)."""

    def __init__(self, prefix: bytes, handle: BinaryIO) -> None:
        self._prefix, self._handle = prefix, handle

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        head, self._prefix = self._prefix, b""
        if size is not None and 0 <= size <= len(head):
            self._prefix = head[size:]
            return head[:size]
        rest = self._handle.read(-1 if size is None or size < 0 else size - len(head))
        return head + rest


def prefixed(prefix: bytes, handle: BinaryIO) -> BinaryIO:
    """A handle reading ``prefix`` and then ``handle`` from its current position."""
    return _Prefixed(prefix, handle)  # type: ignore[return-value]


class _Text:
    """The decoded text of a binary stream, a window at a time, with document positions for messages.

    ``buf`` holds the text from document character ``start`` on; callers drop
    what they no longer need with :meth:`drop`. Raw bytes go into ``hasher``
    as they are read, so the caller gets the digest of the whole file.
    """

    def __init__(self, handle: BinaryIO, where: str, hasher: Any) -> None:
        self._handle, self.where, self._hasher = handle, where, hasher
        self._head = handle.read(4)
        # Strict UTF-8 only, as the input policy reads JSON; a byte-order mark is refused first.
        self.encoding = "utf-8"
        self.bom = self._head.startswith(codecs.BOM_UTF8)
        self._decoder = codecs.getincrementaldecoder(self.encoding)("strict")
        self._fed = 0
        self.buf = ""
        self.start = 0
        self._lines = 0
        self._last_newline = -1
        self.eof = False
        self.decode_error: str | None = None

    def more(self) -> bool:
        """Read and decode one more block; False when no more text can come."""
        if self.eof:
            return False
        if self._head is not None:
            block, self._head = self._head + self._handle.read(BLOCK_BYTES), None
        else:
            block = self._handle.read(BLOCK_BYTES)
        if self._hasher is not None and block:
            self._hasher.update(block)
        before = self._fed
        self._fed += len(block)
        state = self._decoder.getstate()
        try:
            text = self._decoder.decode(block, final=not block)
        except UnicodeDecodeError as exc:
            text = self._decode_failed(exc, block, before, state)
        if not block:
            self.eof = True
        buf, self.buf = self.buf, ""
        buf += text  # the only reference: extended in place, not copied
        self.buf = buf
        return bool(text) or not self.eof

    def _decode_failed(self, exc: UnicodeDecodeError, block: bytes, before: int, state: Any) -> str:
        """Record the error as the whole-file decode would word it; return the text before it."""
        pending = len(state[0]) if isinstance(state[0], bytes | bytearray) else 0
        # The decoder reports positions in (pending bytes + block).
        start = before - pending + exc.start
        self.decode_error = f"{self.where}: not valid UTF-8 (byte {start} of the text)"
        self.eof = True
        cut = max(0, exc.start - pending)
        prefix = codecs.getincrementaldecoder(self.encoding)("strict")
        prefix.setstate(state)
        try:
            return prefix.decode(block[:cut])
        except UnicodeDecodeError:  # pragma: no cover - the prefix decoded once already
            return ""

    def ensure(self, i: int) -> bool:
        """Make ``buf[i]`` available if the text goes that far."""
        while i >= len(self.buf):
            if not self.more():
                return False
        return True

    def drop(self, upto: int) -> None:
        """Forget ``buf[:upto]`` (document positions stay right)."""
        if upto <= 0:
            return
        gone = self.buf[:upto]
        newlines = gone.count("\n")
        if newlines:
            self._lines += newlines
            self._last_newline = self.start + gone.rfind("\n")
        self.start += upto
        self.buf = self.buf[upto:]

    def position(self, i: int) -> str:
        """``line L column C (char P)`` of ``buf[i]``, as ``json.JSONDecodeError`` words it."""
        k = self.buf.rfind("\n", 0, i)
        line = self._lines + self.buf.count("\n", 0, i) + 1
        column = i - k if k >= 0 else self.start + i - self._last_newline
        return f"line {line} column {column} (char {self.start + i})"

    def drain(self) -> None:
        """Decode the rest of the file without keeping it (to find an undecodable byte)."""
        while not self.eof:
            self.buf = ""
            self.more()


def _clip(text: str) -> str:
    return text if len(text) <= 24 else f"{text[:12]}...{text[-6:]} ({len(text)} characters)"


def _decoders(where: str, *, exact: bool = False) -> tuple[json.JSONDecoder, json.JSONDecoder]:
    """The strict parser (hooks worded as ``parse_json_strict`` words them), for episodes and for header values.

    Header values (the manifest) repeat the same strings once per episode, so
    the second decoder shares equal strings. With ``exact``, every integer is
    checked for range (slower; used for a value whose text holds a long
    digit run). The hooks are closures, not methods, so a walker holds no
    reference cycle and its buffers go as soon as it does.
    """
    strings: dict[str, str] = {}

    def no_constant(name: str) -> Any:
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

    def shared_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        return unique_pairs([(k, strings.setdefault(v, v) if type(v) is str else v) for k, v in pairs])

    def finite_float(text: str) -> float:
        value = float(text)
        if not math.isfinite(value):
            raise CanonicalFormError(f"{where}: number {_clip(text)} is out of range (not a finite double)")
        return value

    def bounded_int(text: str) -> int:
        # The length test comes first: converting a long digit string costs quadratic time.
        if len(text) <= 21:
            value = int(text)
            if -MAX_JSON_INT <= value <= MAX_JSON_INT:
                return value
        raise CanonicalFormError(f"{where}: integer {_clip(text)} is out of range (at most 2**64 - 1 in magnitude)")

    parse_int = bounded_int if exact else None
    return (json.JSONDecoder(parse_constant=no_constant, object_pairs_hook=unique_pairs, parse_float=finite_float,
                             parse_int=parse_int),
            json.JSONDecoder(parse_constant=no_constant, object_pairs_hook=shared_pairs, parse_float=finite_float,
                             parse_int=parse_int))


def _refuse(text: str) -> Any:
    raise ValueError(f"not allowed: {text}")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"not finite: {text}")
    return value


_KEYLESS = json.JSONDecoder(parse_constant=_refuse, parse_float=_finite)
"""For text whose objects have no keys; any failure sends it to the strict parser, which words it."""
_PLAIN_STRING = re.compile(r'[^"\\\\\x00-\x1f]*')
"""Characters that stand for themselves inside a JSON string."""
_SIMPLE_ESCAPES = frozenset('"\\\\/bfnrt')
_LONG_DIGITS = re.compile(r"\d{20}")
"""A digit run this long may be an integer beyond 2**64 - 1: such a value is parsed again with range checks."""


class ArtifactWalker:
    """Parse a result artifact's text in one pass, yielding the ``episodes`` elements.

    Iterate :meth:`episodes`; when it is exhausted the whole document has
    been parsed and these attributes are set:

    Attributes:
        header: every top-level member except ``episodes``, in file order.
        episodes_kind: ``"array"``, ``"other"`` (then ``episodes_value`` holds
            it) or None when the key is absent.
        canonical: the text is the canonical JSON of the document plus one
            newline, as far as the walker can tell (the caller compares each
            episode element with its canonical form; see :meth:`mark_not_canonical`).
        digest: SHA-256 of every byte of the file (valid once exhausted).
        fingerprints: with ``fingerprint=True``, the :class:`KnownText` of
            each header member (string, object or array) whose text is
            canonical, so a later walk can match it without parsing it.
        skim: set by the caller when it needs no more episodes (the verdict
            can only change by a JSON error): the rest of the list is then
            parsed many elements at a time and not yielded, with the same
            verdicts, and ``canonical`` no longer tracks the episodes.

    Raises:
        ResultError: from the iteration, for text that is not valid JSON, is
            not an object, nests too deep or holds an out-of-range number.
    """

    def __init__(self, handle: BinaryIO, where: str, *, keys: frozenset[str] = RESULT_KEYS,
                 keep: frozenset[str] | None = None, known: Mapping[str, KnownText] | None = None,
                 fingerprint: bool = False) -> None:
        self.where = where
        self._keys = keys
        self.fingerprints: dict[str, KnownText] | None = {} if fingerprint else None
        self._keep = keep
        # Header members already parsed elsewhere (from the file's tail): a member whose text is
        # exactly that known text is not parsed again; the header then holds KNOWN for it.
        self._known = dict(known or {})
        self._hasher = hashlib.sha256()
        self._t = _Text(handle, where, self._hasher)
        self._decoder, self._header_decoder = _decoders(where)
        self._exact: tuple[json.JSONDecoder, json.JSONDecoder] | None = None
        self.header: dict[str, Any] = {}
        self.episodes_kind: str | None = None
        self.episodes_value: Any = None
        self.canonical = True
        self.digest = ""
        # The text from some value's start to document position _counted_end holds at most _counted values.
        self._counted, self._counted_end = 0, -1
        self.skim = False
        self._skim_after = 0

    def _check_member(self, key: str, value: Any, i: int, end: int) -> None:
        """Is the member's text its canonical JSON? Keep a fingerprint of it when asked.

        The canonical text is made and compared a piece at a time, so a large
        member (the manifest) is never serialized whole.
        """
        buf, pos, sha = self._t.buf, i, hashlib.sha256()
        for piece in _canonical_pieces(value):
            if not buf.startswith(piece, pos):
                self.canonical = False
                return
            pos += len(piece)
            sha.update(piece.encode("ascii"))
        if pos != end:
            self.canonical = False
        elif self.fingerprints is not None and isinstance(value, str | dict | list):
            self.fingerprints[key] = KnownText(end - i, sha.digest())

    def mark_not_canonical(self) -> None:
        """The caller found an episode element that is not in canonical form."""
        self.canonical = False

    # -- failures
    def _fail(self, message: str) -> ResultError:
        """A parse failure; an undecodable byte later in the file takes precedence, as in a whole-file parse."""
        if self._t.decode_error is None:
            self._t.drain()
        return ResultError(self._t.decode_error or message)

    def _syntax(self, msg: str, i: int) -> ResultError:
        return self._fail(f"{self.where}: not valid JSON: {msg}: {self._t.position(i)}")

    def _too_deep(self) -> ResultError:
        return ResultError(f"{self.where}: JSON nests deeper than {MAX_JSON_DEPTH} levels")

    # -- lexing helpers over the window
    def _skip(self, i: int) -> int:
        t = self._t
        while True:
            i = _WHITESPACE.match(t.buf, i).end()
            if i < len(t.buf) or not t.more():
                return i

    def _peek(self, i: int) -> str:
        return self._t.buf[i] if self._t.ensure(i) else ""

    def _too_long(self, i: int, cap: ValueCap) -> ResultError:
        return ResultError(f"{self.where}: {cap.what} at char {self._t.start + i} is longer than "
                           f"{cap.chars} characters")

    def _grow(self, i: int, cap: ValueCap) -> bool:
        """Read about as much text again as is held from ``i`` on (within ``cap``); False when none can come."""
        t = self._t
        have = len(t.buf) - i
        if have > cap.chars:
            raise self._too_long(i, cap)
        before = len(t.buf)
        while len(t.buf) - i < min(2 * have + 1, cap.chars + TRUNCATION_MARGIN + 1) and t.more():
            pass
        return len(t.buf) > before

    def _count_values(self, i: int, cap: ValueCap) -> None:
        """Refuse the array or object at ``buf[i]`` if it holds more than ``cap.values`` values, before it is parsed.

        Text of ``n`` characters holds at most ``n + 1`` values, so a short
        text is parsed at once. Otherwise the values in all the text held from
        ``i`` are counted first (cheap, with no copy; the count then holds for
        every later value until more text is read), and only if that is too
        many is the value's own text measured exactly, so text read past its
        end never counts against it.
        """
        t = self._t
        rest = len(t.buf) - i
        if rest < cap.values or t.buf[i] not in "[{":
            return
        end = t.start + len(t.buf)
        if self._counted_end == end and self._counted <= cap.values:
            return
        buf = t.buf
        bound = buf.count("[", i) + buf.count("{", i) + buf.count(",", i) + buf.count(":", i) + 1
        if bound <= cap.values:
            self._counted, self._counted_end = bound, end
            return
        window = COUNT_WINDOW
        while True:
            count, closed = leading_value_count(buf[i:i + window].encode())
            if count > cap.values:
                raise ResultError(f"{self.where}: a single JSON value at char {t.start + i} holds more than "
                                  f"{cap.values} values")
            if closed or window >= rest:
                return
            window *= 4

    def _value(self, i: int, outer: int, *, cap: ValueCap, header: bool = False) -> tuple[Any, int]:
        """Parse the value at ``buf[i]`` (nested ``outer`` levels deep, within ``cap``); return it and its end."""
        t = self._t
        decoder = self._header_decoder if header else self._decoder
        while True:
            self._count_values(i, cap)
            try:
                value, end = decoder.raw_decode(t.buf, i)
            except json.JSONDecodeError as exc:
                cut = exc.pos >= len(t.buf) - TRUNCATION_MARGIN or exc.msg.startswith("Unterminated string")
                if cut and not t.eof and self._grow(i, cap):
                    continue
                # The whole-text parse measures nesting before it parses: openers left open count.
                try:
                    check_json_depth(t.buf[i:], where=self.where, max_depth=MAX_JSON_DEPTH - outer)
                except CanonicalFormError:
                    raise self._too_deep() from None
                raise self._syntax(exc.msg, exc.pos) from None
            except CanonicalFormError as exc:
                raise self._fail(str(exc)) from None
            except RecursionError:
                raise self._too_deep() from None
            except ValueError:
                # An integer too long for Python to convert (over 4,300 digits): the exact parser measures a
                # number's length before converting it, and refuses it in the policy's words, once the
                # whole number is held (it may go on in the next block).
                if t.buf[-1:].isdigit() and not t.eof and self._grow(i, cap):
                    continue
                self._exact_value(i, header)
                raise  # pragma: no cover - the exact parse raises first
            if end - i > cap.chars:
                raise self._too_long(i, cap)
            if end >= len(t.buf) and not t.eof and self._grow(i, cap):
                continue  # a number or literal may go on in the next block
            if _LONG_DIGITS.search(t.buf, i, end):
                value = self._exact_value(i, header)
            break
        limit = MAX_JSON_DEPTH - outer
        if header or end - i > DEPTH_BY_OBJECT:
            # A header value (the manifest) or a large one: its parse is nested exactly as its
            # text, so walk the parsed value rather than copying the text for the text-level check.
            if _depth(value, limit) > limit:
                raise self._too_deep()
        else:
            try:
                check_json_depth(t.buf[i:end], where=self.where, max_depth=limit)
            except CanonicalFormError as exc:
                if "surrogate" in str(exc):
                    raise ResultError(str(exc)) from None
                raise self._too_deep() from None
        return value, end

    def _skip_string(self, i: int, cap: ValueCap) -> int:
        """Check the string whose quote is ``buf[i]`` without building its value; return the index after it.

        Its text is scanned in place (a string the caller does not keep, as
        large as the file, then costs its text once, not twice); anything
        but plain characters and simple escapes (a ``\\u`` escape, a control
        character, the end of the text) is left to the parser, which reads it
        or words the error exactly.
        """
        t = self._t
        j = i + 1
        while True:
            j = _PLAIN_STRING.match(t.buf, j).end()
            if j + 1 < len(t.buf):
                c = t.buf[j]
                if c == '"':
                    return j + 1
                if c == "\\" and t.buf[j + 1] in _SIMPLE_ESCAPES:
                    j += 2
                    continue
                return self._string(i, cap)[1]
            if j - i > cap.chars:
                raise self._too_long(i, cap)
            if not t.more():
                return self._string(i, cap)[1]

    def _exact_value(self, i: int, header: bool) -> Any:
        """Parse the value at ``buf[i]`` again, checking every integer's range."""
        if self._exact is None:
            self._exact = _decoders(self.where, exact=True)
        try:
            return self._exact[1 if header else 0].raw_decode(self._t.buf, i)[0]
        except CanonicalFormError as exc:
            raise self._fail(str(exc)) from None

    def _string(self, i: int, cap: ValueCap) -> tuple[str, int]:
        """Parse the string whose opening quote is ``buf[i]`` (at most ``cap.chars`` long)."""
        t = self._t
        while True:
            try:
                value, end = json.decoder.scanstring(t.buf, i + 1, True)
            except json.JSONDecodeError as exc:
                cut = exc.pos >= len(t.buf) - TRUNCATION_MARGIN or exc.msg.startswith("Unterminated string")
                if cut and not t.eof and self._grow(i, cap):
                    continue
                raise self._syntax(exc.msg, exc.pos) from None
            if end - i > cap.chars:
                raise self._too_long(i, cap)
            return value, end

    def _key(self, i: int) -> tuple[str, int]:
        """Parse the top-level key whose opening quote is ``buf[i]``, reading no further than :data:`KEY_CAP` allows.

        The verdict depends only on the text within the cap (never on where
        a block ends): a key that does not close within it is too long.
        """
        t = self._t
        limit = i + KEY_CAP.chars
        t.ensure(limit)
        try:
            key, end = json.decoder.scanstring(t.buf, i + 1, True)
        except json.JSONDecodeError as exc:
            if exc.pos >= limit or (exc.msg.startswith("Unterminated string") and len(t.buf) > limit):
                raise self._too_long(i, KEY_CAP) from None
            raise self._syntax(exc.msg, exc.pos) from None
        if end > limit:
            raise self._too_long(i, KEY_CAP)
        return key, end

    # -- the document
    def episodes(self) -> Iterator[tuple[int, Any, str]]:
        """Yield ``(position, element, element text)`` for each ``episodes`` element, parsing everything.

        What cannot be a result is refused where it is met, before the rest
        of the file is read: a first character other than ``{``, and a
        top-level key that is unknown or repeated.
        """
        t = self._t
        if t.bom:
            raise ResultError(f"{self.where}: not valid JSON: the text starts with a byte-order mark")
        i = self._skip(0)
        if i > 0:
            self.canonical = False
        first = self._peek(i)
        if first != "{":
            if not first:
                raise self._syntax("Expecting value", i)
            raise ResultError(f"{self.where}: a result artifact must be a JSON object")
        i += 1
        seen: set[str] = set()
        last_key: str | None = None
        j = self._skip(i)
        self.canonical &= j == i
        i = j
        if self._peek(i) == "}":
            i += 1
        else:
            while True:
                if self._peek(i) != '"':
                    raise self._syntax("Expecting property name enclosed in double quotes", i)
                key, end = self._key(i)
                if key not in self._keys:
                    raise ResultError(f"{self.where}: unknown top-level key {_clip(key)!r} at char {t.start + i} "
                                      "(not a key of a result artifact)")
                if key in seen:
                    raise ResultError(f"{self.where}: duplicate key {key!r}")
                if canonical_json(key) != t.buf[i:end] or (last_key is not None and key <= last_key):
                    self.canonical = False
                last_key = key
                i = self._skip(end)
                self.canonical &= i == end
                if self._peek(i) != ":":
                    raise self._syntax("Expecting ':' delimiter", i)
                j = self._skip(i + 1)
                self.canonical &= j == i + 1
                i = j
                cap = _cap_of(key)
                wanted = self._keep is None or key in self._keep or key == "episodes"
                if key == "episodes" and self._peek(i) == "[":
                    self.episodes_kind = "array"
                    i = yield from self._array(i, yield_elements=True, cap=cap)
                elif not wanted and self._peek(i) in ('[', '"'):
                    # Not needed (a key the caller does not read): checked, not held.
                    self.canonical = False
                    self.header[key] = DISCARDED
                    if self._peek(i) == '"':
                        i = self._skip_string(i, cap)
                    else:
                        i = yield from self._array(i, yield_elements=False, cap=cap)
                else:
                    value, end = self._member_value(key, i, cap)
                    if key == "episodes":
                        self.episodes_kind, self.episodes_value = "other", value
                    else:
                        self.header[key] = value
                        if self.canonical and value is not KNOWN:
                            self._check_member(key, value, i, end)
                    i = end
                seen.add(key)
                if i > BLOCK_BYTES:
                    t.drop(i)
                    i = 0
                j = self._skip(i)
                self.canonical &= j == i
                i = j
                c = self._peek(i)
                if c == "}":
                    i += 1
                    break
                if c != ",":
                    raise self._syntax("Expecting ',' delimiter", i)
                j = self._skip(i + 1)
                self.canonical &= j == i + 1
                i = j
        self._end(i)

    def _member_value(self, key: str, i: int, cap: ValueCap) -> tuple[Any, int]:
        t = self._t
        if not t.ensure(i):
            raise self._syntax("Expecting value", i)
        known = self._known.get(key)
        if (known is not None and t.ensure(i + known.length - 1) and t.buf.isascii()
                and _sha256_text(t.buf, i, i + known.length) == known.sha256):
            return KNOWN, i + known.length
        return self._value(i, outer=1, header=True, cap=cap)

    def _array(self, i: int, *, yield_elements: bool, cap: ValueCap, outer: int = 1) -> Iterator[tuple[int, Any, str]]:
        """Walk the array whose ``[`` is ``buf[i]``, each element within ``cap``; return the index after ``]``."""
        t = self._t
        i += 1
        j = self._skip(i)
        self.canonical &= j == i
        i = j
        if self._peek(i) == "]":
            return i + 1
        position = 0
        while True:
            if i > BLOCK_BYTES:
                t.drop(i)
                i = 0
            if not t.ensure(i):
                raise self._syntax("Expecting value", i)
            if self.skim and yield_elements:
                j = self._skim(i, outer + 1)
                if j > i:
                    i = j
                    continue
            value, end = self._value(i, outer=outer + 1, cap=cap)
            if yield_elements and not self.skim:
                yield position, value, t.buf[i:end]
            position += 1
            i = self._skip(end)
            self.canonical &= i == end
            c = self._peek(i)
            if c == "]":
                return i + 1
            if c != ",":
                raise self._syntax("Expecting ',' delimiter", i)
            j = self._skip(i + 1)
            self.canonical &= j == i + 1
            i = j

    def _skim(self, i: int, outer: int) -> int:
        """Check the whole episodes that lie in the next :data:`SKIM_CHARS` at once; return where the next begins.

        The text up to the last comma of the window is parsed as one array: it
        parses exactly when the comma ends an element (a cut inside an
        element leaves a bracket or a string open). Anything that would need
        the element-by-element parse to word it (a syntax, range, nesting or
        surrogate problem, a long digit run, a cut inside an element) makes
        this return ``i``; the elements up to that cut are then parsed one by
        one before the next try. Only :data:`SKIM_CHARS` of text is parsed at
        once, which bounds what it can cost.
        """
        t = self._t
        if t.start + i < self._skim_after:
            return i
        cut = t.buf.rfind(",", i, min(len(t.buf), i + SKIM_CHARS))
        if cut <= i:
            return i
        piece = t.buf[i:cut]
        try:
            if _LONG_DIGITS.search(piece):
                raise ValueError("a long digit run: parse element by element")
            check_json_depth(piece, where=self.where, max_depth=MAX_JSON_DEPTH - outer)
            # Without a colon no object has a key, so none can repeat one: the parser builds them in C.
            (self._decoder if ":" in piece else _KEYLESS).decode("[" + piece + "]")
        except (ValueError, RecursionError):  # CanonicalFormError and JSONDecodeError are ValueErrors
            self._skim_after = t.start + cut
            return i
        return self._skip(cut + 1)

    def _end(self, i: int) -> None:
        """After the top-level object: only whitespace may follow; canonical text ends with one newline."""
        t = self._t
        t.drop(i)
        rest = self._skip(0)
        if t.ensure(rest):
            raise self._syntax("Extra data", rest)
        if t.decode_error is not None:
            raise ResultError(t.decode_error)
        self.canonical &= t.buf == "\n"
        self.digest = self._hasher.hexdigest()


__all__ = ["BLOCK_BYTES", "DISCARDED", "EPISODE_CAP", "HEADER_CAP", "KNOWN", "MANIFEST_CAP", "ArtifactWalker",
           "KnownText", "ValueCap", "prefixed"]
