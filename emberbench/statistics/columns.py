"""Compact per-episode values: one column of exact numerators and denominators per metric.

A statistics command may see 10^5 or more episodes, each with twelve exact
metric values. Keeping a ``Fraction`` object per value costs about a
kilobyte per episode; this table keeps each metric as two ``int64`` arrays
(numerator and denominator in lowest terms, falling back to Python integers
only for a column that needs them) and a mask of defined values, about 17
bytes per value. The reducer selects a group's values from these columns
with array indexing, and the exact arithmetic (:mod:`.exact`) works on them
directly.

:class:`TableBuilder` fills a table one episode at a time (the streaming
verifier's sink); :func:`table_from_values` builds one from
:class:`~.inputs.EpisodeValues` for the list-based API.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..errors import StatisticsInputError
from ..records.metric_defs import METRIC_NAMES
from ..records.metrics import EpisodeMetrics, metric_fractions
from .exact import INT64_MAX, int_array
from .inputs import EpisodeValues, StatisticsContext


@dataclass(frozen=True, slots=True, eq=False)
class MetricColumn:
    """One metric over the table's episodes (undefined values hold 0/1 and are masked out)."""

    defined: np.ndarray
    numerators: np.ndarray
    denominators: np.ndarray

    def parts(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(rows where defined, their numerators, their denominators)``, in the order of ``rows``."""
        kept = rows[self.defined[rows]]
        return kept, self.numerators[kept], self.denominators[kept]


@dataclass(frozen=True, slots=True, eq=False)
class EpisodeTable:
    """The observed episodes of one result, in ascending index order.

    Attributes:
        indices: manifest indices (``int64``, ascending, unique).
        scenario_codes: per episode, a position in ``scenario_names``.
        scenario_names: the distinct scenario ids.
        resolved: per episode, whether it ended ``all_resolved``.
        evacuated: people evacuated, per episode.
        casualties: casualties, per episode.
        stranded: people stranded, per episode.
        columns: one :class:`MetricColumn` per metric, in ``METRIC_NAMES`` order.
    """

    indices: np.ndarray
    scenario_codes: np.ndarray
    scenario_names: tuple[str, ...]
    resolved: np.ndarray
    evacuated: np.ndarray
    casualties: np.ndarray
    stranded: np.ndarray
    columns: tuple[MetricColumn, ...]

    def __len__(self) -> int:
        return len(self.indices)

    def locate(self, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, present)``: each index's row in this table, and whether the table holds it."""
        rows = np.searchsorted(self.indices, indices)
        rows = np.minimum(rows, max(len(self.indices) - 1, 0))
        present = self.indices[rows] == indices if len(self.indices) else np.zeros(len(indices), dtype=bool)
        return rows, present

    def check_against(self, ctx: StatisticsContext, what: str) -> None:
        """Every episode must be scheduled, with its scheduled scenario.

        Raises:
            StatisticsInputError: naming the first episode that is not.
        """
        scheduled = {key[0]: key[1] for key in ctx.scheduled}
        names = self.scenario_names
        for index, code in zip(self.indices.tolist(), self.scenario_codes.tolist(), strict=True):
            expected = scheduled.get(index)
            if expected is None:
                raise StatisticsInputError(f"{what}: episode index {index} is not scheduled")
            if names[code] != expected:
                raise StatisticsInputError(f"{what}: episode {index} has scenario {names[code]!r}, "
                                           f"scheduled {expected!r}")


class _Column:
    """A growing column: ``int64`` storage until a value does not fit, then Python integers."""

    __slots__ = ("defined", "nums", "dens")

    def __init__(self) -> None:
        self.defined = array("b")
        self.nums: array[int] | list[int] = array("q")
        self.dens: array[int] | list[int] = array("q")

    def add(self, value: Fraction | None) -> None:
        if value is None:
            self.defined.append(0)
            num, den = 0, 1
        else:
            self.defined.append(1)
            num, den = value.numerator, value.denominator
        if isinstance(self.nums, array) and not (-INT64_MAX <= num <= INT64_MAX and den <= INT64_MAX):
            self.nums, self.dens = list(self.nums), list(self.dens)
        self.nums.append(num)
        self.dens.append(den)

    def build(self, order: np.ndarray | None) -> MetricColumn:
        defined = _view(self.defined, np.int8).view(bool)
        if isinstance(self.nums, array):
            nums, dens = _view(self.nums, np.int64), _view(self.dens, np.int64)
        else:
            nums, dens = int_array(self.nums), int_array(self.dens)
        if order is None:
            return MetricColumn(defined, nums, dens)
        return MetricColumn(defined[order], nums[order], dens[order])


def _view(store: array[int], dtype: type) -> np.ndarray:
    """The array's items as a read-only numpy view (no copy; the view keeps ``store`` alive)."""
    out = np.frombuffer(store, dtype=dtype) if len(store) else np.zeros(0, dtype)
    out.flags.writeable = False
    return out


class TableBuilder:
    """Collects episodes one at a time into an :class:`EpisodeTable` (any index order, no repeats)."""

    def __init__(self) -> None:
        self._indices = array("q")
        self._codes = array("i")
        self._names: dict[str, int] = {}
        self._resolved = array("b")
        self._counts = (array("q"), array("q"), array("q"))
        self._columns = tuple(_Column() for _ in METRIC_NAMES)

    def __len__(self) -> int:
        return len(self._indices)

    def add(self, index: int, scenario_id: str, termination: str, evacuated: int, casualties: int, stranded: int,
            values: Mapping[str, Fraction | None]) -> None:
        """Add one episode (``values`` maps every metric name to its exact value or None)."""
        self._indices.append(index)
        self._codes.append(self._names.setdefault(scenario_id, len(self._names)))
        self._resolved.append(termination == "all_resolved")
        for store, count in zip(self._counts, (evacuated, casualties, stranded), strict=True):
            store.append(count)
        for column, name in zip(self._columns, METRIC_NAMES, strict=True):
            column.add(values[name])

    def add_metrics(self, index: int, scenario_id: str, metrics: EpisodeMetrics) -> None:
        """Add one authenticated episode from its metrics."""
        self.add(index, scenario_id, metrics.termination, metrics.count("evacuated"), metrics.count("casualties"),
                 metrics.count("stranded"), metric_fractions(metrics))

    def build(self, what: str = "result") -> EpisodeTable:
        """The table, sorted by index; nothing may be added afterwards.

        Episodes added in ascending index order (as a verified artifact lists
        them) are not copied: the table views the builder's arrays.

        Raises:
            StatisticsInputError: an index was added twice.
        """
        indices = _view(self._indices, np.int64)
        order: np.ndarray | None = None
        if len(indices) > 1 and not bool(np.all(indices[1:] > indices[:-1])):
            order = np.argsort(indices, kind="stable")
            indices = indices[order]
        repeated = np.flatnonzero(indices[1:] == indices[:-1])
        if repeated.size:
            raise StatisticsInputError(f"{what}: episode index {int(indices[repeated[0]])} appears twice")

        def ints(store: array[int], dtype: type) -> np.ndarray:
            out = _view(store, dtype)
            return out if order is None else out[order]

        return EpisodeTable(
            indices=indices,
            scenario_codes=ints(self._codes, np.int32),
            scenario_names=tuple(self._names),
            resolved=ints(self._resolved, np.int8).view(bool),
            evacuated=ints(self._counts[0], np.int64),
            casualties=ints(self._counts[1], np.int64),
            stranded=ints(self._counts[2], np.int64),
            columns=tuple(column.build(order) for column in self._columns),
        )


def table_from_values(episodes: Sequence[EpisodeValues], what: str = "result") -> EpisodeTable:
    """An :class:`EpisodeTable` of already checked :class:`~.inputs.EpisodeValues`."""
    builder = TableBuilder()
    for e in episodes:
        builder.add(e.index, e.scenario_id, e.termination, e.evacuated, e.casualties, e.stranded, e.values)
    return builder.build(what)


def fraction_differences(a_num: np.ndarray, a_den: np.ndarray, b_num: np.ndarray,
                         b_den: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``a - b`` elementwise for values given as parts, in lowest terms (as ``Fraction`` subtraction gives)."""
    if len(a_num) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if all(x.dtype == np.int64 for x in (a_num, a_den, b_num, b_den)):
        span_a = int(np.abs(a_num).max()) * int(b_den.max())
        span_b = int(np.abs(b_num).max()) * int(a_den.max())
        if span_a + span_b <= INT64_MAX and int(a_den.max()) * int(b_den.max()) <= INT64_MAX:
            num = a_num * b_den - b_num * a_den
            den = a_den * b_den
            g = np.gcd(num, den)
            return num // g, den // g
    diffs = [Fraction(p, q) - Fraction(r, s) for p, q, r, s in
             zip(a_num.tolist(), a_den.tolist(), b_num.tolist(), b_den.tolist(), strict=True)]
    return int_array([d.numerator for d in diffs]), int_array([d.denominator for d in diffs])


__all__ = ["EpisodeTable", "MetricColumn", "TableBuilder", "fraction_differences", "table_from_values"]
