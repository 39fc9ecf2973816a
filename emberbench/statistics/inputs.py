"""The plain-data inputs of the statistics functions, and their checks.

The caller (the evaluation layer) re-verifies a result artifact by replay and
then hands this module only plain values: one :class:`EpisodeValues` per
observed episode and a :class:`StatisticsContext` describing the manifest and
suite. This module checks those values again for internal consistency (known
metric names, no duplicate or unscheduled index, a valid ``resamples``) and
raises :class:`~emberbench.errors.StatisticsInputError` on any problem. It
never repairs or skips anything.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType

from ..io.canonical import is_sha256_hex
from ..errors import StatisticsInputError
from ..records.metric_defs import METRIC_NAMES
from .bootstrap import MAX_RESAMPLES, MIN_RESAMPLES

TERMINATIONS = ("all_resolved", "max_steps")

EpisodeKey = tuple[int, str, str, int]
"""A scheduled episode: ``(index, scenario_id, scenario_hash, seed)``."""


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_text(value: object, what: str) -> None:
    if not isinstance(value, str) or not value:
        raise StatisticsInputError(f"{what} must be a non-empty string, got {value!r}")


@dataclass(frozen=True, slots=True)
class EpisodeValues:
    """The exact per-episode values of one observed (authenticated) episode.

    Attributes:
        index: the episode's manifest index.
        scenario_id: its scenario.
        termination: ``all_resolved`` or ``max_steps``.
        evacuated: people evacuated.
        casualties: casualties.
        stranded: people stranded.
        values: every name in ``METRIC_NAMES`` mapped to its exact value, or
            None when the metric is undefined for this episode. Stored as a
            read-only mapping in ``METRIC_NAMES`` order.
    """

    index: int
    scenario_id: str
    termination: str
    evacuated: int
    casualties: int
    stranded: int
    values: Mapping[str, Fraction | None]

    def __post_init__(self) -> None:
        if not _is_int(self.index) or self.index < 0:
            raise StatisticsInputError(f"episode index must be a non-negative int, got {self.index!r}")
        where = f"episode {self.index}"
        _check_text(self.scenario_id, f"{where}: scenario_id")
        if self.termination not in TERMINATIONS:
            raise StatisticsInputError(
                f"{where}: termination must be one of {TERMINATIONS}, got {self.termination!r}"
            )
        for name in ("evacuated", "casualties", "stranded"):
            count = getattr(self, name)
            if not _is_int(count) or count < 0:
                raise StatisticsInputError(f"{where}: {name} must be a non-negative int, got {count!r}")
        if not isinstance(self.values, Mapping):
            raise StatisticsInputError(f"{where}: values must be a mapping")
        unknown = sorted(str(k) for k in self.values if k not in METRIC_NAMES)
        if unknown:
            raise StatisticsInputError(f"{where}: unknown metric names {unknown}")
        absent = [name for name in METRIC_NAMES if name not in self.values]
        if absent:
            raise StatisticsInputError(f"{where}: missing metric names {absent}")
        for name in METRIC_NAMES:
            value = self.values[name]
            if value is None:
                continue
            if not isinstance(value, Fraction):
                raise StatisticsInputError(
                    f"{where}: {name} must be a Fraction or None, got {type(value).__name__}"
                )
            try:
                finite = math.isfinite(float(value))
            except OverflowError:
                finite = False
            if not finite:
                raise StatisticsInputError(f"{where}: {name} is too large for a float")
        ordered = {name: self.values[name] for name in METRIC_NAMES}
        object.__setattr__(self, "values", MappingProxyType(ordered))


@dataclass(frozen=True, slots=True)
class StatisticsContext:
    """What the statistics need to know about the manifest and suite.

    Attributes:
        evaluation_manifest_hash: the evaluation manifest's hash.
        suite_id: the suite id.
        suite_version: the suite version.
        suite_hash: the suite hash.
        simulator_version: the simulator version the results were run with.
        observation_version: the observation version.
        metrics_version: the metrics version.
        scheduled: every manifest episode key ``(index, scenario_id,
            scenario_hash, seed)`` in manifest order.
        scenario_order: the suite manifest order of scenario ids.
        families: ``(family id, scenario ids)`` in family declaration order.
    """

    evaluation_manifest_hash: str
    suite_id: str
    suite_version: str
    suite_hash: str
    simulator_version: str
    observation_version: str
    metrics_version: str
    scheduled: tuple[EpisodeKey, ...]
    scenario_order: tuple[str, ...]
    families: tuple[tuple[str, tuple[str, ...]], ...]

    def __post_init__(self) -> None:
        for name in (
            "evaluation_manifest_hash", "suite_id", "suite_version", "suite_hash",
            "simulator_version", "observation_version", "metrics_version",
        ):
            _check_text(getattr(self, name), name)
        scheduled = tuple(tuple(key) for key in self.scheduled)
        seen: set[int] = set()
        for key in scheduled:
            if len(key) != 4:
                raise StatisticsInputError(f"scheduled key {key!r} is not (index, scenario_id, scenario_hash, seed)")
            index, scenario_id, scenario_hash, seed = key
            if not _is_int(index) or index < 0 or not _is_int(seed):
                raise StatisticsInputError(f"scheduled key {key!r} needs int index and seed")
            _check_text(scenario_id, f"scheduled episode {index}: scenario_id")
            _check_text(scenario_hash, f"scheduled episode {index}: scenario_hash")
            if index in seen:
                raise StatisticsInputError(f"scheduled index {index} appears twice")
            seen.add(index)
        scenario_order = tuple(self.scenario_order)
        if len(set(scenario_order)) != len(scenario_order):
            raise StatisticsInputError("scenario_order lists a scenario twice")
        known = set(scenario_order)
        stray = sorted({key[1] for key in scheduled} - known)
        if stray:
            raise StatisticsInputError(f"scheduled scenarios {stray} are not in scenario_order")
        families = tuple((fid, tuple(ids)) for fid, ids in self.families)
        family_ids = [fid for fid, _ in families]
        if len(set(family_ids)) != len(family_ids):
            raise StatisticsInputError("a family id is declared twice")
        for fid, ids in families:
            _check_text(fid, "family id")
            unknown = sorted(set(ids) - known)
            if unknown:
                raise StatisticsInputError(f"family {fid!r} names unknown scenarios {unknown}")
        object.__setattr__(self, "scheduled", scheduled)
        object.__setattr__(self, "scenario_order", scenario_order)
        object.__setattr__(self, "families", families)


def check_resamples(resamples: object) -> int:
    """Return ``resamples`` if it is an int in ``[100, 1_000_000]``.

    Raises:
        StatisticsInputError: otherwise.
    """
    if not _is_int(resamples) or not MIN_RESAMPLES <= resamples <= MAX_RESAMPLES:  # type: ignore[operator]
        raise StatisticsInputError(
            f"resamples must be an integer in [{MIN_RESAMPLES}, {MAX_RESAMPLES}], got {resamples!r}"
        )
    return resamples  # type: ignore[return-value]


def check_result_digest(digest: object, what: str) -> str:
    """Return ``digest`` if it is a lowercase hex SHA-256."""
    if not is_sha256_hex(digest):
        raise StatisticsInputError(f"{what} must be a lowercase hex SHA-256, got {digest!r}")
    return digest  # type: ignore[return-value]


def index_episodes(
    ctx: StatisticsContext, episodes: Sequence[EpisodeValues], what: str
) -> dict[int, EpisodeValues]:
    """Check ``episodes`` against the schedule and return them by index.

    Raises:
        StatisticsInputError: for a non-EpisodeValues item, a duplicate index,
            an index that is not scheduled, or a scenario id that differs
            from the scheduled one.
    """
    scenario_of = {key[0]: key[1] for key in ctx.scheduled}
    by_index: dict[int, EpisodeValues] = {}
    for episode in episodes:
        if not isinstance(episode, EpisodeValues):
            raise StatisticsInputError(f"{what}: expected EpisodeValues, got {type(episode).__name__}")
        if episode.index in by_index:
            raise StatisticsInputError(f"{what}: episode index {episode.index} appears twice")
        if episode.index not in scenario_of:
            raise StatisticsInputError(f"{what}: episode index {episode.index} is not scheduled")
        if episode.scenario_id != scenario_of[episode.index]:
            raise StatisticsInputError(
                f"{what}: episode {episode.index} has scenario {episode.scenario_id!r}, "
                f"scheduled {scenario_of[episode.index]!r}"
            )
        by_index[episode.index] = episode
    return by_index


def check_model_id(model_id: object, what: str) -> str:
    """Return ``model_id`` if it is a non-empty string."""
    _check_text(model_id, what)
    return model_id  # type: ignore[return-value]
