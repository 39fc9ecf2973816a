"""Procedural scenario suites: recipes, the deterministic generator, calibration, commitments.

A suite is a pure function of (recipe, count, seed): the generator draws
every number from SplitMix64 streams keyed by the seed, so the same inputs
give byte-identical files on every machine. What it writes are ordinary
scenario files and an ordinary ``suite.json``; nothing downstream knows a
scenario was generated. See docs/scenario-format.md (recipes, generation,
calibration) and docs/v1-fairness-spec.md (held-out suites).

Public surface:

* :func:`load_recipe`, :func:`recipe_from_dict`, :class:`Recipe`;
* :func:`generate_scenario`, :func:`generate_suite`, :class:`TierFilter`,
  :func:`write_suite`;
* :func:`calibrate_suite`, :func:`load_calibration`, :func:`write_calibration`;
* :func:`make_commitment`, :func:`make_reveal`, :func:`check_commitment`,
  :func:`load_commitment`, :func:`load_reveal`, :func:`read_secret_seed`;
* :func:`load_generation`, :func:`regenerate`.
"""

from __future__ import annotations

from .build import GeneratedSuite, TierFilter, generate_suite
from .calibrate import (
    DEFAULT_SEEDS,
    TIERS,
    Calibration,
    calibrate_suite,
    family_rates,
    load_calibration,
    write_calibration,
)
from .commitment import (
    check_commitment,
    load_commitment,
    load_reveal,
    make_commitment,
    make_reveal,
    read_secret_seed,
)
from .generator import GeneratedScenario, generate_scenario
from .provenance import GenerationRecord, load_generation, regenerate
from .recipe import SHIPPED_RECIPES, Recipe, load_recipe, recipe_from_dict
from .writer import write_suite

__all__ = [
    "DEFAULT_SEEDS", "SHIPPED_RECIPES", "TIERS", "Calibration", "GeneratedScenario", "GeneratedSuite",
    "GenerationRecord", "Recipe", "TierFilter", "calibrate_suite", "check_commitment", "family_rates",
    "generate_scenario", "generate_suite", "load_calibration", "load_commitment", "load_generation", "load_recipe",
    "load_reveal", "make_commitment", "make_reveal", "read_secret_seed", "recipe_from_dict", "regenerate",
    "write_calibration", "write_suite",
]
