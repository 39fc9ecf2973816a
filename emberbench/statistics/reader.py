"""The strict reader of statistics artifacts (what ``report --stats`` and ``plot --stats`` read back).

A statistics artifact is read under the input policy (a regular file, at
most 256 MiB, strict JSON: no NaN, no infinity, no duplicate key) and then
checked field by field as its schema (``statistics-aggregate`` or
``statistics-paired``) describes it: the exact set of keys everywhere, every
type, every pattern, every range, and the metric table and the methods
exactly as this version writes them. Nothing is used before the whole form
has passed.

On top of the schema it refuses what the statistics specification makes
impossible, in every group and for every metric:

* **intervals**: a lower bound above the upper bound; a bound outside
  ``[min, max]`` of the values (every resample mean lies there); an
  interval with fewer than five values, or none with five or more; another
  method, statistic, level or resample count than the artifact's; a stream
  seed other than the one the specification derives from the header, the
  group, the metric and the resample count;
* **descriptive statistics**: values out of order (``min <= p25 <= p50 <=
  p75 <= p90 <= p95 <= max``, the median equal to ``p50``, the mean within
  ``[min, max]``), a statistic present where ``n`` leaves it undefined or
  absent where ``n`` defines it, a standard deviation that is not the square
  root of the variance;
* **counts** that do not add up (``scheduled = observed + missing``,
  ``n = observed - undefined`` or ``paired - undefined``, one delta per
  defined pair, win/loss/tie counts that disagree with the metric's
  direction, groups whose index lists disagree with their counts).

The mean is *not* required to lie inside its interval: a percentile
bootstrap interval does not promise that, so a valid artifact could break
such a rule. A form that passes is still only a claim about some results:
the report and the plots recompute the statistics from the verified results
and require the file to be byte-identical to the recomputation
(:mod:`emberbench.viewer.summary`).
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

from ..errors import ResultError, StatisticsInputError
from ..io.input_policy import STATISTICS, read_json_text
from ..records.metric_defs import METRIC_NAMES, METRICS
from ..results.model_id import MAX_MODEL_ID, validate_model_id
from ..io.versions import STATISTICS_VERSION
from ..schemas.kinds import not_what_was_wanted
from .artifact import methods, metric_definitions
from .bootstrap import LEVEL, MAX_RESAMPLES, MIN_N, MIN_RESAMPLES
from .descriptive import QUANTILE_LEVELS
from .stream import bootstrap_seed

_SHA256 = re.compile(r"[0-9a-f]{64}")
_SUITE_ID = re.compile(r"[a-z0-9][a-z0-9.-]{0,79}")
_SEMVER = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)")
_VERSION = re.compile(r"[0-9]+(\.[0-9]+){1,2}")
_MAX_SEED = (1 << 64) - 1

HEADER_KEYS = ("statistics_version", "evaluation_manifest_hash", "suite_id", "suite_version", "suite_hash",
               "simulator_version", "observation_version", "metrics_version")
_SHARED_KEYS = ("metric_definitions", "methods", "overall", "scenarios", "families")
TOP_KEYS = {
    "aggregate": frozenset({*HEADER_KEYS, "artifact", "model_id", "result_digest", "scheduled_episodes",
                            "observed_episodes", "missing_episodes", *_SHARED_KEYS}),
    "paired": frozenset({*HEADER_KEYS, "artifact", "model_a", "model_b", "result_digest_a", "result_digest_b",
                         "delta", "scheduled_episodes", "paired_count", "missing_from_a", "missing_from_b",
                         *_SHARED_KEYS}),
}
_GROUP_KEYS = {
    "aggregate": frozenset({"kind", "name", "episode_indices", "missing_indices", "robustness", "metrics"}),
    "paired": frozenset({"kind", "name", "paired_indices", "missing_from_a", "missing_from_b", "metrics"}),
}
_ROBUSTNESS_KEYS = ("scheduled", "observed", "missing", "all_resolved", "max_steps", "with_casualties",
                    "with_stranded", "zero_evacuation")
_SUMMARY_KEYS = {
    "aggregate": frozenset({"metric", "scheduled", "observed", "missing", "undefined", "statistics", "mean_ci"}),
    "paired": frozenset({"metric", "paired", "missing_from_a", "missing_from_b", "undefined", "deltas",
                         "statistics", "mean_delta_ci", "delta_positive", "delta_negative", "delta_zero",
                         "a_better", "b_better", "ties"}),
}
_DESCRIPTIVE_KEYS = frozenset({"n", "mean", "median", "variance", "std", "min", "max", "quantiles"})
_QUANTILE_NAMES = tuple(name for name, _ in QUANTILE_LEVELS)
_INTERVAL_KEYS = frozenset({"method", "statistic", "level", "resamples", "seed", "lower", "upper"})
_KEY_KEYS = frozenset({"index", "scenario_id", "scenario_hash", "seed"})
_PURPOSE = {"aggregate": "aggregate_mean", "paired": "paired_mean_delta"}
_STATISTIC = {"aggregate": "mean", "paired": "mean_delta"}
_GROUP_KINDS = {"overall": "overall", "scenarios": "scenario", "families": "family"}


@dataclass(frozen=True, slots=True)
class StatisticsFile:
    """A statistics artifact read back and checked (see the module docstring).

    Attributes:
        path: the file it was read from.
        form: its parsed output form.
        file_digest: SHA-256 of the file's bytes exactly as read.
    """

    path: str
    form: dict[str, Any]
    file_digest: str

    @property
    def artifact(self) -> str:
        """``aggregate`` or ``paired``."""
        return str(self.form["artifact"])

    @property
    def resamples(self) -> int:
        """The bootstrap resamples it was computed with."""
        return int(self.form["methods"]["bootstrap"]["resamples"])

    @property
    def result_digests(self) -> tuple[str, ...]:
        """``(result_digest,)`` or ``(result_digest_a, result_digest_b)``."""
        if self.artifact == "paired":
            return (self.form["result_digest_a"], self.form["result_digest_b"])
        return (self.form["result_digest"],)


def read_statistics_artifact(path: str | os.PathLike[str], *,
                             error: type[Exception] = StatisticsInputError) -> StatisticsFile:
    """Read a statistics artifact under the input policy and check it completely.

    Raises:
        ``error``: the file breaks the input policy, or its form breaks the
            schema or the specification; the message names the file and
            the field.
    """
    where = os.fspath(path)
    document = read_json_text(path, STATISTICS, error=error)
    sha = hashlib.sha256()
    step = 1 << 20
    for k in range(0, len(document.text), step):
        sha.update(document.text[k:k + step].encode("utf-8"))
    try:
        form = document.parse()
    except ValueError as exc:
        raise error(" ".join(str(exc).split())) from None
    del document
    check_statistics_form(form, where=where, error=error)
    return StatisticsFile(path=where, form=form, file_digest=sha.hexdigest())


def check_statistics_form(form: Any, *, where: str, error: type[Exception] = StatisticsInputError) -> None:
    """Check a statistics artifact's output form (parsed JSON or ``to_dict()``) as the module docstring says.

    Raises:
        ``error``: the first field that breaks the schema or the specification.
    """
    _Check(where, error).artifact(form)


def interval_bounds(ci: Any, *, where: str, error: type[Exception] = StatisticsInputError) -> tuple[float, float]:
    """The bounds of an interval's output form: two finite numbers, the lower one not above the upper one.

    Every reader of statistics forms (this module, the terminal tables) checks
    an interval with this before it uses it.

    Raises:
        ``error``: not an object with such bounds (``where`` starts the message).
    """
    lower = ci.get("lower") if isinstance(ci, Mapping) else None
    upper = ci.get("upper") if isinstance(ci, Mapping) else None
    if not (_is_number(lower) and _is_number(upper)):
        raise error(f"{where}: an interval's bounds must be finite numbers, got {_show(lower)} and {_show(upper)}")
    if lower > upper:
        raise error(f"{where}: lower bound {lower} is above upper bound {upper}")
    return float(lower), float(upper)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class _Check:
    """One walk over a form; ``fail`` names the file and the field."""

    def __init__(self, where: str, error: type[Exception]) -> None:
        self.where = where
        self.error = error
        self.kind = ""
        self.resamples = 0
        self.seed_fields: dict[str, Any] = {}

    def fail(self, at: str, message: str) -> NoReturn:
        raise self.error(" ".join(f"{self.where}: {at}: {message}".split()))

    # -- building blocks

    def keys(self, value: Any, at: str, wanted: frozenset[str]) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(at, f"must be an object, got {_kind(value)}")
        if set(value) != wanted:
            missing, unknown = sorted(wanted - set(value)), sorted(set(value) - wanted)
            self.fail(at, f"keys differ from the format: missing {missing}, unknown {unknown}")
        return value

    def count(self, value: Any, at: str) -> int:
        if not _is_int(value) or value < 0:
            self.fail(at, f"must be a non-negative integer, got {_show(value)}")
        return int(value)

    def number(self, value: Any, at: str, *, null: bool) -> float | None:
        if value is None and null:
            return None
        if not _is_number(value):
            self.fail(at, f"must be a finite number{' or null' if null else ''}, got {_show(value)}")
        return float(value)

    def text(self, value: Any, at: str, pattern: re.Pattern[str] | None = None) -> str:
        if not isinstance(value, str) or not value or (pattern is not None and not pattern.fullmatch(value)):
            self.fail(at, f"is not a valid value: {_show(value)}")
        return value

    def model_id(self, value: Any, at: str) -> str:
        try:
            return validate_model_id(value)
        except ResultError:
            self.fail(at, f"is not a model id (1 to {MAX_MODEL_ID} printable characters, no outer whitespace): "
                          f"{_show(value)}")

    def indices(self, value: Any, at: str) -> list[int]:
        if not isinstance(value, list):
            self.fail(at, f"must be a list of episode indices, got {_kind(value)}")
        for k, item in enumerate(value):
            self.count(item, f"{at}[{k}]")
        return value

    def episode_keys(self, value: Any, at: str) -> list[Any]:
        if not isinstance(value, list):
            self.fail(at, f"must be a list of episode keys, got {_kind(value)}")
        for k, item in enumerate(value):
            key = self.keys(item, f"{at}[{k}]", _KEY_KEYS)
            self.count(key["index"], f"{at}[{k}].index")
            self.text(key["scenario_id"], f"{at}[{k}].scenario_id")
            self.text(key["scenario_hash"], f"{at}[{k}].scenario_hash", _SHA256)
            if self.count(key["seed"], f"{at}[{k}].seed") > _MAX_SEED:
                self.fail(f"{at}[{k}].seed", "is above 2**64 - 1")
        return value

    # -- the artifact

    def artifact(self, form: Any) -> None:
        if not isinstance(form, dict):
            self.fail("artifact", f"a statistics artifact is a JSON object, got {_kind(form)}")
        other = not_what_was_wanted(self.where, form, "statistics")
        if other is not None:  # a result, a manifest...: named as what it is
            raise self.error(other)
        version = form.get("statistics_version")
        if version != STATISTICS_VERSION:
            self.fail("statistics_version", f"unsupported {_show(version)} (this version reads "
                                            f"{STATISTICS_VERSION!r})")
        kind = form.get("artifact")
        if kind not in TOP_KEYS:
            self.fail("artifact", f"unknown statistics artifact kind {_show(kind)} (aggregate or paired)")
        self.kind = kind
        self.keys(form, "artifact", TOP_KEYS[kind])
        self.text(form["evaluation_manifest_hash"], "evaluation_manifest_hash", _SHA256)
        self.text(form["suite_id"], "suite_id", _SUITE_ID)
        self.text(form["suite_version"], "suite_version", _SEMVER)
        self.text(form["suite_hash"], "suite_hash", _SHA256)
        for name in ("simulator_version", "observation_version", "metrics_version"):
            self.text(form[name], name, _VERSION)
        if self.count(form["scheduled_episodes"], "scheduled_episodes") < 1:
            self.fail("scheduled_episodes", "must be at least 1")
        if kind == "aggregate":
            self.model_id(form["model_id"], "model_id")
            digests = [self.text(form["result_digest"], "result_digest", _SHA256)]
            self.count(form["observed_episodes"], "observed_episodes")
            self.episode_keys(form["missing_episodes"], "missing_episodes")
        else:
            self.model_id(form["model_a"], "model_a")
            self.model_id(form["model_b"], "model_b")
            digests = [self.text(form["result_digest_a"], "result_digest_a", _SHA256),
                       self.text(form["result_digest_b"], "result_digest_b", _SHA256)]
            if form["delta"] != "A - B":
                self.fail("delta", f"must be 'A - B', got {_show(form['delta'])}")
            self.count(form["paired_count"], "paired_count")
            self.episode_keys(form["missing_from_a"], "missing_from_a")
            self.episode_keys(form["missing_from_b"], "missing_from_b")
        self.methods(form["methods"])
        if form["metric_definitions"] != metric_definitions():
            self.fail("metric_definitions", "differ from the metric table of this statistics version")
        self.seed_fields = {"purpose": _PURPOSE[kind], "evaluation_manifest_hash": form["evaluation_manifest_hash"],
                            "result_digests": digests, "resamples": self.resamples}
        self.group(form["overall"], "overall", "overall")
        if form["overall"]["name"] != "overall":
            self.fail("overall.name", f"must be 'overall', got {_show(form['overall']['name'])}")
        for section in ("scenarios", "families"):
            groups = form[section]
            if not isinstance(groups, list):
                self.fail(section, f"must be a list of groups, got {_kind(groups)}")
            names: set[str] = set()
            for k, group in enumerate(groups):
                self.group(group, f"{section}[{k}]", _GROUP_KINDS[section])
                if group["name"] in names:
                    self.fail(f"{section}[{k}].name", f"{_show(group['name'])} appears twice")
                names.add(group["name"])
        self.totals(form)

    def methods(self, value: Any) -> None:
        bootstrap = value.get("bootstrap") if isinstance(value, dict) else None
        resamples = bootstrap.get("resamples") if isinstance(bootstrap, dict) else None
        if not _is_int(resamples) or not MIN_RESAMPLES <= resamples <= MAX_RESAMPLES:
            self.fail("methods.bootstrap.resamples",
                      f"must be an integer in [{MIN_RESAMPLES}, {MAX_RESAMPLES}], got {_show(resamples)}")
        self.resamples = resamples
        if value != methods(purpose=_PURPOSE[self.kind], resamples=resamples):
            self.fail("methods", "differ from the methods of this statistics version")

    def totals(self, form: dict[str, Any]) -> None:
        overall = form["overall"]
        scheduled = form["scheduled_episodes"]
        if self.kind == "aggregate":
            r = overall["robustness"]
            if (r["scheduled"], r["observed"]) != (scheduled, form["observed_episodes"]):
                self.fail("overall.robustness", "scheduled and observed differ from scheduled_episodes and "
                                                "observed_episodes")
            if len(form["missing_episodes"]) != scheduled - form["observed_episodes"]:
                self.fail("missing_episodes", "does not hold scheduled_episodes - observed_episodes keys")
        else:
            if form["paired_count"] != len(overall["paired_indices"]):
                self.fail("paired_count", "differs from the overall group's paired episodes")
            for side in ("missing_from_a", "missing_from_b"):
                if len(form[side]) != len(overall[side]):
                    self.fail(side, "differs from the overall group's list")
            if form["paired_count"] + len(overall["missing_from_a"]) > scheduled or \
                    form["paired_count"] + len(overall["missing_from_b"]) > scheduled:
                self.fail("overall", "counts more episodes than are scheduled")

    # -- groups

    def group(self, value: Any, at: str, kind: str) -> None:
        group = self.keys(value, at, _GROUP_KEYS[self.kind])
        if group["kind"] != kind:
            self.fail(f"{at}.kind", f"must be {kind!r}, got {_show(group['kind'])}")
        self.text(group["name"], f"{at}.name")
        metrics = group["metrics"]
        if not isinstance(metrics, list) or len(metrics) != len(METRICS):
            self.fail(f"{at}.metrics", f"must list the {len(METRICS)} metrics")
        if self.kind == "aggregate":
            done = len(self.indices(group["episode_indices"], f"{at}.episode_indices"))
            missing = len(self.indices(group["missing_indices"], f"{at}.missing_indices"))
            r = self.keys(group["robustness"], f"{at}.robustness", frozenset(_ROBUSTNESS_KEYS))
            counts = {name: self.count(r[name], f"{at}.robustness.{name}") for name in _ROBUSTNESS_KEYS}
            if (counts["observed"], counts["missing"]) != (done, missing):
                self.fail(f"{at}.robustness", "observed and missing differ from the group's index lists")
            if counts["scheduled"] != done + missing:
                self.fail(f"{at}.robustness", "scheduled is not observed + missing")
            if counts["all_resolved"] + counts["max_steps"] != done:
                self.fail(f"{at}.robustness", "all_resolved + max_steps is not observed")
            if max(counts["with_casualties"], counts["with_stranded"], counts["zero_evacuation"]) > done:
                self.fail(f"{at}.robustness", "counts more episodes than were observed")
            shape = {"scheduled": done + missing, "observed": done, "missing": missing}
        else:
            shape = {"paired": len(self.indices(group["paired_indices"], f"{at}.paired_indices")),
                     "missing_from_a": len(self.indices(group["missing_from_a"], f"{at}.missing_from_a")),
                     "missing_from_b": len(self.indices(group["missing_from_b"], f"{at}.missing_from_b"))}
        for k, (definition, summary) in enumerate(zip(METRICS, metrics, strict=True)):
            self.summary(summary, f"{at}.metrics[{k}]", definition.name, definition.direction, shape,
                         (kind, group["name"]))

    def summary(self, value: Any, at: str, metric: str, direction: str, shape: dict[str, int],
                group: tuple[str, str]) -> None:
        s = self.keys(value, at, _SUMMARY_KEYS[self.kind])
        if s["metric"] != metric:
            self.fail(f"{at}.metric", f"must be {metric!r} (metrics in table order), got {_show(s['metric'])}")
        at = f"{at} ({metric})"
        for name, expected in shape.items():
            if self.count(s[name], f"{at}.{name}") != expected:
                self.fail(f"{at}.{name}", f"is {s[name]}, the group has {expected}")
        defined = (shape["observed"] if self.kind == "aggregate" else shape["paired"]) \
            - self.count(s["undefined"], f"{at}.undefined")
        if defined < 0:
            self.fail(f"{at}.undefined", "is more than the episodes it counts among")
        low, high = self.descriptive(s["statistics"], f"{at}.statistics", defined)
        ci = "mean_ci" if self.kind == "aggregate" else "mean_delta_ci"
        self.interval(s[ci], f"{at}.{ci}", defined, low, high, metric, group)
        if self.kind == "paired":
            self.deltas(s, at, defined, direction)

    def descriptive(self, value: Any, at: str, n: int) -> tuple[float | None, float | None]:
        d = self.keys(value, at, _DESCRIPTIVE_KEYS)
        if self.count(d["n"], f"{at}.n") != n:
            self.fail(f"{at}.n", f"is {d['n']}, but {n} values are defined")
        quantiles = self.keys(d["quantiles"], f"{at}.quantiles", frozenset(_QUANTILE_NAMES))
        present = n >= 1
        values = {name: self.number(d[name], f"{at}.{name}", null=True) for name in ("mean", "median", "min", "max")}
        values.update({name: self.number(quantiles[name], f"{at}.quantiles.{name}", null=True)
                       for name in _QUANTILE_NAMES})
        for name, v in values.items():
            if (v is not None) != present:
                self.fail(f"{at}.{name}", f"must be {'a number' if present else 'null'} when n = {n}")
        spread = [self.number(d[name], f"{at}.{name}", null=True) for name in ("variance", "std")]
        for name, v in zip(("variance", "std"), spread, strict=True):
            if (v is not None) != (n >= 2):
                self.fail(f"{at}.{name}", f"must be {'a number' if n >= 2 else 'null'} when n = {n}")
        if not present:
            return None, None
        order = [values["min"], *(values[q] for q in _QUANTILE_NAMES), values["max"]]
        if any(a > b for a, b in zip(order, order[1:])):  # type: ignore[operator]
            self.fail(at, "min, p25, p50, p75, p90, p95 and max are not in ascending order")
        if values["median"] != values["p50"]:
            self.fail(f"{at}.median", "differs from quantiles.p50")
        if not values["min"] <= values["mean"] <= values["max"]:  # type: ignore[operator]
            self.fail(f"{at}.mean", f"{values['mean']} lies outside [min, max] = [{values['min']}, {values['max']}]")
        variance, std = spread
        if variance is not None and (variance < 0 or std != math.sqrt(variance)):
            self.fail(f"{at}.std", "is not the square root of a non-negative variance")
        return values["min"], values["max"]

    def interval(self, value: Any, at: str, n: int, low: float | None, high: float | None, metric: str,
                 group: tuple[str, str]) -> None:
        if value is None:
            if n >= MIN_N:
                self.fail(at, f"is null, but {n} values are defined (an interval needs {MIN_N})")
            return
        if n < MIN_N:
            self.fail(at, f"must be null: only {n} values are defined (an interval needs {MIN_N})")
        ci = self.keys(value, at, _INTERVAL_KEYS)
        if ci["method"] != "percentile":
            self.fail(f"{at}.method", f"must be 'percentile', got {_show(ci['method'])}")
        if ci["statistic"] != _STATISTIC[self.kind]:
            self.fail(f"{at}.statistic", f"must be {_STATISTIC[self.kind]!r}, got {_show(ci['statistic'])}")
        if not _is_number(ci["level"]) or ci["level"] != float(LEVEL):
            self.fail(f"{at}.level", f"must be {float(LEVEL)}, got {_show(ci['level'])}")
        if not _is_int(ci["resamples"]) or ci["resamples"] != self.resamples:
            self.fail(f"{at}.resamples", f"must be methods.bootstrap.resamples ({self.resamples}), "
                                         f"got {_show(ci['resamples'])}")
        seed = bootstrap_seed(group_kind=group[0], group_name=group[1], metric=metric, **self.seed_fields).hex()
        if ci["seed"] != seed:
            self.fail(f"{at}.seed", "is not the stream seed of this header, group, metric and resample count")
        self.number(ci["lower"], f"{at}.lower", null=False)
        self.number(ci["upper"], f"{at}.upper", null=False)
        lower, upper = interval_bounds(ci, where=f"{self.where}: {at}", error=self.error)
        if lower < low or upper > high:  # type: ignore[operator]
            self.fail(at, f"[{lower}, {upper}] leaves [min, max] = [{low}, {high}], where every resample mean lies")

    def deltas(self, s: dict[str, Any], at: str, n: int, direction: str) -> None:
        deltas = s["deltas"]
        if not isinstance(deltas, list) or len(deltas) != n:
            self.fail(f"{at}.deltas", f"must list one [index, delta] per defined pair ({n})")
        for k, pair in enumerate(deltas):
            if not (isinstance(pair, list) and len(pair) == 2 and _is_int(pair[0]) and pair[0] >= 0
                    and _is_number(pair[1])):
                self.fail(f"{at}.deltas[{k}]", f"must be [index, number], got {_show(pair)}")
        signs = [self.count(s[name], f"{at}.{name}") for name in ("delta_positive", "delta_negative", "delta_zero")]
        if sum(signs) != n:
            self.fail(at, "delta_positive + delta_negative + delta_zero is not the number of defined pairs")
        verdicts = [s["a_better"], s["b_better"], s["ties"]]
        if direction == "none":
            expected: list[int | None] = [None, None, None]
        elif direction == "higher":
            expected = signs
        else:
            expected = [signs[1], signs[0], signs[2]]
        if verdicts != expected or any(v is not None and not _is_int(v) for v in verdicts):
            self.fail(at, f"a_better, b_better and ties {verdicts} do not follow the direction ({direction}) "
                          f"from the delta signs")


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


__all__ = ["StatisticsFile", "check_statistics_form", "interval_bounds", "read_statistics_artifact"]
