"""Evaluation manifests: the immutable, hashed, ordered schedule of episodes.

A manifest pins the suite (id, version, hash), the simulator, observation and
metrics versions, and the ordered (scenario id, scenario hash, seed) episodes.
Its hash is the SHA-256 of its canonical JSON; any change to any field, seed,
scenario hash or to the order gives another hash. docs/evaluation.md has the
rules; each one is enforced on construction and on parsing.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..io.atomic import atomic_write_bytes
from ..io.canonical import canonical_bytes, canonical_json, is_sha256_hex
from ..errors import CanonicalFormError, ManifestError, ManifestTypeError, SuiteError
from ..io.input_policy import MANIFEST, JsonText, read_json_text
from ..schemas.kinds import not_what_was_wanted
from ..sim.suite import SEMVER_RE, SUITE_ID_RE, Suite
from ..io.versions import MANIFEST_VERSION, METRICS_VERSION, OBSERVATION_VERSION, SIMULATOR_VERSION

SUPPORTED_MANIFEST_VERSIONS = (MANIFEST_VERSION,)
_VERSION_RE = re.compile(r"^[0-9]+(\.[0-9]+){1,2}$")
MANIFEST_KEYS = (
    "manifest_version", "suite_id", "suite_version", "suite_hash", "simulator_version",
    "observation_version", "metrics_version", "episodes",
)
ENTRY_KEYS = ("index", "scenario_id", "scenario_hash", "seed")
_ENTRY_KEY_SET = frozenset(ENTRY_KEYS)
MAX_SEED = (1 << 64) - 1
_CHUNK_ENTRIES = 4096


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


@dataclass(frozen=True, slots=True)
class ManifestEntry:
    """One scheduled episode."""

    index: int
    scenario_id: str
    scenario_hash: str
    seed: int

    def to_dict(self) -> dict[str, Any]:
        """The entry's JSON object."""
        return {"index": self.index, "scenario_id": self.scenario_id,
                "scenario_hash": self.scenario_hash, "seed": self.seed}

    def key(self, manifest_hash: str) -> tuple[str, int, str, str, int]:
        """The pairing key (manifest hash, index, scenario id, scenario hash, seed)."""
        return (manifest_hash, self.index, self.scenario_id, self.scenario_hash, self.seed)


@dataclass(frozen=True, slots=True)
class EvaluationManifest:
    """A validated evaluation manifest. ``hash`` is computed on construction."""

    suite_id: str
    suite_version: str
    suite_hash: str
    episodes: tuple[ManifestEntry, ...]
    simulator_version: str = SIMULATOR_VERSION
    observation_version: str = OBSERVATION_VERSION
    metrics_version: str = METRICS_VERSION
    manifest_version: str = MANIFEST_VERSION
    hash: str = field(default="", init=False, compare=False)

    def __post_init__(self) -> None:
        _validate(self)
        sha = hashlib.sha256()
        for chunk in self.canonical_chunks():
            sha.update(chunk)
        object.__setattr__(self, "hash", sha.hexdigest())

    def to_dict(self) -> dict[str, Any]:
        """The manifest's JSON object."""
        return {**self.header_dict(), "episodes": [e.to_dict() for e in self.episodes]}

    def header_dict(self) -> dict[str, Any]:
        """The manifest's JSON object without ``episodes``."""
        return {
            "manifest_version": self.manifest_version,
            "suite_id": self.suite_id,
            "suite_version": self.suite_version,
            "suite_hash": self.suite_hash,
            "simulator_version": self.simulator_version,
            "observation_version": self.observation_version,
            "metrics_version": self.metrics_version,
        }

    def canonical_bytes(self) -> bytes:
        """Canonical JSON of the manifest (its hash is the SHA-256 of these bytes)."""
        return b"".join(self.canonical_chunks())

    def canonical_chunks(self) -> Iterator[bytes]:
        """The canonical JSON of the manifest in pieces, never holding its whole dict or text.

        The pieces join to exactly ``canonical_bytes(self.to_dict())``:
        ``episodes`` is placed where the canonical encoder puts it, and each
        entry is written with its keys in sorted order (index,
        scenario_hash, scenario_id, seed), its integers in decimal and its
        strings by the canonical encoder (once per distinct scenario).
        """
        header = canonical_bytes({**self.header_dict(), "episodes": []})
        before, after = header.split(b'"episodes":[]', 1)
        yield before + b'"episodes":['
        middles: dict[tuple[str, str], str] = {}
        parts: list[str] = []
        last = len(self.episodes) - 1
        for position, e in enumerate(self.episodes):
            middle = middles.get((e.scenario_hash, e.scenario_id))
            if middle is None:
                middle = middles[(e.scenario_hash, e.scenario_id)] = (
                    f',"scenario_hash":{canonical_json(e.scenario_hash)},'
                    f'"scenario_id":{canonical_json(e.scenario_id)},"seed":'
                )
            parts.append(f'{{"index":{e.index}{middle}{e.seed}}}')
            if len(parts) == _CHUNK_ENTRIES and position < last:
                yield (",".join(parts) + ",").encode("ascii")
                parts.clear()
        yield (",".join(parts) + "]").encode("ascii") + after

    def entry(self, index: int) -> ManifestEntry:
        """The entry with ``index``."""
        if not 0 <= index < len(self.episodes):
            raise ManifestError(f"manifest has no episode index {index}")
        return self.episodes[index]


def _shown(value: object) -> str:
    """``repr(value)`` for a message; an integer too long to print (a caller's object) by its size instead."""
    if isinstance(value, int) and abs(value).bit_length() > 1024:
        return f"<an integer of {abs(value).bit_length()} bits>"
    return repr(value)


def _validate(m: EvaluationManifest) -> None:
    if m.manifest_version not in SUPPORTED_MANIFEST_VERSIONS:
        raise ManifestError(
            f"unsupported manifest_version {_shown(m.manifest_version)} "
            f"(supported: {', '.join(SUPPORTED_MANIFEST_VERSIONS)})"
        )
    if not isinstance(m.suite_id, str) or not SUITE_ID_RE.fullmatch(m.suite_id):
        raise ManifestError(f"suite_id {_shown(m.suite_id)} is not well formed")
    if not isinstance(m.suite_version, str) or not SEMVER_RE.fullmatch(m.suite_version):
        raise ManifestError(f"suite_version {_shown(m.suite_version)} is not MAJOR.MINOR.PATCH")
    if not is_sha256_hex(m.suite_hash):
        raise ManifestError("suite_hash is not a lowercase SHA-256 hex digest")
    for name in ("simulator_version", "observation_version", "metrics_version"):
        value = getattr(m, name)
        if not isinstance(value, str) or not _VERSION_RE.fullmatch(value):
            raise ManifestError(f"{name} {_shown(value)} is not a version string")
    if not isinstance(m.episodes, tuple) or not m.episodes:
        raise ManifestError("episodes must be a non-empty list")
    # One pass; what is the same for every seed of a scenario is checked once per scenario.
    pinned: dict[str, str] = {}
    seeds: dict[str, set[int]] = {}
    for position, e in enumerate(m.episodes):
        if type(e) is not ManifestEntry:
            raise ManifestError(f"episodes[{position}] is not a manifest entry")
        index, sid, shash, seed = e.index, e.scenario_id, e.scenario_hash, e.seed
        if type(index) is not int or index != position:
            raise ManifestError(f"episodes[{position}] has index {_shown(index)}; the index must equal the position")
        if not isinstance(sid, str) or not sid:
            raise ManifestError(f"episodes[{position}] scenario_id must be a non-empty string")
        known = pinned.get(sid)
        if known is None or known != shash:
            if not is_sha256_hex(shash):
                raise ManifestError(f"episodes[{position}] scenario_hash is not a lowercase SHA-256 hex digest")
            if known is not None:
                raise ManifestError(f"scenario {sid!r} is pinned to two different hashes")
            pinned[sid] = shash
            seeds[sid] = set()
        if type(seed) is not int or not 0 <= seed <= MAX_SEED:
            raise ManifestError(f"episodes[{position}] seed {_shown(seed)} is not an integer in [0, 2**64 - 1]")
        used = seeds[sid]
        if seed in used:
            raise ManifestError(f"seed {seed} occurs twice for scenario {sid!r}")
        used.add(seed)


def manifest_from_dict(data: object, *, where: str = "manifest") -> EvaluationManifest:
    """Parse and validate a manifest object (exact keys at every level).

    Equal strings (a scenario's id and hash repeat for each of its seeds)
    are shared between entries.
    """
    if not isinstance(data, dict):
        raise ManifestError(f"{where}: must be a JSON object")
    _exact(data, MANIFEST_KEYS, where)
    if data["manifest_version"] not in SUPPORTED_MANIFEST_VERSIONS:
        raise ManifestError(f"{where}: unsupported manifest_version {data['manifest_version']!r}")
    episodes = data["episodes"]
    if not isinstance(episodes, list):
        raise ManifestError(f"{where}: episodes must be a list")
    entries = []
    shared: dict[str, str] = {}
    for i, e in enumerate(episodes):
        if not isinstance(e, dict):
            raise ManifestError(f"{where}: episodes[{i}] must be an object")
        if e.keys() != _ENTRY_KEY_SET:
            _exact(e, ENTRY_KEYS, f"{where}: episodes[{i}]")
        sid, shash = e["scenario_id"], e["scenario_hash"]
        if isinstance(sid, str) and isinstance(shash, str):
            sid, shash = shared.setdefault(sid, sid), shared.setdefault(shash, shash)
        entries.append(ManifestEntry(e["index"], sid, shash, e["seed"]))
    return _manifest_of(data, entries, where)


def _exact(obj: dict[str, Any], keys: Sequence[str], where: str) -> None:
    unknown, missing = sorted(set(obj) - set(keys)), sorted(set(keys) - set(obj))
    if unknown:
        raise ManifestError(f"{where}: unknown key(s) {', '.join(unknown)}")
    if missing:
        raise ManifestError(f"{where}: missing key(s) {', '.join(missing)}")


def build_manifest(suite: Suite, seeds: Sequence[int], *,
                   scenario_ids: Sequence[str] | None = None) -> EvaluationManifest:
    """Schedule suite scenarios under every seed (suite order outer, seeds inner).

    The seeds are used exactly as given: not sorted, deduplicated or generated.

    Args:
        suite: the suite.
        seeds: the seeds, in order.
        scenario_ids: schedule only these scenarios (see :func:`select_scenarios`);
            they still come in suite order. None schedules every scenario.

    Raises:
        ManifestTypeError: ``seeds`` is a set, a str, a generator or any
            other container without a reliable order (only list and tuple).
        ManifestError: empty, duplicate or out-of-range seeds; an empty
            selection or an id the suite does not have.
    """
    if not isinstance(seeds, (list, tuple)):
        raise ManifestTypeError(
            f"seeds must be a list or tuple (an ordered sequence), not {type(seeds).__name__}"
        )
    if not seeds:
        raise ManifestError("seeds must not be empty")
    for s in seeds:
        if not _is_int(s) or not 0 <= s <= MAX_SEED:
            raise ManifestError(f"seed {_shown(s)} is not an integer in [0, 2**64 - 1]")
    if len(set(seeds)) != len(seeds):
        dup = next(s for i, s in enumerate(seeds) if s in seeds[:i])
        raise ManifestError(f"seed {dup} is given twice")
    wanted = None if scenario_ids is None else set(select_scenarios(suite, scenario_ids))
    if wanted is not None and not wanted:
        raise ManifestError("the selection holds no scenario")
    entries = []
    for scenario in suite.scenarios:
        if wanted is not None and scenario.id not in wanted:
            continue
        for seed in seeds:
            entries.append(ManifestEntry(len(entries), scenario.id, scenario.content_hash, seed))
    return EvaluationManifest(
        suite_id=suite.id, suite_version=suite.version, suite_hash=suite.hash, episodes=tuple(entries),
    )


def select_scenarios(suite: Suite, scenarios: Sequence[str] = (), families: Sequence[str] = ()) -> list[str]:
    """Ids of the scenarios named or in a family named, in suite order (each once).

    Raises:
        ManifestError: a scenario or family the suite does not have.
    """
    known = {s.id for s in suite.scenarios}
    by_family = {f.id: f.scenarios for f in suite.families}
    chosen = set()
    for sid in scenarios:
        if sid not in known:
            raise ManifestError(f"suite {suite.id} {suite.version} has no scenario {sid!r}")
        chosen.add(sid)
    for fid in families:
        if fid not in by_family:
            raise ManifestError(f"suite {suite.id} {suite.version} has no family {fid!r} "
                                f"(families: {', '.join(by_family) or 'none'})")
        chosen.update(by_family[fid])
    return [s.id for s in suite.scenarios if s.id in chosen]


MAX_SCORED_SEEDS = 10_000


def draw_scored_seeds(count: int) -> list[int]:
    """``count`` distinct seeds drawn from the operating system's cryptographic randomness.

    The only place EMBERBench chooses evaluation seeds: for a scored
    manifest, whose seeds must stay unknown until results are in
    (docs/v1-fairness-spec.md). Never reproducible, by design.

    Raises:
        ManifestError: ``count`` is not in ``[1, MAX_SCORED_SEEDS]``.
    """
    import secrets

    if not _is_int(count) or not 1 <= count <= MAX_SCORED_SEEDS:
        raise ManifestError(f"the number of scored seeds must be in [1, {MAX_SCORED_SEEDS}], got {count!r}")
    seeds: list[int] = []
    seen: set[int] = set()
    while len(seeds) < count:
        seed = secrets.randbits(64)
        if seed not in seen:
            seen.add(seed)
            seeds.append(seed)
    return seeds


def check_manifest_object(manifest: object) -> EvaluationManifest:
    """Check an in-memory manifest again as its construction checked it; return it.

    A frozen dataclass still lets its fields be replaced (``object.__setattr__``,
    ``dataclasses.replace`` without its checks), so every function that takes
    a manifest object from a caller checks it here before using it: any
    malformed field is a :class:`ManifestError`, never an AttributeError or a
    TypeError. Its ``hash`` is not recomputed here (see
    :func:`check_manifest_hash`).

    Raises:
        ManifestError: not an :class:`EvaluationManifest`, or a field fails its check.
    """
    if not isinstance(manifest, EvaluationManifest):
        raise ManifestError(f"expected an EvaluationManifest, got {type(manifest).__name__}")
    _validate(manifest)
    return manifest


def check_manifest_hash(manifest: EvaluationManifest) -> None:
    """Require that the manifest's ``hash`` is the SHA-256 of its canonical JSON (after :func:`check_manifest_object`).

    Raises:
        ManifestError: the hash was computed for other contents.
    """
    sha = hashlib.sha256()
    for chunk in manifest.canonical_chunks():
        sha.update(chunk)
    if sha.hexdigest() != manifest.hash:
        raise ManifestError(f"the manifest's hash {_shown(manifest.hash)} is not the SHA-256 of its contents")


def check_manifest(manifest: EvaluationManifest, suite: Suite) -> None:
    """Require that ``manifest`` (checked again, see :func:`check_manifest_object`) targets exactly ``suite``
    and the running code.

    Raises:
        ManifestError: a malformed manifest, or naming the first field that does not match.
    """
    check_manifest_object(manifest)
    if not isinstance(suite, Suite):
        raise ManifestError(f"expected a Suite, got {type(suite).__name__}")
    for name, want in (("suite_id", suite.id), ("suite_version", suite.version), ("suite_hash", suite.hash),
                       ("simulator_version", SIMULATOR_VERSION), ("observation_version", OBSERVATION_VERSION),
                       ("metrics_version", METRICS_VERSION)):
        got = getattr(manifest, name)
        if got != want:
            hint = ""
            if name.startswith("suite_"):
                hint = (f" (this manifest's suite is {manifest.suite_id} {manifest.suite_version}: leave --suite out "
                        "to use it, or give its folder with --suite)")
            raise ManifestError(f"manifest {name} is {got!r}, but the suite/running code has {want!r}{hint}")
    checked: set[tuple[str, str]] = set()
    for e in manifest.episodes:
        pair = (e.scenario_id, e.scenario_hash)
        if pair not in checked:
            try:
                suite.resolve(e.scenario_id, e.scenario_hash)
            except SuiteError as exc:
                raise ManifestError(f"manifest episode {e.index}: {exc}") from None
            checked.add(pair)


def write_manifest(manifest: EvaluationManifest, path: str | Path) -> None:
    """Write the manifest as canonical JSON plus a newline, atomically (streamed, under the output policy).

    Raises:
        ManifestError: the manifest object is malformed (:func:`check_manifest_object`); nothing is written.
    """
    check_manifest_object(manifest)
    atomic_write_bytes(path, _with_newline(manifest.canonical_chunks()))


def _with_newline(chunks: Iterator[bytes]) -> Iterator[bytes]:
    yield from chunks
    yield b"\n"


def load_manifest(path: str | Path, suite: Suite | None = None) -> EvaluationManifest:
    """Read a manifest file under the input policy, validate it, and check it against ``suite`` if given.

    The episodes are parsed one at a time and each is checked as it is read
    (:func:`parse_manifest_text`), so a manifest of a million episodes never
    holds a million parsed objects, and a file that is not a manifest is
    refused at its first wrong key or entry.

    Raises:
        ManifestError: naming the file and the first problem.
    """
    p = Path(path)
    document = read_json_text(p, MANIFEST, error=ManifestError)
    try:
        manifest = parse_manifest_text(document)
    except ManifestError as exc:
        # A result, statistics or other EMBERBench file is named as what it is.
        other = not_what_was_wanted(str(p), document.text, "manifest")
        if other is None:
            raise
        raise ManifestError(other) from None
    if suite is not None:
        try:
            check_manifest(manifest, suite)
        except ManifestError as exc:
            raise ManifestError(f"{p}: {exc}") from None
    return manifest


_SPACE = re.compile(r"[ \t\n\r]*")


def parse_manifest_text(document: JsonText) -> EvaluationManifest:
    """Parse a checked manifest text value by value: the header's values whole, the episodes one by one.

    Gives the manifest :func:`manifest_from_dict` would give for the parsed
    object, with the same messages, but refuses an unknown or repeated key, a
    non-list ``episodes`` or a malformed entry as soon as it is reached.

    Raises:
        ManifestError: naming ``document.where``.
    """
    where, text = document.where, document.text
    decode = document.decoder().raw_decode

    def value(pos: int) -> tuple[Any, int]:
        try:
            return decode(text, pos)
        except CanonicalFormError as exc:
            raise ManifestError(str(exc)) from None
        except ValueError as exc:
            raise ManifestError(f"{where}: not valid JSON: {exc}") from None

    def expect(pos: int, chars: str) -> tuple[str, int]:
        pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
        if text[pos:pos + 1] not in chars or pos >= len(text):
            raise ManifestError(f"{where}: not valid JSON: expected {' or '.join(repr(c) for c in chars)} "
                                f"at char {pos}")
        return text[pos], _SPACE.match(text, pos + 1).end()  # type: ignore[union-attr]

    header: dict[str, Any] = {}
    entries: list[ManifestEntry] = []
    shared: dict[str, str] = {}
    _, pos = expect(0, "{")
    closing = text[pos:pos + 1] == "}"
    pos += closing
    while not closing:
        key, pos = value(pos)
        if not isinstance(key, str):
            raise ManifestError(f"{where}: not valid JSON: an object key must be a string (char {pos})")
        if key in header:
            raise ManifestError(f"{where}: duplicate key {key!r}")
        if key not in MANIFEST_KEYS:
            raise ManifestError(f"{where}: unknown key(s) {key}")
        _, pos = expect(pos, ":")
        if key == "episodes" and text[pos:pos + 1] == "[":
            header[key], pos = None, _episodes(text, pos + 1, value, expect, entries, shared, where)
        else:
            header[key], pos = value(pos)
            if key == "episodes":
                raise ManifestError(f"{where}: episodes must be a list")
        mark, pos = expect(pos, ",}")
        closing = mark == "}"
    if _SPACE.match(text, pos).end() != len(text):  # type: ignore[union-attr]
        raise ManifestError(f"{where}: not valid JSON: extra data at char {pos}")
    _exact(header, MANIFEST_KEYS, where)
    if header["manifest_version"] not in SUPPORTED_MANIFEST_VERSIONS:
        raise ManifestError(f"{where}: unsupported manifest_version {header['manifest_version']!r}")
    return _manifest_of(header, entries, where)


def _episodes(text: str, pos: int, value: Any, expect: Any, entries: list[ManifestEntry],
              shared: dict[str, str], where: str) -> int:
    """Parse the episode list's elements (``pos`` is just past ``[``) into ``entries``; return the end."""
    pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
    if text[pos:pos + 1] == "]":
        return pos + 1
    while True:
        e, pos = value(pos)
        i = len(entries)
        if not isinstance(e, dict):
            raise ManifestError(f"{where}: episodes[{i}] must be an object")
        if e.keys() != _ENTRY_KEY_SET:
            _exact(e, ENTRY_KEYS, f"{where}: episodes[{i}]")
        sid, shash = e["scenario_id"], e["scenario_hash"]
        if isinstance(sid, str) and isinstance(shash, str):
            sid, shash = shared.setdefault(sid, sid), shared.setdefault(shash, shash)
        entries.append(ManifestEntry(e["index"], sid, shash, e["seed"]))
        mark, pos = expect(pos, ",]")
        if mark == "]":
            return pos


def _manifest_of(header: dict[str, Any], entries: list[ManifestEntry], where: str) -> EvaluationManifest:
    """The manifest of checked top-level members and entries; its own errors are prefixed with ``where``."""
    try:
        return EvaluationManifest(
            suite_id=header["suite_id"], suite_version=header["suite_version"], suite_hash=header["suite_hash"],
            episodes=tuple(entries), simulator_version=header["simulator_version"],
            observation_version=header["observation_version"], metrics_version=header["metrics_version"],
            manifest_version=header["manifest_version"],
        )
    except ManifestError as exc:
        raise ManifestError(f"{where}: {exc}") from None
