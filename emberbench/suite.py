"""Scenario suites: the suite manifest, its hash, loading and lookup.

A suite is a folder with ``suite.json`` and the scenario files it lists::

    {"suite_format": "1.0", "suite_id": "emberbench-v1-public",
     "suite_version": "1.0.0", "description": "...",
     "scenarios": [{"id": "...", "file": "scenarios/....json", "scenario_hash": "<sha256>"}],
     "families": [{"id": "...", "description": "...", "scenarios": ["...", ...]}]}

The suite hash is the SHA-256 of the canonical JSON of ``suite.json``'s object.
Loading checks that every scenario file hashes to its pinned hash and carries
its listed id. Families are declared in order; a scenario may be in several.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from .canonical import digest, is_sha256_hex, parse_json_strict
from .errors import CanonicalFormError, ScenarioError, SuiteError
from .scenario import ID_RE, Scenario, load_scenario
from .versions import SUITE_FORMAT_VERSION

PUBLIC_SUITE_ID = "emberbench-v1-public"
SUITE_ID_RE = re.compile(r"^[a-z0-9][a-z0-9.-]{0,79}$")
SEMVER_RE = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")
_SUITE_KEYS = frozenset({"suite_format", "suite_id", "suite_version", "description", "scenarios", "families"})


@dataclass(frozen=True, slots=True)
class Family:
    """A named group of scenarios (declaration order is kept)."""

    id: str
    description: str
    scenarios: tuple[str, ...]


@dataclass(frozen=True, slots=True, eq=False)
class Suite:
    """A loaded, verified suite.

    Attributes:
        id, version: the suite id and semantic version.
        hash: SHA-256 of the canonical suite manifest.
        manifest: the suite manifest object as loaded.
        scenarios: scenarios in suite order.
        families: families in declaration order.
    """

    id: str
    version: str
    hash: str
    manifest: dict[str, Any] = field(repr=False)
    scenarios: tuple[Scenario, ...] = field(repr=False)
    families: tuple[Family, ...] = field(repr=False)

    def scenario(self, scenario_id: str) -> Scenario:
        """The scenario with ``scenario_id``; SuiteError if there is none."""
        for s in self.scenarios:
            if s.id == scenario_id:
                return s
        raise SuiteError(f"suite {self.id} {self.version} has no scenario {scenario_id!r}")

    def resolve(self, scenario_id: str, scenario_hash: str) -> Scenario:
        """The scenario with this id **and** content hash; SuiteError otherwise."""
        s = self.scenario(scenario_id)
        if s.content_hash != scenario_hash:
            raise SuiteError(
                f"scenario {scenario_id!r} has content hash {s.content_hash} in suite "
                f"{self.id} {self.version}, not {scenario_hash}"
            )
        return s

    def families_of(self, scenario_id: str) -> tuple[str, ...]:
        """Ids of the families containing ``scenario_id``, in declaration order."""
        return tuple(f.id for f in self.families if scenario_id in f.scenarios)


def public_suite_path() -> Path:
    """Folder of the public suite shipped as package data."""
    return Path(str(resources.files("emberbench") / "suites" / PUBLIC_SUITE_ID))


_PUBLIC: list[Suite] = []


def load_suite(path: str | Path | None = None) -> Suite:
    """Load and verify a suite folder (or its ``suite.json``); the public suite by default."""
    if path is None:
        if not _PUBLIC:
            _PUBLIC.append(_load(public_suite_path()))
        return _PUBLIC[0]
    return _load(Path(path))


def _load(path: Path) -> Suite:
    folder = path.parent if path.name == "suite.json" else path
    manifest_path = folder / "suite.json"
    try:
        raw = manifest_path.read_bytes()
    except OSError as exc:
        raise SuiteError(f"{manifest_path}: cannot read suite manifest: {exc.strerror}") from None
    try:
        data = parse_json_strict(raw, where=str(manifest_path))
    except CanonicalFormError as exc:
        raise SuiteError(str(exc)) from None
    where = str(manifest_path)
    if not isinstance(data, dict):
        raise SuiteError(f"{where}: suite manifest must be a JSON object")
    unknown, missing = sorted(set(data) - _SUITE_KEYS), sorted(_SUITE_KEYS - set(data))
    if unknown or missing:
        raise SuiteError(f"{where}: unknown keys {unknown} / missing keys {missing}")
    if data["suite_format"] != SUITE_FORMAT_VERSION:
        raise SuiteError(f"{where}: unsupported suite_format {data['suite_format']!r}")
    if not isinstance(data["suite_id"], str) or not SUITE_ID_RE.match(data["suite_id"]):
        raise SuiteError(f"{where}: invalid suite_id {data['suite_id']!r}")
    if not isinstance(data["suite_version"], str) or not SEMVER_RE.match(data["suite_version"]):
        raise SuiteError(f"{where}: suite_version must be MAJOR.MINOR.PATCH, got {data['suite_version']!r}")
    if not isinstance(data["scenarios"], list) or not data["scenarios"]:
        raise SuiteError(f"{where}: scenarios must be a non-empty list")
    scenarios: list[Scenario] = []
    ids: set[str] = set()
    for i, entry in enumerate(data["scenarios"]):
        if not isinstance(entry, dict) or set(entry) != {"id", "file", "scenario_hash"}:
            raise SuiteError(f"{where}: scenarios[{i}] must have exactly the keys id, file, scenario_hash")
        sid, file, pinned = entry["id"], entry["file"], entry["scenario_hash"]
        if not isinstance(sid, str) or not ID_RE.match(sid) or sid in ids:
            raise SuiteError(f"{where}: scenarios[{i}] has an invalid or duplicate id {sid!r}")
        if not is_sha256_hex(pinned):
            raise SuiteError(f"{where}: scenarios[{i}] scenario_hash is not a SHA-256 hex digest")
        if not isinstance(file, str) or file.startswith("/") or ".." in Path(file).parts:
            raise SuiteError(f"{where}: scenarios[{i}] file must be a relative path inside the suite")
        ids.add(sid)
        try:
            scenario = load_scenario(folder / file)
        except ScenarioError as exc:
            raise SuiteError(str(exc)) from None
        if scenario.id != sid:
            raise SuiteError(f"{folder / file}: scenario id {scenario.id!r} differs from the suite entry {sid!r}")
        if scenario.content_hash != pinned:
            raise SuiteError(
                f"{folder / file}: content hash {scenario.content_hash} differs from the pinned {pinned}"
            )
        scenarios.append(scenario)
    families: list[Family] = []
    fam_ids: set[str] = set()
    if not isinstance(data["description"], str):
        raise SuiteError(f"{where}: description must be a string")
    if not isinstance(data["families"], list):
        raise SuiteError(f"{where}: families must be a list")
    for i, fam in enumerate(data["families"]):
        if not isinstance(fam, dict) or set(fam) != {"id", "description", "scenarios"}:
            raise SuiteError(f"{where}: families[{i}] must have exactly the keys id, description, scenarios")
        fid = fam["id"]
        if not isinstance(fid, str) or not ID_RE.match(fid) or fid in fam_ids:
            raise SuiteError(f"{where}: families[{i}] has an invalid or duplicate id {fid!r}")
        if not isinstance(fam["description"], str):
            raise SuiteError(f"{where}: family {fid!r} description must be a string")
        members = fam["scenarios"]
        if not isinstance(members, list) or len(set(members)) != len(members):
            raise SuiteError(f"{where}: family {fid!r} must list distinct scenario ids")
        for m in members:
            if m not in ids:
                raise SuiteError(f"{where}: family {fid!r} names unknown scenario {m!r}")
        fam_ids.add(fid)
        families.append(Family(fid, fam["description"], tuple(members)))
    return Suite(
        id=data["suite_id"], version=data["suite_version"], hash=digest(data), manifest=data,
        scenarios=tuple(scenarios), families=tuple(families),
    )
