"""The generation record (``generation.json``, format 1.0): reading it, and regenerating its suite.

The record is written beside ``suite.json`` by ``emberbench suite generate``.
It is not part of the suite hash (a suite is the same suite wherever it came
from), so every use checks it against the suite it sits beside: its
``suite_hash`` must be the suite's hash. Given the seed, :func:`regenerate`
rebuilds the suite from the record alone, which is how a revealed seed
proves that a committed suite is what the recipe draws.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..io.canonical import is_sha256_hex
from ..errors import GenerationError, RecipeError
from ..io.input_policy import InputKind, MiB, load_json
from ..sim.suite import SEMVER_RE, SUITE_ID_RE
from ..io.versions import GENERATION_FORMAT_VERSION, GENERATOR_VERSION, SIMULATOR_VERSION
from .build import GeneratedSuite, TierFilter, generate_suite, generation_record
from .calibrate import TIER_RULE, Mapper
from .recipe import Recipe, recipe_from_dict

GENERATION = InputKind("generation record", 1 * MiB)
GENERATION_FILE = "generation.json"
_KEYS = ("generation_format", "generator_version", "recipe", "recipe_hash", "count", "seed", "seed_secret", "tiers",
         "suite_id", "suite_version", "suite_hash")
_TIER_KEYS = ("min_tier", "max_tier", "calibration_seeds", "tier_rule", "simulator_version")


@dataclass(frozen=True, slots=True)
class GenerationRecord:
    """How a suite was generated. ``seed`` is None when it was secret."""

    generator_version: str
    recipe: Recipe
    count: int
    seed: int | None
    tiers: TierFilter | None
    suite_id: str
    suite_version: str
    suite_hash: str

    def to_dict(self) -> dict[str, Any]:
        """The ``generation.json`` object."""
        out = generation_record(self.recipe, self.count, self.seed, self.tiers, self.suite_id, self.suite_version,
                                self.suite_hash)
        out["generator_version"] = self.generator_version
        return out


def generation_from_dict(data: object, *, where: str) -> GenerationRecord:
    """Validate a parsed generation record.

    Raises:
        GenerationError: the first problem, prefixed with ``where``.
    """
    def fail(message: str) -> GenerationError:
        return GenerationError(f"{where}: {message}")

    if not isinstance(data, dict):
        raise fail("a generation record must be a JSON object")
    if data.get("generation_format") != GENERATION_FORMAT_VERSION:
        raise fail(f"unsupported generation_format {data.get('generation_format')!r} (this version reads "
                   f"{GENERATION_FORMAT_VERSION!r})")
    if set(data) != set(_KEYS):
        raise fail(f"keys must be exactly {', '.join(_KEYS)}")
    if data["generator_version"] != GENERATOR_VERSION:
        raise fail(f"made by generator {data['generator_version']!r}; this is generator {GENERATOR_VERSION!r}, "
                   "which cannot reproduce it")
    try:
        recipe = recipe_from_dict(data["recipe"], where=f"{where}: recipe")
    except RecipeError as exc:
        raise fail(str(exc)) from None
    tiers = data["tiers"]
    if tiers is not None:
        if not isinstance(tiers, dict) or set(tiers) != set(_TIER_KEYS) or tiers["tier_rule"] != TIER_RULE:
            raise fail(f"tiers must be null or an object with exactly {', '.join(_TIER_KEYS)} (tier rule {TIER_RULE})")
        try:
            tiers = TierFilter(tiers["min_tier"], tiers["max_tier"], tiers["calibration_seeds"],
                               tiers["simulator_version"])
        except (GenerationError, ValueError) as exc:
            raise fail(f"tiers: {exc}") from None
    seed, secret = data["seed"], data["seed_secret"]
    if secret is not (seed is None) or not (seed is None or (type(seed) is int and 0 <= seed < (1 << 64))):
        raise fail("seed must be an integer in [0, 2**64 - 1], or null with seed_secret true")
    if type(data["count"]) is not int or data["count"] < 1:
        raise fail("count must be a positive integer")
    if (not isinstance(data["suite_id"], str) or not SUITE_ID_RE.fullmatch(data["suite_id"])
            or not isinstance(data["suite_version"], str) or not SEMVER_RE.fullmatch(data["suite_version"])
            or not is_sha256_hex(data["suite_hash"])):
        raise fail("suite_id, suite_version or suite_hash is malformed")
    record = GenerationRecord(data["generator_version"], recipe, data["count"], seed, tiers, data["suite_id"],
                              data["suite_version"], data["suite_hash"])
    if record.to_dict() != data:
        raise fail("recipe_hash is not the hash of the recipe")
    return record


def load_generation(folder: str | os.PathLike[str]) -> GenerationRecord | None:
    """The generation record of the suite in ``folder``, or None if it has none."""
    path = Path(folder) / GENERATION_FILE
    if not os.path.lexists(path):
        return None
    return generation_from_dict(load_json(path, GENERATION, error=GenerationError), where=str(path))


def regenerate(record: GenerationRecord, seed: int, *, mapper: Mapper | None = None) -> GeneratedSuite:
    """Generate the suite ``record`` describes, with ``seed``.

    Raises:
        GenerationError: this code cannot reproduce the record (its tiers
            were calibrated by another simulator version), or the record's
            public seed is not ``seed``.
    """
    if record.tiers is not None and record.tiers.simulator_version != SIMULATOR_VERSION:
        raise GenerationError(f"the suite's tiers were calibrated with simulator {record.tiers.simulator_version}; "
                              f"this is simulator {SIMULATOR_VERSION}")
    if record.seed is not None and record.seed != seed:
        raise GenerationError(f"the suite was generated with the public seed {record.seed}, not {seed}")
    return generate_suite(record.recipe, record.count, seed, suite_id=record.suite_id,
                          suite_version=record.suite_version, secret=record.seed is None, tiers=record.tiers,
                          mapper=mapper)
