"""Tools over whole suites: validation that lists every problem, and the difference between two suites.

:func:`validate_suite_folder` runs every rule the suite loader runs (the
same code, :func:`emberbench.sim.suite.check_suite_manifest`, in collecting
mode), every scenario file's rules (:mod:`emberbench.sim.scenario_rules`), and
checks a generation record if the folder has one. Files in ``scenarios/``
that the manifest does not list are reported as notes: they break no rule
(the loader never opens them) but are usually left over.

:func:`diff_suites` compares two loaded suites scenario by scenario (by id,
then content hash) and family by family.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..io.canonical import digest
from ..errors import EmberError, SuiteError
from ..sim.scenario import Scenario
from ..sim.suite import SHIPPED_SUITES, Suite, check_suite_manifest, load_suite, read_suite_manifest, suite_folder


@dataclass(frozen=True, slots=True)
class SuiteReport:
    """What :func:`validate_suite_folder` found.

    Attributes:
        folder: the suite folder.
        problems: every rule broken, one line each (empty: the suite is valid).
        notes: things worth knowing that break no rule.
        suite: the loaded suite when there is no problem.
    """

    folder: Path
    problems: tuple[str, ...]
    notes: tuple[str, ...]
    suite: Suite | None

    @property
    def ok(self) -> bool:
        """True when no rule is broken."""
        return not self.problems


def validate_suite_folder(path: str | os.PathLike[str]) -> SuiteReport:
    """Check every rule of the suite at ``path`` (a folder, its ``suite.json`` or a shipped suite id)."""
    from .provenance import GENERATION_FILE, load_generation

    folder = suite_folder(path)
    manifest_path = folder / "suite.json"
    try:
        data = read_suite_manifest(manifest_path)
    except SuiteError as exc:
        return SuiteReport(folder, (str(exc),), (), None)
    problems, suite = check_suite_manifest(data, folder, str(manifest_path), collect=True)
    notes = []
    try:
        record = load_generation(folder)
    except EmberError as exc:
        problems.append(str(exc))
        record = None
    if record is not None and isinstance(data, dict) and record.suite_hash != digest(data):
        problems.append(f"{folder / GENERATION_FILE}: describes suite {record.suite_hash}, but suite.json hashes "
                        f"to {digest(data)}")
    listed = set()
    if isinstance(data, dict) and isinstance(data.get("scenarios"), list):
        listed = {os.path.normpath(e["file"]) for e in data["scenarios"]
                  if isinstance(e, dict) and isinstance(e.get("file"), str)}
    scenario_dir = folder / "scenarios"
    if scenario_dir.is_dir():
        for extra in sorted(scenario_dir.glob("*.json")):
            if os.path.normpath(extra.relative_to(folder)) not in listed:
                notes.append(f"{extra}: not listed in suite.json (never read)")
    return SuiteReport(folder, tuple(problems), tuple(notes), suite)


@dataclass(frozen=True, slots=True)
class SuiteDiff:
    """How suite B differs from suite A.

    Attributes:
        added: ``(id, hash)`` of scenarios only in B, in B's order.
        removed: ``(id, hash)`` of scenarios only in A, in A's order.
        changed: ``(id, hash in A, hash in B)``, in B's order.
        unchanged: scenarios with the same id and hash in both.
        reordered: the scenarios both suites share come in another order.
        families: ids of families added, removed or changed (members or
            description), A's order then B's new ones.
    """

    added: tuple[tuple[str, str], ...]
    removed: tuple[tuple[str, str], ...]
    changed: tuple[tuple[str, str, str], ...]
    unchanged: int
    reordered: bool
    families: tuple[str, ...]

    @property
    def identical_scenarios(self) -> bool:
        """True when both suites hold the same scenarios (maybe in another order)."""
        return not (self.added or self.removed or self.changed)


def diff_suites(a: Suite, b: Suite) -> SuiteDiff:
    """Compare two suites by scenario id and content hash, and by family."""
    in_a = {s.id: s.content_hash for s in a.scenarios}
    in_b = {s.id: s.content_hash for s in b.scenarios}
    added = tuple((s.id, s.content_hash) for s in b.scenarios if s.id not in in_a)
    removed = tuple((s.id, s.content_hash) for s in a.scenarios if s.id not in in_b)
    changed = tuple((s.id, in_a[s.id], s.content_hash) for s in b.scenarios
                    if s.id in in_a and in_a[s.id] != s.content_hash)
    shared_a = [s.id for s in a.scenarios if s.id in in_b]
    shared_b = [s.id for s in b.scenarios if s.id in in_a]
    fam_a = {f.id: (f.description, f.scenarios) for f in a.families}
    fam_b = {f.id: (f.description, f.scenarios) for f in b.families}
    families = tuple([f.id for f in a.families if fam_b.get(f.id) != fam_a[f.id]]
                     + [f.id for f in b.families if f.id not in fam_a])
    return SuiteDiff(added, removed, changed, len(shared_a) - len(changed), shared_a != shared_b, families)


def locate_scenario(scenario_id: str, suite: str | os.PathLike[str] | None = None) -> tuple[Suite, Scenario]:
    """The scenario ``scenario_id`` of ``suite``, or of the first shipped suite that has it when ``suite`` is None.

    Raises:
        SuiteError: no such scenario.
    """
    if suite is not None:
        found = load_suite(suite)
        return found, found.scenario(scenario_id)
    for name in SHIPPED_SUITES:
        found = load_suite(name)
        if any(s.id == scenario_id for s in found.scenarios):
            return found, found.scenario(scenario_id)
    first = load_suite(SHIPPED_SUITES[0])
    raise SuiteError(f"suite {first.id} {first.version} has no scenario {scenario_id!r}, nor has any other shipped "
                     f"suite ({', '.join(SHIPPED_SUITES[1:])}); give --suite for another suite")
