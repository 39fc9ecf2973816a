"""One call per ``emberbench suite`` command that generates, commits or reveals.

Each function takes what the command line gives (names and paths) and does
the whole job, so the CLI only parses and prints. Where work can run on Ray
the caller passes a *mapper* (see :mod:`emberbench.generate.calibrate`);
nothing here imports Ray.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..errors import GenerationError
from ..sim.suite import load_suite, suite_folder
from .build import GeneratedSuite, Progress, TierFilter, generate_suite
from .calibrate import DEFAULT_SEEDS, TIERS, Mapper
from .commitment import check_commitment, load_commitment, load_reveal, make_commitment, make_reveal, read_secret_seed
from .recipe import load_recipe
from .writer import check_suite_output, write_suite


def generate_into(recipe: str, count: int, out: str | os.PathLike[str], *, seed: int | None = None,
                  secret_seed_file: str | os.PathLike[str] | None = None, force: bool = False,
                  suite_id: str | None = None, suite_version: str = "1.0.0", min_tier: str | None = None,
                  max_tier: str | None = None, calibration_seeds: Sequence[int] = DEFAULT_SEEDS,
                  mapper: Mapper | None = None, progress: Progress | None = None) -> GeneratedSuite:
    """``emberbench suite generate``: generate a suite and write it into the folder ``out``.

    Exactly one of ``seed`` and ``secret_seed_file`` is given; a secret seed
    is read from its file and never written or printed.

    Raises:
        GenerationError, RecipeError, OutputPathError: see the called functions.
    """
    if (seed is None) == (secret_seed_file is None):
        raise GenerationError("give exactly one of --seed and --secret-seed-file")
    check_suite_output(out, force)
    the_recipe = load_recipe(recipe)
    the_seed = read_secret_seed(secret_seed_file) if secret_seed_file is not None else seed
    assert the_seed is not None
    tiers = None
    if min_tier is not None or max_tier is not None:
        tiers = TierFilter(min_tier or TIERS[0], max_tier or TIERS[-1], tuple(calibration_seeds))
    suite = generate_suite(the_recipe, count, the_seed, suite_id=suite_id, suite_version=suite_version,
                           secret=secret_seed_file is not None, tiers=tiers, mapper=mapper, progress=progress)
    write_suite(suite, out, force=force)
    return suite


def commit(suite: str | os.PathLike[str]) -> dict[str, Any]:
    """``emberbench suite commit``: the commitment of a suite (a folder or a shipped suite id)."""
    return make_commitment(load_suite(suite), suite_folder(suite))


def reveal(suite: str | os.PathLike[str], secret_seed_file: str | os.PathLike[str] | None, *,
           mapper: Mapper | None = None) -> dict[str, Any]:
    """``emberbench suite reveal``: the reveal document, after checking the seed regenerates the suite."""
    seed = None if secret_seed_file is None else read_secret_seed(secret_seed_file)
    return make_reveal(load_suite(suite), suite_folder(suite), seed, mapper=mapper)


def check(suite: str | os.PathLike[str], commitment: str | os.PathLike[str],
          reveal_file: str | os.PathLike[str] | None = None, *, mapper: Mapper | None = None) -> list[str]:
    """``emberbench suite check-commitment``: what was proven, one line each (CommitmentError if not)."""
    the_reveal = None if reveal_file is None else load_reveal(reveal_file)
    return check_commitment(load_suite(suite), suite_folder(suite), load_commitment(commitment), the_reveal,
                            mapper=mapper)
