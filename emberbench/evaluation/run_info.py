"""Run identity and provenance: the run journal's header and the run-info object.

A run in a store is one (manifest hash, model id) pair, named by its journal
(``run-<sha256>``, :func:`emberbench.store.journal_name`). Two records
describe it, both inside the store, never inside the result artifact (whose
format the spec fixes):

* **The journal header**, the journal's first entry, written once when the
  journal is created: the policy spec, the EMBERBench version and the start
  time. It is the run's own account of *what* it runs; a resume under another
  policy spec is refused against it.
* **The run-info object** (format version :data:`RUN_INFO_VERSION`), canonical
  JSON stored as a store object and named by the ref ``runs/<journal name>``:
  the full provenance a run catalog lists (model, policy, manifest, suite,
  versions, host, user, times, progress, state, last verification; since
  version 1.1 the execution accounting, since 1.2 the episodes each node
  played). It is rewritten as the run progresses; every write goes through
  :func:`write_run_info`. Versions 1.0 and 1.1 are still read.

Nothing secret goes into either: no environment, no tokens, no addresses. The
policy spec is recorded verbatim, so a ``cmd:`` spec must not carry secrets on
its command line (docs/formats.md).
"""

from __future__ import annotations

import dataclasses
import getpass
import platform
import re
import socket
import time
from dataclasses import dataclass
from typing import Any

from ..io.canonical import canonical_bytes, is_sha256_hex
from ..errors import RunInfoError
from ..io.versions import RUN_HEADER_VERSION, RUN_INFO_VERSION
from ..policies.served.usage import ModelUsage

STATES = ("running", "complete", "failed", "interrupted")
VERDICTS = ("ok", "partial", "failed")
RUN_INFO_REF_PREFIX = "runs/"
MAX_RUN_INFO_BYTES = 128 * 1024
MAX_TEXT = 4096
MAX_NODES = 256
MAX_NODE_NAME = 128
OTHER_NODES = "(other nodes)"
"""Where :func:`node_counts` puts the episodes of the nodes past the first ``MAX_NODES - 1``."""
_TIME_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
_RUN_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
HEADER_KEYS = frozenset({"run_header", "policy", "emberbench_version", "started"})
RUN_INFO_READABLE = ("1.0", "1.1", RUN_INFO_VERSION)
"""Run-info versions a reader accepts: 1.0 (before execution accounting, no ``model_usage``), 1.1 (no
``nodes``) and the one written."""
MAX_TAGS = 32
_TAG_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:=+-]{0,63}")


def utc_now() -> str:
    """The current time as ISO 8601 UTC to the second, e.g. ``2025-01-31T12:00:00Z``."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _text(value: object, name: str, *, limit: int = MAX_TEXT) -> str:
    if not isinstance(value, str) or not value or len(value) > limit or not value.isprintable():
        raise RunInfoError(f"{name} must be 1-{limit} printable characters, got {value!r:.80}")
    return value


def _time(value: object, name: str) -> str:
    if not isinstance(value, str) or _TIME_RE.fullmatch(value) is None:
        raise RunInfoError(f"{name} must be an ISO 8601 UTC time like 2025-01-31T12:00:00Z, got {value!r:.80}")
    return value


def _count(value: object, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise RunInfoError(f"{name} must be a non-negative integer, got {value!r:.80}")
    return value


def _digest(value: object, name: str) -> str:
    if not is_sha256_hex(value):
        raise RunInfoError(f"{name} must be a lowercase SHA-256 hex digest, got {value!r:.80}")
    return value  # type: ignore[return-value]


def _exact_keys(data: object, keys: frozenset[str], what: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise RunInfoError(f"{what} must be a JSON object")
    unknown, missing = sorted(set(data) - keys), sorted(keys - set(data))
    if unknown or missing:
        raise RunInfoError(f"{what}: unknown key(s) {unknown}, missing key(s) {missing}")
    return data


# -- the journal header ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class JournalHeader:
    """The first entry of a run journal: what the run runs, since when, with which EMBERBench."""

    policy: str
    emberbench_version: str
    started: str

    def __post_init__(self) -> None:
        _text(self.policy, "policy")
        _text(self.emberbench_version, "emberbench_version", limit=64)
        _time(self.started, "started")

    def to_dict(self) -> dict[str, Any]:
        """The journal entry's data."""
        return {"run_header": RUN_HEADER_VERSION, "policy": self.policy,
                "emberbench_version": self.emberbench_version, "started": self.started}

    @classmethod
    def from_dict(cls, data: Any) -> JournalHeader:
        """Parse a journal entry written by :meth:`to_dict`.

        Raises:
            RunInfoError: an unknown header version, or a malformed field.
        """
        if isinstance(data, dict) and "run_header" in data and data["run_header"] != RUN_HEADER_VERSION:
            raise RunInfoError(f"run journal header version {data['run_header']!r} is not supported "
                               f"(this code reads {RUN_HEADER_VERSION})")
        data = _exact_keys(dict(data) if hasattr(data, "keys") else data, HEADER_KEYS, "run journal header")
        return cls(data["policy"], data["emberbench_version"], data["started"])


def is_header_entry(data: Any) -> bool:
    """Whether a journal entry's data is a run header (it carries ``run_header``)."""
    return "run_header" in data


# -- the run-info object ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Verification:
    """The last verification of a run: when, by whom, with what verdict."""

    at: str
    by: str
    verdict: str
    detail: str

    def __post_init__(self) -> None:
        _time(self.at, "verification.at")
        _text(self.by, "verification.by", limit=512)
        if self.verdict not in VERDICTS:
            raise RunInfoError(f"verification.verdict must be one of {', '.join(VERDICTS)}, got {self.verdict!r:.80}")
        if not isinstance(self.detail, str) or len(self.detail) > MAX_TEXT:
            raise RunInfoError(f"verification.detail must be a string of at most {MAX_TEXT} characters")

    def to_dict(self) -> dict[str, Any]:
        return {"at": self.at, "by": self.by, "verdict": self.verdict, "detail": self.detail}


INFO_KEYS_1_0 = frozenset({
    "run_info_version", "run", "model_id", "policy", "manifest_hash", "suite_id", "suite_version", "suite_hash",
    "emberbench_version", "python_version", "ray_version", "host", "user", "started", "ended", "episodes_done",
    "episodes_scheduled", "state", "result", "verification",
})
INFO_KEYS_1_1 = INFO_KEYS_1_0 | {"model_usage"}
"""The keys of a version 1.1 run-info (still read)."""
INFO_KEYS = INFO_KEYS_1_1 | {"nodes", "tags", "heartbeat"}
"""The keys of the version written (:data:`RUN_INFO_VERSION`); versions 1.0 and 1.1 have
:data:`INFO_KEYS_1_0` and :data:`INFO_KEYS_1_1`."""
_KEYS_OF = {"1.0": INFO_KEYS_1_0, "1.1": INFO_KEYS_1_1, RUN_INFO_VERSION: INFO_KEYS}

Nodes = tuple[tuple[str, int], ...]
"""Episodes per node: ``((host name, episodes), ...)`` sorted by host name."""


def node_counts(counts: Any) -> Nodes:
    """Episodes per node (a mapping host name -> count) as a run-info's ``nodes``, always within its limits.

    Names are cut to :data:`MAX_NODE_NAME` characters (counts of names that
    then coincide are added); past :data:`MAX_NODES` nodes, the nodes with
    the fewest episodes (ties by name) are added up under :data:`OTHER_NODES`.
    Zero counts are dropped. The result is sorted by name.
    """
    merged: dict[str, int] = {}
    for name, count in counts.items():
        if count > 0:
            key = (str(name) or "unknown")[:MAX_NODE_NAME]
            merged[key] = merged.get(key, 0) + int(count)
    if len(merged) > MAX_NODES:
        ranked = sorted(merged.items(), key=lambda item: (-item[1], item[0]))
        kept = dict(ranked[:MAX_NODES - 1])
        kept[OTHER_NODES] = kept.get(OTHER_NODES, 0) + sum(count for _, count in ranked[MAX_NODES - 1:])
        merged = kept
    return tuple(sorted(merged.items()))


def _nodes(value: object) -> Nodes | None:
    """Validate a run-info's ``nodes`` (None, or pairs of a host name and a positive count)."""
    if value is None:
        return None
    if not isinstance(value, tuple) or len(value) > MAX_NODES:
        raise RunInfoError(f"nodes must map at most {MAX_NODES} host names to episode counts")
    names = []
    for pair in value:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise RunInfoError("nodes must map host names to episode counts")
        name, count = pair
        _text(name, "nodes (a host name)", limit=MAX_NODE_NAME)
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise RunInfoError(f"nodes[{name!r:.80}] must be a positive integer, got {count!r:.80}")
        names.append(name)
    if names != sorted(set(names)):
        raise RunInfoError("nodes must name each host once, in sorted order")
    return value


def normalize_tags(tags: object) -> tuple[str, ...]:
    """Tags as a run-info holds them: each checked, duplicates dropped, sorted (code point order).

    A tag is 1-64 characters of ``[A-Za-z0-9._:=+-]`` starting with a letter
    or digit (``baseline``, ``paper:v2``, ``lr=3e-4``); a run has at most
    :data:`MAX_TAGS`.

    Raises:
        RunInfoError: a tag breaks the rule, or there are too many.
    """
    if isinstance(tags, str) or not isinstance(tags, (list, tuple, set, frozenset)):
        raise RunInfoError(f"tags must be a list of strings, got {tags!r:.80}")
    for tag in tags:
        if not isinstance(tag, str) or _TAG_RE.fullmatch(tag) is None:
            raise RunInfoError(f"a tag is 1-64 characters of letters, digits and ._:=+- starting with a letter "
                               f"or digit, got {tag!r:.80}")
    unique = tuple(sorted(set(tags)))
    if len(unique) > MAX_TAGS:
        raise RunInfoError(f"a run has at most {MAX_TAGS} tags, got {len(unique)}")
    return unique


@dataclass(frozen=True, slots=True)
class RunInfo:
    """The provenance of one run in a store (format version :data:`RUN_INFO_VERSION`).

    Attributes:
        run: the run's journal name.
        model_id, policy: the label and the policy spec of the run.
        manifest_hash, suite_id, suite_version, suite_hash: what it evaluates.
        emberbench_version, python_version, ray_version: the software that
            wrote this version of the run-info (``ray_version`` is None when Ray
            is not installed).
        host, user: where and as whom it ran.
        started: when the run's journal was created; ended: when the run last
            stopped (None while it runs).
        episodes_done, episodes_scheduled: progress at the last update.
        state: ``running``, ``complete``, ``failed`` or ``interrupted``.
        result: the store key of the complete result artifact, once there is one.
        verification: the last verification, if any.
        model_usage: execution accounting (since 1.1): what the policies of
            every start of the run reported they cost
            (:class:`~emberbench.policies.served.usage.ModelUsage`: a served
            model's requests, cache hits, tokens, time), summed; None when
            no policy reported any (and in a 1.0 run-info).
        nodes: where the episodes of the run's latest invocation that played
            any were played: ``((host name, episodes), ...)`` sorted by name
            (see :func:`node_counts`); None when not recorded (a run-info of
            version 1.0 or 1.1, or one rebuilt from a result).
        tags: labels given with ``run --tag`` (sorted, unique; since 1.2; none in
            an older run-info).
        heartbeat: the last heartbeat of the running run, on the store's clock
            (:mod:`emberbench.evaluation.liveness`; since 1.2); None in an older
            run-info, written before heartbeats.
    """

    run: str
    model_id: str
    policy: str
    manifest_hash: str
    suite_id: str
    suite_version: str
    suite_hash: str
    emberbench_version: str
    python_version: str
    ray_version: str | None
    host: str
    user: str
    started: str
    ended: str | None
    episodes_done: int
    episodes_scheduled: int
    state: str
    result: str | None = None
    verification: Verification | None = None
    model_usage: ModelUsage | None = None
    nodes: Nodes | None = None
    tags: tuple[str, ...] = ()
    heartbeat: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.run, str) or _RUN_RE.fullmatch(self.run) is None:
            raise RunInfoError(f"run must be a journal name ([A-Za-z0-9][A-Za-z0-9._-]{{0,127}}), got {self.run!r:.80}")
        from ..errors import ResultError
        from ..results.model_id import validate_model_id

        try:
            validate_model_id(self.model_id)
        except ResultError as exc:
            raise RunInfoError(str(exc)) from None
        for name in ("policy", "suite_id", "suite_version", "emberbench_version", "python_version",
                     "host", "user"):
            _text(getattr(self, name), name)
        if self.ray_version is not None:
            _text(self.ray_version, "ray_version")
        _digest(self.manifest_hash, "manifest_hash")
        _digest(self.suite_hash, "suite_hash")
        _time(self.started, "started")
        if self.ended is not None:
            _time(self.ended, "ended")
        done, scheduled = _count(self.episodes_done, "episodes_done"), _count(self.episodes_scheduled,
                                                                            "episodes_scheduled")
        if done > scheduled:
            raise RunInfoError(f"episodes_done {done} exceeds episodes_scheduled {scheduled}")
        if self.state not in STATES:
            raise RunInfoError(f"state must be one of {', '.join(STATES)}, got {self.state!r:.80}")
        if self.result is not None:
            _digest(self.result, "result")
        if self.verification is not None and not isinstance(self.verification, Verification):
            raise RunInfoError("verification must be a Verification or None")
        if self.model_usage is not None and not isinstance(self.model_usage, ModelUsage):
            raise RunInfoError("model_usage must be a ModelUsage or None")
        _nodes(self.nodes)
        if self.nodes is not None and sum(count for _, count in self.nodes) > scheduled:
            raise RunInfoError(f"nodes count more episodes than the {scheduled} scheduled")
        if not isinstance(self.tags, tuple) or normalize_tags(self.tags) != self.tags:
            raise RunInfoError(f"tags must be a sorted tuple of distinct tags, got {self.tags!r:.80}")
        if self.heartbeat is not None:
            _time(self.heartbeat, "heartbeat")

    def replace(self, **changes: Any) -> RunInfo:
        """A copy with ``changes`` applied (validated again)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the version written (``run_info_version`` included)."""
        out: dict[str, Any] = {"run_info_version": RUN_INFO_VERSION}
        for field in dataclasses.fields(self):
            out[field.name] = getattr(self, field.name)
        if self.verification is not None:
            out["verification"] = self.verification.to_dict()
        if self.model_usage is not None:
            out["model_usage"] = self.model_usage.to_dict()
        out["nodes"] = None if self.nodes is None else dict(self.nodes)
        out["tags"] = list(self.tags)
        return out

    def to_bytes(self) -> bytes:
        """The stored form: canonical JSON, no trailing newline."""
        return canonical_bytes(self.to_dict())

    @classmethod
    def from_dict(cls, data: Any, *, where: str = "run-info") -> RunInfo:
        """Validate and build a run-info of a readable version (:data:`RUN_INFO_READABLE`).

        Refuses other versions and unknown or missing keys: a version 1.0
        run-info has neither ``model_usage`` nor ``nodes`` and a 1.1 one no
        ``nodes``; they read as None (and ``tags`` as none).

        Raises:
            RunInfoError: naming ``where`` and the first problem.
        """
        version = data.get("run_info_version") if isinstance(data, dict) else None
        if isinstance(data, dict) and version not in RUN_INFO_READABLE:
            readable = ", ".join(repr(v) for v in RUN_INFO_READABLE[:-1]) + f" and {RUN_INFO_READABLE[-1]!r}"
            raise RunInfoError(f"{where}: run_info_version {version!r} is not supported (this code reads {readable})")
        try:
            data = _exact_keys(data, _KEYS_OF.get(version, INFO_KEYS), where)
            fields = {k: v for k, v in data.items() if k != "run_info_version"}
            if "tags" in fields:
                tags = fields["tags"]
                if not isinstance(tags, list) or normalize_tags(tags) != tuple(tags):
                    raise RunInfoError(f"tags must be a sorted list of distinct tags, got {tags!r:.80}")
                fields["tags"] = tuple(tags)
            check = fields["verification"]
            if check is not None:
                check = _exact_keys(check, frozenset({"at", "by", "verdict", "detail"}), "verification")
                fields["verification"] = Verification(**check)
            if fields.get("model_usage") is not None:
                try:
                    fields["model_usage"] = ModelUsage.from_dict(fields["model_usage"])
                except ValueError as exc:
                    raise RunInfoError(f"model_usage: {exc}") from None
            nodes = fields.get("nodes")
            if nodes is not None:
                if not isinstance(nodes, dict):
                    raise RunInfoError("nodes must be a JSON object or null")
                fields["nodes"] = tuple(sorted(nodes.items()))
            return cls(**fields)
        except RunInfoError as exc:
            message = str(exc)
            raise RunInfoError(message if message.startswith(where) else f"{where}: {message}") from None


def trusted_run_info(data: dict[str, Any]) -> RunInfo:
    """A run-info from a dict this code wrote (``RunInfo.to_dict``), without checking every field again.

    For the catalog index only: it holds thousands of run-infos, each
    validated when it was read from the store, inside an object whose frame
    checksum was verified and whose ref the ref log vouches for. Keys and
    version are still checked; a field of the wrong type fails later, never
    silently. Anything else reads run-infos with :meth:`RunInfo.from_dict`.

    Raises:
        RunInfoError: another version, or unknown or missing keys.
    """
    if not isinstance(data, dict) or data.get("run_info_version") != RUN_INFO_VERSION or set(data) != INFO_KEYS:
        raise RunInfoError("an indexed run-info is not one this code writes (version or keys differ)")
    info = object.__new__(RunInfo)
    setter = object.__setattr__
    for name in _FIELD_NAMES:
        setter(info, name, data[name])
    setter(info, "tags", tuple(data["tags"]))
    if data["nodes"] is not None:
        setter(info, "nodes", tuple(sorted(data["nodes"].items())))
    if data["verification"] is not None:
        setter(info, "verification", Verification(**data["verification"]))
    if data["model_usage"] is not None:
        try:
            setter(info, "model_usage", ModelUsage.from_dict(data["model_usage"]))
        except ValueError as exc:
            raise RunInfoError(f"model_usage: {exc}") from None
    return info


_FIELD_NAMES = tuple(f.name for f in dataclasses.fields(RunInfo))


def software_versions() -> dict[str, str | None]:
    """EMBERBench, Python and Ray versions of this process (Ray is looked up, never imported)."""
    from importlib.metadata import PackageNotFoundError, version

    from .. import __version__

    try:
        ray_version: str | None = version("ray")
    except PackageNotFoundError:
        ray_version = None
    return {"emberbench_version": __version__, "python_version": platform.python_version(),
            "ray_version": ray_version}


def this_user() -> str:
    """The login name of this process, or ``unknown``."""
    try:
        return getpass.getuser() or "unknown"
    except (KeyError, OSError):
        return "unknown"


def this_host() -> str:
    """The host name of this machine."""
    return socket.gethostname() or "unknown"


# -- stored run-infos ---------------------------------------------------------------


def run_info_ref(run: str) -> str:
    """The ref that names the run-info of the run (journal) ``run``."""
    return f"{RUN_INFO_REF_PREFIX}{run}"


def write_run_info(store: Any, info: RunInfo) -> str:
    """Store ``info`` and point ``runs/<run>`` at it; the only way a run's own progress is written.

    The ref moves by compare-and-swap: a verification another process
    recorded meanwhile (:func:`record_verification`), or a later heartbeat
    (:mod:`emberbench.evaluation.liveness`), is carried over unless ``info``
    brings a newer one, so neither writer loses the other's update.
    An ``info`` without ``nodes`` (an invocation that has played nothing
    yet) keeps the nodes of the stored run-info, those of the latest
    invocation that played episodes.

    Returns:
        The key of the stored run-info.
    """

    def change(current_key: str | None) -> str:
        merged = info
        current = _readable(store, current_key)
        if current is not None and current.verification is not None and (
                info.verification is None or info.verification.at < current.verification.at):
            merged = merged.replace(verification=current.verification)
        if current is not None and info.nodes is None and current.nodes is not None:
            merged = merged.replace(nodes=current.nodes)
        if current is not None and current.run == info.run and current.heartbeat is not None and (
                info.heartbeat is None or info.heartbeat < current.heartbeat):
            merged = merged.replace(heartbeat=current.heartbeat)  # a heartbeat recorded meanwhile stays
        return store.put(merged.to_bytes())

    key = store.refs.update(run_info_ref(info.run), change)
    assert key is not None
    return key


def record_verification(store: Any, run: str, verification: Verification) -> RunInfo:
    """Record the last verification of ``run`` in its run-info (compare-and-swap; nothing else changes).

    Raises:
        RunInfoError: the run has no readable run-info.
    """
    updated: list[RunInfo] = []

    def change(current_key: str | None) -> str:
        current = _readable(store, current_key)
        if current is None:
            raise RunInfoError(f"run {run} has no readable run-info ({run_info_ref(run)})")
        updated[:] = [current.replace(verification=verification)]
        return store.put(updated[0].to_bytes())

    store.refs.update(run_info_ref(run), change)
    return updated[0]


def _readable(store: Any, key: str | None) -> RunInfo | None:
    """The run-info stored under ``key``, or None when there is none or it cannot be read."""
    from emberbench.store import StoreError

    if key is None:
        return None
    try:
        return _parse_stored(store, key, "run-info")
    except (RunInfoError, StoreError):
        return None


def parse_stored(store: Any, key: str, where: str) -> RunInfo:
    """The run-info stored under ``key`` (capped, validated); ``where`` names it in errors.

    Raises:
        RunInfoError: too large, not JSON, or invalid.
        StoreError: the object is missing or corrupt.
    """
    return _parse_stored(store, key, where)


def _parse_stored(store: Any, key: str, where: str) -> RunInfo:
    from emberbench.store import ObjectTooLargeError

    from ..io.input_policy import parse_json

    try:
        data = store.get(key, max_length=MAX_RUN_INFO_BYTES)  # one read: the cap is checked from its header
    except ObjectTooLargeError:
        raise RunInfoError(f"{where}: run-info object {key} is larger than {MAX_RUN_INFO_BYTES} bytes") from None
    try:
        parsed = parse_json(data, where=where)
    except ValueError as exc:
        raise RunInfoError(str(exc)) from None
    return RunInfo.from_dict(parsed, where=where)


def read_run_info(store: Any, run: str) -> RunInfo | None:
    """The run-info of ``run``, or None when the store has none for it.

    Raises:
        RunInfoError: the stored object is too large, not JSON, or fails validation.
        StoreError: the object is missing or corrupt (IntegrityError, ObjectNotFoundError).
    """
    from emberbench.store import RefError

    ref = run_info_ref(run)
    try:
        key = store.refs.get(ref)
    except RefError as exc:
        if exc.reason == "no such ref":
            return None
        raise
    return _parse_stored(store, key, f"ref {ref}")


def run_accounting(store: Any, manifest_hash: str, model_id: str, result_digest: str) -> ModelUsage | None:
    """The execution accounting of the run that wrote a result, from its run-info in ``store``.

    None when the store has no readable run-info for (manifest, model id),
    when that run-info's result is another artifact (a later run, or none
    yet), or when its policies reported no usage.
    """
    from emberbench.store import StoreError, journal_name

    try:
        info = read_run_info(store, journal_name(manifest_hash, model_id))
    except (RunInfoError, StoreError):
        return None
    if info is None or info.result != result_digest:
        return None
    return info.model_usage


__all__ = [
    "MAX_NODES",
    "STATES",
    "JournalHeader",
    "RunInfo",
    "Verification",
    "is_header_entry",
    "node_counts",
    "normalize_tags",
    "parse_stored",
    "read_run_info",
    "record_verification",
    "run_accounting",
    "run_info_ref",
    "software_versions",
    "trusted_run_info",
    "this_host",
    "this_user",
    "utc_now",
    "write_run_info",
]
