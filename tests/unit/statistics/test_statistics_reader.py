"""The strict reader of statistics artifacts: the schema, field by field, and what the specification makes impossible."""

from __future__ import annotations

import copy
import hashlib
import io
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from emberbench.io.canonical import canonical_bytes
from emberbench.errors import StatisticsInputError
from emberbench.statistics import aggregate_from_values, paired_from_values, write_artifact
from emberbench.statistics.reader import check_statistics_form, read_statistics_artifact
from tests.schema_check import schema_accepts, schema_errors
from tests.unit.statistics.stats_factory import DIGEST_A, DIGEST_B, all_episodes, make_ctx

RESAMPLES = 100


@pytest.fixture(scope="module")
def forms() -> dict[str, dict[str, Any]]:
    """Genuine aggregate and paired output forms (s1 has 6 episodes: intervals; s2 has 3: none)."""
    ctx = make_ctx()
    a, b = all_episodes(ctx), all_episodes(ctx, shift=3)
    return {
        "aggregate": aggregate_from_values(ctx, "model-a", DIGEST_A, a, RESAMPLES).to_dict(),
        "paired": paired_from_values(ctx, "model-a", "model-b", DIGEST_A, DIGEST_B, a, b, RESAMPLES).to_dict(),
    }


def _overall(form: dict[str, Any], k: int = 0) -> dict[str, Any]:
    return form["overall"]["metrics"][k]


def _ci_name(form: dict[str, Any]) -> str:
    return "mean_ci" if form["artifact"] == "aggregate" else "mean_delta_ci"


def _ci(form: dict[str, Any], k: int = 0) -> dict[str, Any]:
    return _overall(form, k)[_ci_name(form)]


def _stats(form: dict[str, Any], k: int = 0) -> dict[str, Any]:
    return _overall(form, k)["statistics"]


def _set(path: Callable[[dict[str, Any]], dict[str, Any]], key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(form: dict[str, Any]) -> None:
        path(form)[key] = value
    return mutate


def _forged_interval(form: dict[str, Any]) -> None:
    """The forgery of issue 22 (defect 15): a mean near the top and a lower bound above the upper bound."""
    ci = _ci(form)
    ci["lower"], ci["upper"] = ci["upper"], ci["lower"]


def _swap_metrics(form: dict[str, Any]) -> None:
    metrics = form["overall"]["metrics"]
    metrics[0], metrics[1] = metrics[1], metrics[0]


def _quantiles_out_of_order(form: dict[str, Any]) -> None:
    q = _stats(form)["quantiles"]
    q["p25"], q["p75"] = q["p75"], q["p25"]


BOTH = ("aggregate", "paired")

# (name, mutation, the schema refuses it too, words of the message, artifact kinds)
MUTATIONS: list[tuple[str, Callable[[dict[str, Any]], None], bool, str, tuple[str, ...]]] = [
    ("mean is a string", _set(_stats, "mean", "x"), True, "statistics.mean", BOTH),
    ("mean is a list", _set(_stats, "mean", [0.5]), True, "statistics.mean", BOTH),
    ("mean is true", _set(_stats, "mean", True), True, "statistics.mean", BOTH),
    ("mean is null although n >= 1", _set(_stats, "mean", None), False, "must be a number when n", BOTH),
    ("lower bound is a string", _set(_ci, "lower", "0.1"), True, ".lower", BOTH),
    ("lower bound above the upper", _forged_interval, False, "is above upper bound", BOTH),
    ("upper bound above max", lambda f: _ci(f).update(upper=_stats(f)["max"] + 1), False, "leaves [min, max]", BOTH),
    ("lower bound below min", lambda f: _ci(f).update(lower=_stats(f)["min"] - 1), False, "leaves [min, max]", BOTH),
    ("mean above max", lambda f: _stats(f).update(mean=_stats(f)["max"] + 1), False, "outside [min, max]", BOTH),
    ("another seed", _set(_ci, "seed", "0" * 64), False, "stream seed", BOTH),
    ("another level", _set(_ci, "level", 0.9), True, ".level", BOTH),
    ("another resample count", _set(_ci, "resamples", RESAMPLES + 1), False, ".resamples", BOTH),
    ("unknown interval method", _set(_ci, "method", "bca"), True, ".method", BOTH),
    ("interval missing for n >= 5", lambda f: _overall(f).update({_ci_name(f): None}), False, "is null, but", BOTH),
    ("interval for n < 5", lambda f: f["scenarios"][1]["metrics"][0].update({_ci_name(f): copy.deepcopy(_ci(f))}),
     False, "must be null", BOTH),
    ("median is not p50", lambda f: _stats(f).update(median=_stats(f)["max"]), False, "median", BOTH),
    ("quantiles out of order", _quantiles_out_of_order, False, "ascending", BOTH),
    ("std is not the root of the variance", lambda f: _stats(f).update(std=_stats(f)["std"] * 2), False, "std", BOTH),
    ("negative variance", _set(_stats, "variance", -1.0), True, "std", BOTH),
    ("n disagrees with the counts", lambda f: _stats(f).update(n=_stats(f)["n"] + 1), False, "statistics.n", BOTH),
    ("unknown key", _set(lambda f: f, "score", 1), True, "unknown ['score']", BOTH),
    ("missing key", lambda f: f.pop("suite_hash"), True, "missing ['suite_hash']", BOTH),
    ("metrics out of order", _swap_metrics, False, "table order", BOTH),
    ("another methods text", _set(lambda f: f["methods"]["bootstrap"], "sampling", "modulo"), False, "methods", BOTH),
    ("resamples out of range", _set(lambda f: f["methods"]["bootstrap"], "resamples", 99), True, "resamples", BOTH),
    ("another metric table", _set(lambda f: f["metric_definitions"][0], "direction", "lower"), False,
     "metric_definitions", BOTH),
    ("unknown version", _set(lambda f: f, "statistics_version", "2.0"), True, "statistics_version", BOTH),
    ("unknown kind", _set(lambda f: f, "artifact", "ranking"), True, "artifact", BOTH),
    ("manifest hash in capitals", lambda f: f.update(evaluation_manifest_hash="E" * 64), True,
     "evaluation_manifest_hash", BOTH),
    ("model id with outer space", lambda f: f.update({"model_id" if "model_id" in f else "model_a": " m"}), True,
     "model", BOTH),
    ("a group named twice", lambda f: f["scenarios"].append(copy.deepcopy(f["scenarios"][0])), False, "twice", BOTH),
    ("overall of another kind", _set(lambda f: f["overall"], "kind", "scenario"), False, "overall.kind", BOTH),
    ("robustness that does not add up", _set(lambda f: f["overall"]["robustness"], "max_steps", 0), False,
     "all_resolved + max_steps", ("aggregate",)),
    ("observed episodes disagree", lambda f: f.update(observed_episodes=f["observed_episodes"] - 1), False,
     "observed", ("aggregate",)),
    ("a delta too many", lambda f: _overall(f)["deltas"].append([99, 0.0]), False, "one [index, delta]", ("paired",)),
    ("a delta that is a string", lambda f: _overall(f)["deltas"][0].__setitem__(1, "0"), True, "deltas[0]",
     ("paired",)),
    ("wins against the direction", lambda f: _overall(f).update(a_better=_overall(f)["b_better"] + 1), False,
     "direction", ("paired",)),
    ("wins for a metric without direction", lambda f: _overall(f, 9).update(a_better=0), False, "direction",
     ("paired",)),
    ("sign counts that do not add up", lambda f: _overall(f).update(delta_zero=_overall(f)["delta_zero"] + 1), False,
     "delta_positive", ("paired",)),
]
CASES = [(kind, *m[:4]) for m in MUTATIONS for kind in m[4]]


@pytest.mark.parametrize("kind", ["aggregate", "paired"])
def test_genuine_artifacts_pass_the_reader_and_the_schema(forms, kind: str, tmp_path: Path) -> None:  # noqa: ANN001
    """What stats and compare write is read back whole, with the digest of its bytes."""
    form = forms[kind]
    assert schema_errors(form, f"statistics-{kind}", shipped=True) == []
    path = tmp_path / "s.json"
    path.write_bytes(canonical_bytes(form) + b"\n")
    read = read_statistics_artifact(path)
    assert read.form == form and read.artifact == kind and read.resamples == RESAMPLES
    assert read.file_digest == hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(("kind", "name", "mutate", "schema_refuses", "words"), CASES,
                         ids=[f"{c[0]}: {c[1]}" for c in CASES])
def test_the_reader_refuses_every_mutation(forms, kind: str, name: str, mutate: Callable[[dict[str, Any]], None],  # noqa: ANN001
                                           schema_refuses: bool, words: str, tmp_path: Path) -> None:
    """Issue 22 (defects 6 and 15): a value of the wrong type, an impossible interval or descriptive
    statistics, counts that do not add up, a key too many or too few: refused in one line naming the file
    and the field. Where the schema alone can tell, it refuses the same document (and only there)."""
    form = copy.deepcopy(forms[kind])
    mutate(form)
    assert schema_accepts(form, f"statistics-{kind}", shipped=True) is not schema_refuses
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(form))
    with pytest.raises(StatisticsInputError) as caught:
        read_statistics_artifact(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    assert words in message, message


def test_forged_interval_of_the_issue_is_refused(forms, tmp_path: Path) -> None:  # noqa: ANN001
    """Issue 22 (defect 15): mean 0.999 with lower bound 0.998 above the upper bound is no interval."""
    form = copy.deepcopy(forms["aggregate"])
    ci = _ci(form)
    ci["upper"] = 0.9029
    ci["lower"] = 0.998
    _stats(form).update(mean=0.999, max=1.0)
    _stats(form)["quantiles"]["p95"] = 1.0
    with pytest.raises(StatisticsInputError, match=r"lower bound 0\.998 is above upper bound 0\.9029"):
        check_statistics_form(form, where="forged.json")


@pytest.mark.parametrize("text", [b'{"statistics_version": NaN}', b'{"a": Infinity}', b"[]", b""])
def test_non_finite_numbers_and_non_objects_never_reach_the_checks(text: bytes, tmp_path: Path) -> None:
    """NaN and infinity are refused by the input policy, before any field is looked at."""
    path = tmp_path / "s.json"
    path.write_bytes(text)
    with pytest.raises(StatisticsInputError, match="s.json"):
        read_statistics_artifact(path)


def test_a_mean_outside_its_interval_is_not_refused(forms) -> None:  # noqa: ANN001
    """A percentile bootstrap interval need not contain the mean, so the reader does not ask it to."""
    form = copy.deepcopy(forms["aggregate"])
    m = _overall(form)
    m["mean_ci"]["upper"] = m["mean_ci"]["lower"] = m["statistics"]["min"]
    assert m["statistics"]["mean"] > m["mean_ci"]["upper"]
    check_statistics_form(form, where="x")
    assert math.isfinite(m["statistics"]["mean"])


def test_write_artifact_output_is_read_back(forms, tmp_path: Path) -> None:  # noqa: ANN001
    """The streamed writer's bytes pass too (the form the report compares against)."""
    ctx = make_ctx()
    art = aggregate_from_values(ctx, "model-a", DIGEST_A, all_episodes(ctx), RESAMPLES)
    write_artifact(art, tmp_path / "a.json")
    assert read_statistics_artifact(tmp_path / "a.json").form == forms["aggregate"]


@pytest.mark.parametrize("kind", ["aggregate", "paired"])
@pytest.mark.parametrize(("name", "mutate", "words"), [
    ("lower above upper", _forged_interval, "is above upper bound"),
    ("mean is a string", _set(_stats, "mean", "x"), "must be a finite number"),
    ("mean is a list", _set(_stats, "mean", [0.5]), "must be a finite number"),
    ("lower is NaN", _set(_ci, "lower", float("nan")), "must be finite numbers"),
    ("upper is missing", lambda f: _ci(f).pop("upper"), "must be finite numbers"),
], ids=lambda v: v if isinstance(v, str) and " " in v else "")
def test_the_terminal_tables_refuse_an_impossible_interval(forms, kind: str, name: str,  # noqa: ANN001
                                                           mutate: Callable[[dict[str, Any]], None], words: str) -> None:
    """Issue 22 (defect 15): the other reader of statistics forms, the tables of stats/compare (and of
    render_artifact for a form from anywhere), refuses what cannot be an interval or a mean instead of showing it."""
    from emberbench.statistics import artifact_tables, render_artifact

    form = copy.deepcopy(forms[kind])
    mutate(form)
    with pytest.raises(StatisticsInputError, match=words) as caught:
        artifact_tables(form)
    assert str(caught.value).startswith("overall: evacuated_rate: ")
    with pytest.raises(StatisticsInputError):
        render_artifact(form, out=io.StringIO())
