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

import os
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ..io.canonical import digest, is_sha256_hex
from ..errors import ScenarioError, SuiteError
from ..io.input_policy import SUITE, load_json
from .scenario import ID_RE, Scenario, load_scenario, read_scenario_file, scenario_from_dict
from .scenario_rules import scenario_problems
from ..io.versions import SUITE_FORMAT_VERSION

PUBLIC_SUITE_ID = "emberbench-v1-public"
GENERATED_SUITE_ID = "emberbench-v1-generated"
SHIPPED_SUITES = (PUBLIC_SUITE_ID, GENERATED_SUITE_ID)
"""Suites shipped as package data; a ``--suite`` argument may name them by id."""
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
    return shipped_suite_path(PUBLIC_SUITE_ID)


def shipped_suite_path(suite_id: str) -> Path:
    """Folder of a suite shipped as package data (one of :data:`SHIPPED_SUITES`)."""
    if suite_id not in SHIPPED_SUITES:
        raise SuiteError(f"no shipped suite {suite_id!r} (shipped: {', '.join(SHIPPED_SUITES)})")
    return Path(str(resources.files("emberbench") / "suites" / suite_id))


def suite_folder(path: str | os.PathLike[str] | None = None) -> Path:
    """The folder a suite argument names: a shipped suite id, a folder, or a ``suite.json`` in one.

    None names the public suite. A shipped suite id always names the shipped
    suite; a folder of the same name is reached by a path with a separator
    (``./emberbench-v1-public/suite.json``) or an absolute path.
    """
    name = PUBLIC_SUITE_ID if path is None else os.fspath(path)
    if name in SHIPPED_SUITES:
        return shipped_suite_path(name)
    p = Path(name)
    return p.parent if p.name == "suite.json" else p


_SHIPPED: dict[str, Suite] = {}


def load_suite(path: str | os.PathLike[str] | None = None) -> Suite:
    """Load and verify a suite: a folder (or its ``suite.json``), a shipped suite id, or by default the public suite.

    Shipped suites are loaded once per process.
    """
    name = PUBLIC_SUITE_ID if path is None else os.fspath(path)
    if name in SHIPPED_SUITES:
        if name not in _SHIPPED:
            _SHIPPED[name] = _load(shipped_suite_path(name))
        return _SHIPPED[name]
    return _load(Path(name))


def _load(path: Path) -> Suite:
    folder = path.parent if path.name == "suite.json" else path
    manifest_path = folder / "suite.json"
    suite = check_suite_manifest(read_suite_manifest(manifest_path), folder, str(manifest_path))[1]
    assert suite is not None
    return suite


def read_suite_manifest(manifest_path: Path) -> Any:
    """Read and strictly parse a ``suite.json`` under the input policy (no validation).

    Raises:
        SuiteError: the file breaks the input policy (not a regular file,
            over the cap, not strict JSON); the message names it.
    """
    return load_json(manifest_path, SUITE, error=SuiteError)


def check_suite_manifest(data: Any, folder: Path, where: str, *,
                         collect: bool = False) -> tuple[list[str], Suite | None]:
    """Check a parsed suite manifest and every scenario file it names.

    Args:
        data: the parsed ``suite.json``.
        folder: the suite folder (scenario paths are relative to it).
        where: names ``suite.json`` in messages.
        collect: False (loading) raises SuiteError at the first problem;
            True (``emberbench suite validate``) lists every problem, every
            scenario file's own problems included, and goes on wherever it can.

    Returns:
        ``(problems, suite)``: the suite is None when there is a problem.
    """
    problems: list[str] = []

    def report(message: str) -> None:
        if not collect:
            raise SuiteError(message)
        problems.append(message)

    if not isinstance(data, dict):
        report(f"{where}: suite manifest must be a JSON object")
        return problems, None
    unknown, missing = sorted(set(data) - _SUITE_KEYS), sorted(_SUITE_KEYS - set(data))
    if unknown or missing:
        report(f"{where}: unknown keys {unknown} / missing keys {missing}")
    if "suite_format" in data and data["suite_format"] != SUITE_FORMAT_VERSION:
        report(f"{where}: unsupported suite_format {data['suite_format']!r}")
    if "suite_id" in data and (not isinstance(data["suite_id"], str) or not SUITE_ID_RE.fullmatch(data["suite_id"])):
        report(f"{where}: invalid suite_id {data['suite_id']!r}")
    if "suite_version" in data and (not isinstance(data["suite_version"], str)
                                    or not SEMVER_RE.fullmatch(data["suite_version"])):
        report(f"{where}: suite_version must be MAJOR.MINOR.PATCH, got {data['suite_version']!r}")
    entries = data.get("scenarios", [])
    if "scenarios" in data and (not isinstance(entries, list) or not entries):
        report(f"{where}: scenarios must be a non-empty list")
        entries = []
    scenarios: list[Scenario] = []
    ids: set[str] = set()
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or set(entry) != {"id", "file", "scenario_hash"}:
            report(f"{where}: scenarios[{i}] must have exactly the keys id, file, scenario_hash")
            continue
        sid, file, pinned = entry["id"], entry["file"], entry["scenario_hash"]
        if not isinstance(sid, str) or not ID_RE.fullmatch(sid) or sid in ids:
            report(f"{where}: scenarios[{i}] has an invalid or duplicate id {sid!r}")
        else:
            ids.add(sid)
        if not is_sha256_hex(pinned):
            report(f"{where}: scenarios[{i}] scenario_hash is not a SHA-256 hex digest")
        if not isinstance(file, str) or file.startswith("/") or ".." in Path(file).parts:
            report(f"{where}: scenarios[{i}] file must be a relative path inside the suite")
            continue
        scenario = _scenario(folder / file, report, collect)
        if scenario is None:
            continue
        if scenario.id != sid:
            report(f"{folder / file}: scenario id {scenario.id!r} differs from the suite entry {sid!r}")
        if is_sha256_hex(pinned) and scenario.content_hash != pinned:
            report(f"{folder / file}: content hash {scenario.content_hash} differs from the pinned {pinned}")
        scenarios.append(scenario)
    families: list[Family] = []
    fam_ids: set[str] = set()
    if "description" in data and not isinstance(data["description"], str):
        report(f"{where}: description must be a string")
    declared = data.get("families", [])
    if "families" in data and not isinstance(declared, list):
        report(f"{where}: families must be a list")
        declared = []
    for i, fam in enumerate(declared):
        if not isinstance(fam, dict) or set(fam) != {"id", "description", "scenarios"}:
            report(f"{where}: families[{i}] must have exactly the keys id, description, scenarios")
            continue
        fid = fam["id"]
        if not isinstance(fid, str) or not ID_RE.fullmatch(fid) or fid in fam_ids:
            report(f"{where}: families[{i}] has an invalid or duplicate id {fid!r}")
        if not isinstance(fam["description"], str):
            report(f"{where}: family {fid!r} description must be a string")
        members = fam["scenarios"]
        if not isinstance(members, list) or not _distinct(members):
            report(f"{where}: family {fid!r} must list distinct scenario ids")
            continue
        for m in members:
            if m not in ids:
                report(f"{where}: family {fid!r} names unknown scenario {m!r}")
        if isinstance(fid, str):
            fam_ids.add(fid)
        families.append(Family(fid, fam["description"], tuple(members)))
    if problems:
        return problems, None
    return problems, Suite(
        id=data["suite_id"], version=data["suite_version"], hash=digest(data), manifest=data,
        scenarios=tuple(scenarios), families=tuple(families),
    )


def _distinct(items: list[Any]) -> bool:
    """No item twice (an unhashable item, such as a list, counts as not distinct)."""
    try:
        return len(set(items)) == len(items)
    except TypeError:
        return False


def _scenario(path: Path, report: Any, collect: bool) -> Scenario | None:
    """Load one scenario file; report its problem (or, when collecting, every problem)."""
    if not collect:
        try:
            return load_scenario(path)
        except ScenarioError as exc:
            report(str(exc))
            return None
    try:
        data = read_scenario_file(path)
    except ScenarioError as exc:
        report(str(exc))
        return None
    found = scenario_problems(data, where=str(path))
    for problem in found:
        report(problem)
    return None if found else scenario_from_dict(data, where=str(path))
