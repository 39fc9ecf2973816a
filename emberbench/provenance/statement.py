"""The signed statement of a run: an in-toto Statement v1 whose predicate is the run's provenance.

The statement (the DSSE payload, canonical JSON) is::

    {"_type": "https://in-toto.io/Statement/v1",
     "subject": [{"name": "results/run-<64 hex>", "digest": {"sha256": <result artifact SHA-256>}}],
     "predicateType": RUN_PROVENANCE_PREDICATE,
     "predicate": {...}}

The subject is the run's complete result artifact, named by its ref and
identified by its SHA-256 (which is also its store key). The predicate
(:class:`Predicate`, type :data:`~emberbench.io.versions.RUN_PROVENANCE_PREDICATE`,
major version 1) holds:

* ``run_info``: the run-info object as it was when the statement was made,
  with ``verification`` set to null (the last verification changes after
  signing by design; everything else of a complete run does not);
* ``simulator_version``: the simulator that played the manifest;
* ``policy_code``: the policy code digest (:mod:`.code_digest`);
* ``invocation``: how the run was started, when the statement is made at
  the end of the run (null when a run is attested afterwards): the command
  line (``command``, secrets removed, see :func:`redact_command`), the
  executor (``local`` or ``ray``), the Ray address joined (null for an
  embedded instance or none) and the machines that ran episodes (``nodes``,
  null when not known: a joined Ray cluster);
* ``attested``: when (``at``), by whom (``user@host``), with which
  EMBERBench, Python and platform the statement was made, and whether at
  the end of the run itself (``end_of_run``).

Parsing follows in-toto's rules for the statement (fields it does not know
are ignored) and is strict for the predicate, whose specification is this
module: unknown or missing predicate fields are refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..io.canonical import canonical_bytes, is_sha256_hex
from ..errors import AttestationError
from ..io.versions import RUN_PROVENANCE_PREDICATE, STATEMENT_TYPE
from .code_digest import RULES, PolicyCode

MAX_STATEMENT_VALUES = 50_000
MAX_COMMAND_WORDS = 512
EXECUTORS = ("local", "ray")
PREDICATE_KEYS = frozenset({"run_info", "simulator_version", "policy_code", "invocation", "attested"})
INVOCATION_KEYS = frozenset({"command", "executor", "ray_address", "nodes"})
ATTESTED_KEYS = frozenset({"at", "by", "emberbench_version", "python_version", "platform", "end_of_run"})
CODE_KEYS = frozenset({"rule", "digest", "files"})
_TIME_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
_USERINFO_RE = re.compile(r"(?<=//)[^/@?#\s]*@")
SECRET_OPTIONS = ("--runtime-env",)
"""Options whose value may hold secrets (environment variables for Ray workers): recorded as ``<redacted>``."""


def _fail(message: str) -> AttestationError:
    return AttestationError(message, check="statement")


def _exact(data: Any, keys: frozenset[str], what: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise _fail(f"{what} must be a JSON object")
    unknown, missing = sorted(set(data) - keys), sorted(keys - set(data))
    if unknown or missing:
        raise _fail(f"{what}: unknown key(s) {unknown}, missing key(s) {missing}")
    return data


def _text(value: Any, what: str, limit: int = 4096) -> str:
    if not isinstance(value, str) or not 1 <= len(value) <= limit or not value.isprintable():
        raise _fail(f"{what} must be 1-{limit} printable characters, got {value!r:.80}")
    return value


def _time(value: Any, what: str) -> str:
    if not isinstance(value, str) or _TIME_RE.fullmatch(value) is None:
        raise _fail(f"{what} must be an ISO 8601 UTC time like 2026-01-31T12:00:00Z, got {value!r:.80}")
    return value


def redact_text(text: str) -> str:
    """``text`` with the ``user:password@`` part of every URL in it removed."""
    return _USERINFO_RE.sub("", text)


def redact_command(argv: list[str]) -> list[str]:
    """A command line fit to be signed and stored: credentials in URLs removed, secret option values hidden.

    ``user:password@`` in any URL (``--store s3://b/p?endpoint=http://u:pw@host``)
    is dropped, and the value of an option in :data:`SECRET_OPTIONS` becomes
    ``<redacted>``; the program is named by its file name only. Control
    characters are escaped (``\\n``), and a word longer than 4096 characters
    or words past the 512th are cut (``...``), so any command line fits.
    """
    out: list[str] = []
    hide_next = False
    for n, word in enumerate(argv):
        if n == 0:
            word = word.rsplit("/", 1)[-1] or word
        elif hide_next:
            word, hide_next = "<redacted>", False
        elif word in SECRET_OPTIONS:
            hide_next = True
        elif word.startswith(tuple(f"{o}=" for o in SECRET_OPTIONS)):
            word = word.split("=", 1)[0] + "=<redacted>"
        word = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                       for c in _USERINFO_RE.sub("", word))
        out.append(word if len(word) <= 4096 else word[:4093] + "...")
    return out if len(out) <= MAX_COMMAND_WORDS else out[:MAX_COMMAND_WORDS - 1] + ["..."]


@dataclass(frozen=True, slots=True)
class Invocation:
    """How a run was started (known only to the process that ran it)."""

    command: tuple[str, ...]
    executor: str
    ray_address: str | None
    nodes: tuple[str, ...] | None

    def __post_init__(self) -> None:
        if not 1 <= len(self.command) <= MAX_COMMAND_WORDS:
            raise _fail(f"invocation.command must have 1-{MAX_COMMAND_WORDS} words")
        for word in self.command:
            if not isinstance(word, str) or len(word) > 4096 or not word.isprintable():
                raise _fail(f"invocation.command words must be at most 4096 printable characters, got {word!r:.80}")
        if self.executor not in EXECUTORS:
            raise _fail(f"invocation.executor must be one of {', '.join(EXECUTORS)}, got {self.executor!r:.40}")
        if self.ray_address is not None:
            _text(self.ray_address, "invocation.ray_address")
        if self.nodes is not None:
            if not 1 <= len(self.nodes) <= 10_000:
                raise _fail("invocation.nodes must list 1-10000 machines, or be null")
            for node in self.nodes:
                _text(node, "invocation.nodes[]", 256)

    def to_dict(self) -> dict[str, Any]:
        return {"command": list(self.command), "executor": self.executor, "ray_address": self.ray_address,
                "nodes": None if self.nodes is None else list(self.nodes)}

    @classmethod
    def from_dict(cls, data: Any) -> Invocation:
        data = _exact(data, INVOCATION_KEYS, "predicate.invocation")
        command, nodes = data["command"], data["nodes"]
        if not isinstance(command, list) or (nodes is not None and not isinstance(nodes, list)):
            raise _fail("predicate.invocation: command must be a list, nodes a list or null")
        return cls(tuple(command), data["executor"], data["ray_address"], None if nodes is None else tuple(nodes))


@dataclass(frozen=True, slots=True)
class Attested:
    """When, by whom and with what the statement was made."""

    at: str
    by: str
    emberbench_version: str
    python_version: str
    platform: str
    end_of_run: bool

    def __post_init__(self) -> None:
        _time(self.at, "attested.at")
        _text(self.by, "attested.by", 512)
        for name in ("emberbench_version", "python_version", "platform"):
            _text(getattr(self, name), f"attested.{name}", 256)
        if not isinstance(self.end_of_run, bool):
            raise _fail("attested.end_of_run must be true or false")

    def to_dict(self) -> dict[str, Any]:
        return {"at": self.at, "by": self.by, "emberbench_version": self.emberbench_version,
                "python_version": self.python_version, "platform": self.platform, "end_of_run": self.end_of_run}

    @classmethod
    def from_dict(cls, data: Any) -> Attested:
        data = _exact(data, ATTESTED_KEYS, "predicate.attested")
        return cls(**data)


def _policy_code(data: Any) -> PolicyCode:
    data = _exact(data, CODE_KEYS, "predicate.policy_code")
    files = data["files"]
    if data["rule"] not in RULES or not is_sha256_hex(data["digest"]) or not isinstance(files, int) \
            or isinstance(files, bool) or files < 1:
        raise _fail(f"predicate.policy_code must have a rule ({', '.join(RULES)}), a SHA-256 digest and a "
                    "positive file count")
    return PolicyCode(data["rule"], data["digest"], files)


@dataclass(frozen=True, slots=True)
class Predicate:
    """The provenance of a run (predicate type :data:`RUN_PROVENANCE_PREDICATE`)."""

    run_info: dict[str, Any]
    simulator_version: str
    policy_code: PolicyCode
    invocation: Invocation | None
    attested: Attested

    def __post_init__(self) -> None:
        info = self.run_info
        if not isinstance(info, dict):
            raise _fail("predicate.run_info must be a JSON object")
        for name in ("run", "model_id", "policy", "manifest_hash", "state"):
            if not isinstance(info.get(name), str):
                raise _fail(f"predicate.run_info has no {name}")
        if not is_sha256_hex(info.get("result")):
            raise _fail("predicate.run_info.result must be the result's SHA-256")
        if info.get("verification") is not None:
            raise _fail("predicate.run_info.verification must be null (verifications come after signing)")
        _text(self.simulator_version, "predicate.simulator_version", 64)

    def to_dict(self) -> dict[str, Any]:
        return {"run_info": self.run_info, "simulator_version": self.simulator_version,
                "policy_code": self.policy_code.to_dict(),
                "invocation": None if self.invocation is None else self.invocation.to_dict(),
                "attested": self.attested.to_dict()}

    @classmethod
    def from_dict(cls, data: Any) -> Predicate:
        data = _exact(data, PREDICATE_KEYS, "predicate")
        invocation = None if data["invocation"] is None else Invocation.from_dict(data["invocation"])
        return cls(data["run_info"], data["simulator_version"], _policy_code(data["policy_code"]), invocation,
                   Attested.from_dict(data["attested"]))


@dataclass(frozen=True, slots=True)
class Statement:
    """A parsed statement: its one subject and its predicate."""

    subject_name: str
    subject_digest: str
    predicate: Predicate

    def to_dict(self) -> dict[str, Any]:
        return {"_type": STATEMENT_TYPE,
                "subject": [{"name": self.subject_name, "digest": {"sha256": self.subject_digest}}],
                "predicateType": RUN_PROVENANCE_PREDICATE, "predicate": self.predicate.to_dict()}

    def to_bytes(self) -> bytes:
        """The payload to sign: canonical JSON."""
        return canonical_bytes(self.to_dict())


def parse_statement(payload: bytes, *, where: str) -> Statement:
    """Parse the signed payload bytes (never re-serialized) as a run statement.

    Raises:
        AttestationError: (check ``statement``) not JSON, another statement
            type or predicate type, not exactly one subject with a SHA-256,
            or a malformed predicate.
    """
    from ..io.input_policy import parse_json

    try:
        document = parse_json(payload, where=f"{where}: statement", max_values=MAX_STATEMENT_VALUES)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    if not isinstance(document, dict):
        raise _fail(f"{where}: the statement must be a JSON object")
    if document.get("_type") != STATEMENT_TYPE:
        raise _fail(f"{where}: statement _type {document.get('_type')!r:.80} is not supported "
                    f"(this code reads {STATEMENT_TYPE})")
    if document.get("predicateType") != RUN_PROVENANCE_PREDICATE:
        raise _fail(f"{where}: predicateType {document.get('predicateType')!r:.100} is not supported "
                    f"(this code reads {RUN_PROVENANCE_PREDICATE})")
    subject = document.get("subject")
    if not isinstance(subject, list) or len(subject) != 1 or not isinstance(subject[0], dict) \
            or not isinstance(subject[0].get("digest"), dict):
        raise _fail(f"{where}: the statement must have exactly one subject with a digest")
    digest, name = subject[0]["digest"].get("sha256"), subject[0].get("name", "_")
    if not is_sha256_hex(digest):
        raise _fail(f"{where}: the subject has no lowercase hex sha256 digest")
    if not isinstance(name, str):
        raise _fail(f"{where}: the subject's name must be a string")
    try:
        predicate = Predicate.from_dict(document.get("predicate"))
    except AttestationError as exc:
        raise _fail(f"{where}: {exc}") from None
    return Statement(name, digest, predicate)


__all__ = ["Attested", "Invocation", "Predicate", "Statement", "parse_statement", "redact_command", "redact_text"]
