"""Difficulty calibration: the baselines' outcomes on every scenario, and a difficulty tier.

Each scenario is played by the ``stay``, ``greedy`` and ``fire-aware``
baselines under every calibration seed (default 0, 1, 2). Per scenario and
policy the file keeps the summed counts (evacuated, casualties, stranded,
steps), and a tier by rule 1.0:

    lost = casualties + stranded of the better of greedy and fire-aware
    f    = lost / (population x seeds)
    easy: f <= 1/20   medium: f <= 1/5   hard: f <= 1/2   extreme: f > 1/2

Only integers are compared, so a tier never depends on rounding. The work is
one pure job per (scenario, seed) handed to a *mapper* (in process by default, Ray
tasks with :class:`emberbench.cluster.RayMapper`): results come back in job
order, so the calibration file is byte-identical wherever it was computed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..io.atomic import atomic_write_bytes
from ..io.canonical import canonical_bytes, is_sha256_hex
from ..errors import CalibrationError
from ..io.input_policy import InputKind, MiB, load_json
from ..sim.scenario import ID_RE, Scenario
from ..sim.suite import SEMVER_RE, SUITE_ID_RE, Suite
from ..io.versions import CALIBRATION_FORMAT_VERSION, METRICS_VERSION, SIMULATOR_VERSION

POLICIES = ("stay", "greedy", "fire-aware")
DEFAULT_SEEDS = (0, 1, 2)
TIERS = ("easy", "medium", "hard", "extreme")
TIER_RULE = "1.0"
TIER_BOUNDS = (Fraction(1, 20), Fraction(1, 5), Fraction(1, 2))
"""Upper bounds (inclusive) of the lost fraction for easy, medium and hard."""
COUNTS = ("evacuated", "casualties", "stranded", "steps")
CALIBRATION = InputKind("calibration file", 64 * MiB)
_TOP = ("calibration_format", "suite_id", "suite_version", "suite_hash", "simulator_version", "metrics_version",
        "policies", "seeds", "tier_rule", "scenarios")

Mapper = Callable[[Callable[[Any], Any], Iterable[Any]], list[Any]]


@dataclass(frozen=True, slots=True)
class ScenarioCalibration:
    """The baselines' summed counts on one scenario, and its tier.

    Attributes:
        results: ``(policy, {count: total})`` in :data:`POLICIES` order.
    """

    id: str
    scenario_hash: str
    population: int
    episodes: int
    results: tuple[tuple[str, tuple[tuple[str, int], ...]], ...]

    def total(self, policy: str, count: str) -> int:
        """One summed count of one policy."""
        return dict(dict(self.results)[policy])[count]

    def lost(self, policy: str) -> int:
        """Casualties plus stranded people of ``policy``, summed over the seeds."""
        return self.total(policy, "casualties") + self.total(policy, "stranded")

    @property
    def tier(self) -> str:
        """The difficulty tier by rule 1.0 (module docstring)."""
        return tier_of(min(self.lost("greedy"), self.lost("fire-aware")), self.population * self.episodes)

    def to_dict(self) -> dict[str, Any]:
        """The scenario's entry in the calibration file."""
        return {"id": self.id, "scenario_hash": self.scenario_hash, "population": self.population,
                "tier": self.tier, "results": {p: dict(c) for p, c in self.results}}


def tier_of(lost: int, people: int) -> str:
    """The tier of ``lost`` people out of ``people`` (people x seeds) under rule 1.0."""
    for tier, bound in zip(TIERS, TIER_BOUNDS):
        if lost * bound.denominator <= people * bound.numerator:
            return tier
    return TIERS[-1]


def play_baselines(job: tuple[Scenario, int]) -> tuple[tuple[int, ...], ...]:
    """Every baseline's counts on one scenario under one seed (a pure job for any mapper).

    Returns one row of :data:`COUNTS` per policy, in :data:`POLICIES` order.
    The three episodes share the seed's fire timeline, computed once.
    """
    from ..records.episode import play_episode
    from ..policies import BUILTIN_POLICIES

    scenario, seed = job
    rows = []
    for policy in POLICIES:
        counts = play_episode(scenario, seed, BUILTIN_POLICIES[policy]())[1].counts_dict()
        rows.append(tuple(counts[key] for key in COUNTS))
    return tuple(rows)


def calibrate_scenarios(scenarios: Sequence[Scenario], seeds: Sequence[int], *,
                        mapper: Mapper | None = None) -> list[ScenarioCalibration]:
    """Calibrate ``scenarios`` (in their order) under ``seeds``.

    The work goes to the mapper as one job per (scenario, seed): the longest
    job is then a fraction of the longest scenario, which keeps parallel
    workers evenly busy to the end, and each fire timeline is still computed
    once. Counts are integers, so summing them over seeds is exact.
    """
    seeds = check_seeds(seeds)
    rows = (mapper or in_process)(play_baselines, ((scenario, seed) for scenario in scenarios for seed in seeds))
    out = []
    for i, scenario in enumerate(scenarios):
        per_seed = rows[i * len(seeds):(i + 1) * len(seeds)]
        results = tuple(
            (policy, tuple((key, sum(row[p][k] for row in per_seed)) for k, key in enumerate(COUNTS)))
            for p, policy in enumerate(POLICIES))
        out.append(ScenarioCalibration(scenario.id, scenario.content_hash, scenario.population, len(seeds), results))
    return out


def calibrate_scenario(job: tuple[Scenario, tuple[int, ...]]) -> ScenarioCalibration:
    """Play every baseline on one scenario under every seed, in this process."""
    scenario, seeds = job
    return calibrate_scenarios([scenario], seeds)[0]


def in_process(function: Callable[[Any], Any], jobs: Iterable[Any]) -> list[Any]:
    """The default mapper: every job in this process, in order."""
    return [function(job) for job in jobs]


@dataclass(frozen=True, slots=True)
class Calibration:
    """A calibration of one suite under some seeds (scenarios in suite order)."""

    suite_id: str
    suite_version: str
    suite_hash: str
    seeds: tuple[int, ...]
    scenarios: tuple[ScenarioCalibration, ...]

    def to_dict(self) -> dict[str, Any]:
        """The calibration file's JSON object."""
        return {
            "calibration_format": CALIBRATION_FORMAT_VERSION, "suite_id": self.suite_id,
            "suite_version": self.suite_version, "suite_hash": self.suite_hash,
            "simulator_version": SIMULATOR_VERSION, "metrics_version": METRICS_VERSION,
            "policies": list(POLICIES), "seeds": list(self.seeds), "tier_rule": TIER_RULE,
            "scenarios": [s.to_dict() for s in self.scenarios],
        }

    def tiers(self) -> dict[str, str]:
        """Tier by scenario id."""
        return {s.id: s.tier for s in self.scenarios}


def check_seeds(seeds: Sequence[int]) -> tuple[int, ...]:
    """Calibration seeds: a non-empty list of distinct integers in ``[0, 2**64 - 1]``.

    Raises:
        CalibrationError: otherwise.
    """
    if not isinstance(seeds, (list, tuple)) or not seeds or len(set(seeds)) != len(seeds) or not all(
            isinstance(s, int) and not isinstance(s, bool) and 0 <= s < (1 << 64) for s in seeds):
        raise CalibrationError(f"calibration seeds must be distinct integers in [0, 2**64 - 1], got {seeds!r}")
    return tuple(seeds)


def calibrate_suite(suite: Suite, seeds: Sequence[int] = DEFAULT_SEEDS, *, mapper: Mapper | None = None) -> Calibration:
    """Calibrate every scenario of ``suite`` (in suite order) under ``seeds``."""
    seeds = check_seeds(seeds)
    results = calibrate_scenarios(suite.scenarios, seeds, mapper=mapper)
    return Calibration(suite.id, suite.version, suite.hash, seeds, tuple(results))


def write_calibration(calibration: Calibration, path: str | os.PathLike[str]) -> None:
    """Write the calibration file (canonical JSON and a newline), atomically."""
    atomic_write_bytes(path, canonical_bytes(calibration.to_dict()) + b"\n")


def load_calibration(path: str | os.PathLike[str], suite: Suite | None = None) -> Calibration:
    """Read and check a calibration file; with ``suite``, also that it calibrates exactly that suite.

    Raises:
        CalibrationError: naming the file and the first problem.
    """
    where = os.fspath(path)
    data = load_json(path, CALIBRATION, error=CalibrationError)

    def fail(message: str) -> CalibrationError:
        return CalibrationError(f"{where}: {message}")

    if not isinstance(data, dict):
        raise fail("a calibration file must be a JSON object")
    if data.get("calibration_format") != CALIBRATION_FORMAT_VERSION:
        raise fail(f"unsupported calibration_format {data.get('calibration_format')!r} (this version reads "
                   f"{CALIBRATION_FORMAT_VERSION!r})")
    if set(data) != set(_TOP):
        raise fail(f"keys must be exactly {', '.join(_TOP)}")
    for key, want in (("simulator_version", SIMULATOR_VERSION), ("metrics_version", METRICS_VERSION),
                      ("policies", list(POLICIES)), ("tier_rule", TIER_RULE)):
        if data[key] != want:
            raise fail(f"{key} is {data[key]!r}; this version calibrates with {want!r}")
    if (not isinstance(data["suite_id"], str) or not SUITE_ID_RE.fullmatch(data["suite_id"])
            or not isinstance(data["suite_version"], str) or not SEMVER_RE.fullmatch(data["suite_version"])
            or not is_sha256_hex(data["suite_hash"])):
        raise fail("suite_id, suite_version or suite_hash is malformed")
    try:
        seeds = check_seeds(data["seeds"])
    except CalibrationError as exc:
        raise fail(str(exc)) from None
    if not isinstance(data["scenarios"], list):
        raise fail("scenarios must be a list")
    entries = tuple(_entry(e, i, len(seeds), fail) for i, e in enumerate(data["scenarios"]))
    calibration = Calibration(data["suite_id"], data["suite_version"], data["suite_hash"], seeds, entries)
    if calibration.to_dict() != data:
        raise fail("the file is not what its counts give (a tier or a header field does not match)")
    if suite is not None:
        pinned = [(s.id, s.content_hash) for s in suite.scenarios]
        if (data["suite_hash"] != suite.hash or [(e.id, e.scenario_hash) for e in entries] != pinned):
            raise fail(f"it calibrates suite {data['suite_hash']}, not {suite.id} {suite.version} ({suite.hash})")
    return calibration


def ok_int(value: object) -> bool:
    """A non-negative ``int`` that is not a ``bool``."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _entry(e: object, i: int, episodes: int, fail: Callable[[str], CalibrationError]) -> ScenarioCalibration:
    if not isinstance(e, dict) or set(e) != {"id", "scenario_hash", "population", "tier", "results"}:
        raise fail(f"scenarios[{i}] must have exactly the keys id, scenario_hash, population, tier, results")
    results = e["results"]
    if (not isinstance(e["id"], str) or not ID_RE.fullmatch(e["id"]) or not is_sha256_hex(e["scenario_hash"])
            or not ok_int(e["population"]) or not e["population"] or not isinstance(results, dict)
            or set(results) != set(POLICIES)):
        raise fail(f"scenarios[{i}] is malformed")
    out = []
    for policy in POLICIES:
        counts = results[policy]
        if not isinstance(counts, dict) or set(counts) != set(COUNTS) or not all(map(ok_int, counts.values())):
            raise fail(f"scenarios[{i}].results.{policy} must hold the counts {', '.join(COUNTS)}")
        if counts["evacuated"] + counts["casualties"] + counts["stranded"] != e["population"] * episodes:
            raise fail(f"scenarios[{i}].results.{policy}: evacuated, casualties and stranded do not add up to "
                       "population x seeds")
        out.append((policy, tuple((k, counts[k]) for k in COUNTS)))
    return ScenarioCalibration(e["id"], e["scenario_hash"], e["population"], episodes, tuple(out))


def family_rates(calibration: Calibration, suite: Suite) -> list[tuple[str, int, dict[str, Fraction]]]:
    """Casualty rate of each baseline overall and per family: ``(group, scenarios, {policy: rate})``.

    A rate is the family's casualties over its people x seeds (episodes
    weighted by their people), as an exact fraction.
    """
    by_id = {s.id: s for s in calibration.scenarios}
    groups = [("overall", [s.id for s in suite.scenarios])] + [(f.id, list(f.scenarios)) for f in suite.families]
    rows = []
    for name, members in groups:
        entries = [by_id[m] for m in members if m in by_id]
        people = sum(e.population * e.episodes for e in entries)
        if people:
            rates = {p: Fraction(sum(e.total(p, "casualties") for e in entries), people) for p in POLICIES}
            rows.append((name, len(entries), rates))
    return rows
