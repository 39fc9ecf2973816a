"""Commit-then-reveal for held-out suites: commitments, reveals, and checking a suite against them.

A **commitment** (format 1.0) is published before an evaluation. It holds
the suite's id, version, hash and scenario count and, for a generated suite,
how it was generated: the full recipe and its hash, the generator version,
the count and the tier filter, but never a secret seed. The suite hash pins
every scenario file, so a suite that differs in any byte of any scenario (or
in its list of scenarios, families or description) no longer matches.

A **reveal** (format 1.0), published after the evaluation, is the commitment
plus the seed. Anyone can then regenerate the suite from the commitment's
recipe and the seed and get the committed hash: the held-out suite was
drawn from the announced recipe, not picked by hand. What a commitment does
not rule out is an evaluator trying several seeds before committing; the
fairness page (docs/v1-fairness-spec.md) describes how to close that gap.

The commitment leaks nothing usable about a secret seed: recovering the seed
from the suite hash means generating a suite for each candidate seed, and
secret seeds are refused below 2**32 (a random 64-bit seed has 2**64
candidates).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..io.canonical import canonical_bytes, digest, is_sha256_hex
from ..errors import CommitmentError, GenerationError
from ..io.input_policy import InputKind, KiB, MiB, load_json, read_input
from ..sim.suite import SEMVER_RE, SUITE_ID_RE, Suite
from ..io.versions import COMMITMENT_FORMAT_VERSION, GENERATION_FORMAT_VERSION, REVEAL_FORMAT_VERSION
from .calibrate import Mapper
from .provenance import GenerationRecord, generation_from_dict, load_generation, regenerate

COMMITMENT = InputKind("suite commitment", 1 * MiB)
SECRET_SEED = InputKind("secret seed file", 4 * KiB)
MIN_SECRET_SEED = 1 << 32
_KEYS = ("commitment_format", "suite_id", "suite_version", "suite_hash", "scenario_count", "generation")
_SUITE_FIELDS = ("suite_id", "suite_version", "suite_hash")


def read_secret_seed(path: str | os.PathLike[str]) -> int:
    """The secret seed in ``path``: one decimal integer in ``[2**32, 2**64 - 1]`` (surrounding whitespace allowed).

    Messages never repeat the file's content.

    Raises:
        GenerationError: the file is unreadable, malformed or the seed too small to be secret.
    """
    text = read_input(path, SECRET_SEED, error=GenerationError).strip()
    if not text or not text.isdigit() or len(text) > 20 or not MIN_SECRET_SEED <= int(text) < (1 << 64):
        raise GenerationError(
            f"{os.fspath(path)}: a secret seed file must hold one decimal integer in [2**32, 2**64 - 1] "
            "(draw it with: python -c 'import secrets; print(secrets.randbits(64))')")
    return int(text)


def _generation_part(record: GenerationRecord) -> dict[str, Any]:
    return {k: v for k, v in record.to_dict().items() if k not in (*_SUITE_FIELDS, "generation_format")}


def _record(commitment: dict[str, Any]) -> GenerationRecord:
    """The generation record a commitment describes (its suite fields and generation part)."""
    data = {"generation_format": GENERATION_FORMAT_VERSION, **commitment["generation"],
            **{k: commitment[k] for k in _SUITE_FIELDS}}
    return generation_from_dict(data, where="commitment")


def _checked_record(suite: Suite, folder: str | os.PathLike[str]) -> GenerationRecord | None:
    record = load_generation(folder)
    if record is not None and (record.suite_hash, record.suite_id, record.suite_version) != (
            suite.hash, suite.id, suite.version):
        raise CommitmentError(f"{Path(folder) / 'generation.json'} describes suite {record.suite_hash}, not "
                              f"{suite.id} {suite.version} ({suite.hash})")
    return record


def make_commitment(suite: Suite, folder: str | os.PathLike[str]) -> dict[str, Any]:
    """The commitment of the (loaded, verified) suite in ``folder``."""
    record = _checked_record(suite, folder)
    return {
        "commitment_format": COMMITMENT_FORMAT_VERSION, "suite_id": suite.id, "suite_version": suite.version,
        "suite_hash": suite.hash, "scenario_count": len(suite.scenarios),
        "generation": None if record is None else _generation_part(record),
    }


def make_reveal(suite: Suite, folder: str | os.PathLike[str], seed: int | None, *,
                mapper: Mapper | None = None) -> dict[str, Any]:
    """The reveal of a generated suite: its commitment and its seed, checked by regenerating the suite.

    Args:
        seed: the secret seed (None for a suite generated with a public seed).

    Raises:
        CommitmentError: the suite was not generated, or ``seed`` does not regenerate it.
    """
    commitment = make_commitment(suite, folder)
    record = _checked_record(suite, folder)
    if record is None:
        raise CommitmentError(f"{folder} has no generation record: only a generated suite can be revealed by a seed")
    if seed is None:
        if record.seed is None:
            raise CommitmentError("the suite's seed is secret: give the file that holds it (--secret-seed-file)")
        seed = record.seed
    _regenerates(record, seed, suite.hash, mapper)
    return {"reveal_format": REVEAL_FORMAT_VERSION, "commitment": commitment, "seed": seed}


def _regenerates(record: GenerationRecord, seed: int, suite_hash: str, mapper: Mapper | None) -> None:
    try:
        rebuilt = regenerate(record, seed, mapper=mapper)
    except GenerationError as exc:
        raise CommitmentError(f"cannot regenerate the suite: {exc}") from None
    if rebuilt.hash != suite_hash:
        raise CommitmentError(f"the seed regenerates suite {rebuilt.hash}, not the committed {suite_hash}")


def commitment_from_dict(data: object, *, where: str) -> dict[str, Any]:
    """Validate a parsed commitment object and return it.

    Raises:
        CommitmentError: the first problem, prefixed with ``where``.
    """
    if not isinstance(data, dict):
        raise CommitmentError(f"{where}: a commitment must be a JSON object")
    if data.get("commitment_format") != COMMITMENT_FORMAT_VERSION:
        raise CommitmentError(f"{where}: unsupported commitment_format {data.get('commitment_format')!r} "
                              f"(this version reads {COMMITMENT_FORMAT_VERSION!r})")
    if set(data) != set(_KEYS):
        raise CommitmentError(f"{where}: keys must be exactly {', '.join(_KEYS)}")
    if (not isinstance(data["suite_id"], str) or not SUITE_ID_RE.fullmatch(data["suite_id"])
            or not isinstance(data["suite_version"], str) or not SEMVER_RE.fullmatch(data["suite_version"])
            or not is_sha256_hex(data["suite_hash"]) or type(data["scenario_count"]) is not int
            or data["scenario_count"] < 1):
        raise CommitmentError(f"{where}: suite_id, suite_version, suite_hash or scenario_count is malformed")
    if data["generation"] is not None:
        if not isinstance(data["generation"], dict):
            raise CommitmentError(f"{where}: generation must be null or an object")
        try:
            _record(data)
        except GenerationError as exc:
            raise CommitmentError(f"{where}: {exc}") from None
    return data


def load_commitment(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a commitment file."""
    return commitment_from_dict(load_json(path, COMMITMENT, error=CommitmentError), where=os.fspath(path))


def load_reveal(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a reveal file (its commitment included)."""
    where = os.fspath(path)
    data = load_json(path, COMMITMENT, error=CommitmentError)
    if not isinstance(data, dict) or data.get("reveal_format") != REVEAL_FORMAT_VERSION:
        raise CommitmentError(f"{where}: not a reveal of format {REVEAL_FORMAT_VERSION!r}")
    if set(data) != {"reveal_format", "commitment", "seed"}:
        raise CommitmentError(f"{where}: keys must be exactly reveal_format, commitment, seed")
    if type(data["seed"]) is not int or not 0 <= data["seed"] < (1 << 64):
        raise CommitmentError(f"{where}: seed must be an integer in [0, 2**64 - 1]")
    commitment_from_dict(data["commitment"], where=f"{where}: commitment")
    return data


def check_commitment(suite: Suite, folder: str | os.PathLike[str], commitment: dict[str, Any],
                     reveal: dict[str, Any] | None = None, *, mapper: Mapper | None = None) -> list[str]:
    """Prove that ``suite`` is the committed suite (and, with a reveal, what the recipe draws).

    Returns:
        One line per fact established.

    Raises:
        CommitmentError: naming the first thing that does not match.
    """
    for key, got in (("suite_id", suite.id), ("suite_version", suite.version), ("suite_hash", suite.hash),
                     ("scenario_count", len(suite.scenarios))):
        if commitment[key] != got:
            raise CommitmentError(f"the suite's {key} is {got!r} but the commitment's is {commitment[key]!r}: "
                                  "this is not the committed suite")
    lines = [f"suite {suite.id} {suite.version} ({suite.hash}) is the committed suite "
             f"(commitment sha256 {digest(commitment)})"]
    record = _checked_record(suite, folder)
    if record is not None and commitment["generation"] != _generation_part(record):
        raise CommitmentError(f"{Path(folder) / 'generation.json'} does not match the commitment's generation")
    if reveal is None:
        return lines
    if canonical_bytes(reveal["commitment"]) != canonical_bytes(commitment):
        raise CommitmentError("the reveal is for another commitment")
    if commitment["generation"] is None:
        raise CommitmentError("the commitment names no recipe, so a seed cannot prove how the suite was drawn")
    committed = _record(commitment)
    _regenerates(committed, reveal["seed"], suite.hash, mapper)
    lines.append(f"seed {reveal['seed']} regenerates it from recipe {committed.recipe.name!r} "
                 f"({committed.recipe.hash}) with generator {committed.generator_version}")
    return lines
