"""Generating a whole suite: scenarios, families, the suite manifest and the generation record.

:func:`generate_suite` is a pure function of (recipe, count, seed, suite id
and version, whether the seed is secret, the tier filter). Without a tier
filter the suite holds scenarios 0 to count - 1; with one, candidates
0, 1, 2... are generated and calibrated in order and the first ``count``
whose tier is in range are kept, so the result does not depend on how the
calibration was spread over processes.

The *generation record* (``generation.json`` beside ``suite.json``) says how
the suite was made: the full recipe, the count, the tier filter, the
generator version, and the seed unless it is secret. A secret seed is never
written anywhere, not even in the suite description.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..io.canonical import digest
from ..errors import GenerationError
from ..sim.scenario import Scenario
from ..sim.suite import SEMVER_RE, SUITE_ID_RE
from ..io.versions import (
    GENERATION_FORMAT_VERSION,
    GENERATOR_VERSION,
    SIMULATOR_VERSION,
    SUITE_FORMAT_VERSION,
)
from .calibrate import TIER_RULE, TIERS, Mapper, calibrate_scenarios, check_seeds, in_process
from .features import FAMILIES
from .generator import GeneratedScenario, generate_scenario
from .recipe import Recipe

MAX_COUNT = 10_000
MAX_CANDIDATES = 100_000
"""With a tier filter, give up after this many candidates (or 50 per wanted scenario)."""

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class TierFilter:
    """Keep only scenarios whose tier (calibration rule 1.0 under ``seeds``) is in ``[low, high]``."""

    low: str
    high: str
    seeds: tuple[int, ...]
    simulator_version: str = SIMULATOR_VERSION

    def __post_init__(self) -> None:
        if self.low not in TIERS or self.high not in TIERS:
            raise GenerationError(f"tiers are {', '.join(TIERS)}; got {self.low!r} to {self.high!r}")
        if TIERS.index(self.low) > TIERS.index(self.high):
            raise GenerationError(f"--min-tier {self.low} is above --max-tier {self.high}")
        object.__setattr__(self, "seeds", check_seeds(self.seeds))

    def keeps(self, tier: str) -> bool:
        """Whether a scenario of ``tier`` is kept."""
        return TIERS.index(self.low) <= TIERS.index(tier) <= TIERS.index(self.high)

    def to_dict(self) -> dict[str, Any]:
        """The filter as recorded in the generation record (with what the tiers depend on)."""
        return {"min_tier": self.low, "max_tier": self.high, "calibration_seeds": list(self.seeds),
                "tier_rule": TIER_RULE, "simulator_version": self.simulator_version}


@dataclass(frozen=True, slots=True, eq=False)
class GeneratedSuite:
    """A generated suite, ready to write.

    Attributes:
        manifest: the ``suite.json`` object.
        scenarios: the scenarios, in suite order.
        generation: the ``generation.json`` object.
    """

    manifest: dict[str, Any]
    scenarios: tuple[Scenario, ...]
    generation: dict[str, Any]

    @property
    def hash(self) -> str:
        """The suite hash (SHA-256 of the canonical suite manifest)."""
        return digest(self.manifest)


def generate_suite(recipe: Recipe, count: int, seed: int, *, suite_id: str | None = None,
                   suite_version: str = "1.0.0", secret: bool = False, tiers: TierFilter | None = None,
                   mapper: Mapper | None = None, progress: Progress | None = None) -> GeneratedSuite:
    """Generate a complete suite.

    Args:
        recipe: what to draw.
        count: scenarios in the suite, 1 to :data:`MAX_COUNT`.
        seed: the suite seed, in ``[0, 2**64 - 1]``.
        suite_id: default ``generated-<recipe name>``.
        suite_version: ``MAJOR.MINOR.PATCH``.
        secret: the seed is secret: it is left out of the description and
            of the generation record.
        tiers: keep only scenarios in these tiers.
        mapper: runs the calibration jobs of a tier filter (default: in process).
        progress: called with (scenarios kept, count) as generation goes.

    Raises:
        GenerationError: bad arguments, an unsatisfiable recipe, or too few
            candidates in the wanted tiers.
    """
    suite_id = suite_id if suite_id is not None else f"generated-{recipe.name}"
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_COUNT:
        raise GenerationError(f"count must be an integer in [1, {MAX_COUNT}], got {count!r}")
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < (1 << 64):
        raise GenerationError(f"seed must be an integer in [0, 2**64 - 1], got {seed!r}")
    if not isinstance(suite_id, str) or not SUITE_ID_RE.fullmatch(suite_id):
        raise GenerationError(f"invalid suite id {suite_id!r} (lowercase letters, digits, '.' and '-', at most 80)")
    if not isinstance(suite_version, str) or not SEMVER_RE.fullmatch(suite_version):
        raise GenerationError(f"suite version must be MAJOR.MINOR.PATCH, got {suite_version!r}")
    report = progress or (lambda done, total: None)
    if tiers is None:
        kept = []
        for i in range(count):
            kept.append(generate_scenario(recipe, seed, i))
            report(i + 1, count)
    else:
        kept = _filtered(recipe, count, seed, tiers, mapper or in_process, report)
    return _assemble(recipe, count, seed, suite_id, suite_version, secret, tiers, kept)


def _filtered(recipe: Recipe, count: int, seed: int, tiers: TierFilter, mapper: Mapper,
              report: Progress) -> list[GeneratedScenario]:
    cap = min(MAX_CANDIDATES, 50 * count)
    kept: list[GeneratedScenario] = []
    index = 0
    while len(kept) < count:
        if index >= cap:
            raise GenerationError(
                f"only {len(kept)} of the first {cap} scenarios of recipe {recipe.name!r} are in tiers "
                f"{tiers.low} to {tiers.high}; widen the tiers or change the recipe")
        batch = [generate_scenario(recipe, seed, i) for i in range(index, min(cap, index + 16))]
        index += len(batch)
        calibrations = calibrate_scenarios([g.scenario for g in batch], tiers.seeds, mapper=mapper)
        for g, cal in zip(batch, calibrations):
            if len(kept) < count and tiers.keeps(cal.tier):
                kept.append(g)
        report(len(kept), count)
    return kept


def suite_description(recipe: Recipe, count: int, seed: int, secret: bool, tiers: TierFilter | None) -> str:
    """The suite's description: how it was generated (never a secret seed)."""
    seed_text = "a secret seed" if secret else f"seed {seed}"
    tier_text = "" if tiers is None else f", keeping tiers {tiers.low} to {tiers.high}"
    return (f"{count} scenarios generated by EMBERBench generator {GENERATOR_VERSION} from recipe "
            f"{recipe.name!r} (sha256 {recipe.hash}) with {seed_text}{tier_text}.")


def _assemble(recipe: Recipe, count: int, seed: int, suite_id: str, suite_version: str, secret: bool,
              tiers: TierFilter | None, kept: list[GeneratedScenario]) -> GeneratedSuite:
    members: dict[str, list[str]] = {f: [] for f, _ in FAMILIES}
    for g in kept:
        for family in g.families:
            members[family].append(g.scenario.id)
    manifest = {
        "suite_format": SUITE_FORMAT_VERSION,
        "suite_id": suite_id,
        "suite_version": suite_version,
        "description": suite_description(recipe, count, seed, secret, tiers),
        "scenarios": [{"id": g.scenario.id, "file": f"scenarios/{g.scenario.id}.json",
                       "scenario_hash": g.scenario.content_hash} for g in kept],
        "families": [{"id": f, "description": text, "scenarios": members[f]} for f, text in FAMILIES if members[f]],
    }
    generation = generation_record(recipe, count, None if secret else seed, tiers, suite_id, suite_version,
                                   digest(manifest))
    return GeneratedSuite(manifest, tuple(g.scenario for g in kept), generation)


def generation_record(recipe: Recipe, count: int, seed: int | None, tiers: TierFilter | None, suite_id: str,
                      suite_version: str, suite_hash: str) -> dict[str, Any]:
    """The ``generation.json`` object (``seed`` None for a secret seed)."""
    return {
        "generation_format": GENERATION_FORMAT_VERSION,
        "generator_version": GENERATOR_VERSION,
        "recipe": recipe.to_dict(),
        "recipe_hash": recipe.hash,
        "count": count,
        "seed": seed,
        "seed_secret": seed is None,
        "tiers": None if tiers is None else tiers.to_dict(),
        "suite_id": suite_id,
        "suite_version": suite_version,
        "suite_hash": suite_hash,
    }
