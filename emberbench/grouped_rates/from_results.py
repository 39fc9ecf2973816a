"""Build a grouped-rates input from two EMBERBench result artifacts' plain data.

Mapping: tasks are the manifest's scenarios (in order of first appearance),
arms are the two models (the contrast is first minus second), repeats are
seeds, and each episode's label follows the chosen failure rule applied to
its outcome counts. A manifest episode absent from a model's results is kept
as ``unresolved``; nothing is dropped.

The declared matching conditions are honest about what differs: the varied
condition is the agent (the model under evaluation); the environment, the
episode budget (the same manifest of scenario and seed pairs) and the outcome
rubric are shared. The reader records these declarations and does not verify
them; the result loader is what checks that both artifacts share a manifest.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import GroupedRatesError
from .contract import INPUT_FORMAT, INPUT_VERSION, MAX_DRAW_CELLS, MAX_DRAWS
from .resampling import draw_count

FAILURE_RULES: tuple[tuple[str, str], ...] = (
    ("casualty", "at least one casualty (casualties > 0)"),
    ("not-evacuated", "not everyone evacuated (evacuated < population)"),
    ("stranded", "at least one person stranded (stranded > 0)"),
)
"""Each failure rule and the rubric text that defines it."""

COUNT_KEYS = ("population", "evacuated", "casualties", "stranded")

_ARM_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,99}")
"""Model ids used as arm ids unchanged: the input format's id characters, at most 100 of them."""


def arm_id(model_id: str) -> str:
    """The arm id of a model in a grouped-rates input.

    A result's model id may be any 1-256 printable characters, but the
    input format's ids are restricted (letters, digits, ``._:/@+-``, and
    episode ids ``SCENARIO/seed-SEED/ARM`` must stay short). A model id that
    fits is used as it is (so reports of such models read naturally); any
    other becomes ``model-`` and the first 16 hex digits of its SHA-256. The
    model id itself is kept, whole, in ``matching.varied.per_arm``.
    """
    if _ARM_ID.fullmatch(model_id):
        return model_id
    return "model-" + hashlib.sha256(model_id.encode("utf-8")).hexdigest()[:16]


def is_failure(rule: str, counts: Mapping[str, int]) -> bool:
    """Apply failure ``rule`` to one episode's outcome counts.

    Raises:
        GroupedRatesError: for an unknown rule or malformed counts.
    """
    for key in COUNT_KEYS:
        value = counts.get(key) if isinstance(counts, Mapping) else None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise GroupedRatesError(f"outcome count {key!r} must be a non-negative integer")
    if rule == "casualty":
        return counts["casualties"] > 0
    if rule == "not-evacuated":
        return counts["evacuated"] < counts["population"]
    if rule == "stranded":
        return counts["stranded"] > 0
    raise GroupedRatesError(f"unknown failure rule {rule!r}; use one of {[r for r, _ in FAILURE_RULES]}")


def default_resampling(n_tasks: int) -> dict[str, Any]:
    """Return the exact mode that fits the caps for ``n_tasks`` tasks.

    ``exact`` when all ordered draws fit, else ``exact-multiset``.

    Raises:
        GroupedRatesError: when neither exact mode fits; the caller must then
            choose ``monte-carlo`` with an explicit seed and replicate count.
    """
    for mode in ("exact", "exact-multiset"):
        rows = draw_count(mode, n_tasks)
        if rows <= MAX_DRAWS and rows * n_tasks <= MAX_DRAW_CELLS:
            return {"mode": mode}
    raise GroupedRatesError(
        f"{n_tasks} tasks are too many for exact resampling within max_draws = {MAX_DRAWS}; "
        "choose monte-carlo with an explicit seed and replicate count"
    )


def input_from_results(
    episodes: Sequence[tuple[int, str, int]],
    model_a: str,
    model_b: str,
    counts_a: Mapping[int, Mapping[str, int]],
    counts_b: Mapping[int, Mapping[str, int]],
    failure: str,
    resampling: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Return a grouped-rates input document (a JSON-ready mapping).

    Args:
        episodes: the manifest's episodes as ``(index, scenario_id, seed)``,
            in manifest order; each (scenario, seed) pair appears once.
        model_a: id of the first arm's model (the contrast is a minus b).
        model_b: id of the second arm's model.
        counts_a: manifest index -> outcome counts (``population``,
            ``evacuated``, ``casualties``, ``stranded``) of model a; a missing
            index is an unresolved episode.
        counts_b: the same for model b.
        failure: ``casualty``, ``not-evacuated`` or ``stranded``.
        resampling: the input's ``resampling`` object; by default the exact
            mode that fits the caps (see :func:`default_resampling`).

    Raises:
        GroupedRatesError: for equal model ids, an unknown rule, duplicate
            manifest indices or (scenario, seed) pairs, result counts for an
            index not in the manifest, or malformed counts.
    """
    rules = dict(FAILURE_RULES)
    if failure not in rules:
        raise GroupedRatesError(f"unknown failure rule {failure!r}; use one of {list(rules)}")
    if model_a == model_b:
        raise GroupedRatesError(f"both result artifacts are for the same model {model_a!r}")
    arm_a, arm_b = arm_id(model_a), arm_id(model_b)
    if arm_a == arm_b:  # only a model id that is itself another's derived arm id can do this
        raise GroupedRatesError(f"models {model_a!r} and {model_b!r} map to the same arm id {arm_a!r}")
    indices: set[int] = set()
    pairs: set[tuple[str, int]] = set()
    tasks: list[str] = []
    for index, scenario, seed in episodes:
        if index in indices:
            raise GroupedRatesError(f"manifest index {index} appears twice")
        if (scenario, seed) in pairs:
            raise GroupedRatesError(f"manifest repeats scenario {scenario!r} with seed {seed}")
        indices.add(index)
        pairs.add((scenario, seed))
        if scenario not in tasks:
            tasks.append(scenario)
    for model, counts in ((model_a, counts_a), (model_b, counts_b)):
        extra = sorted(set(counts) - indices)
        if extra:
            raise GroupedRatesError(f"results of {model!r} hold index {extra[0]} not in the manifest")
    rows = []
    for index, scenario, seed in episodes:
        for arm, counts in ((arm_a, counts_a), (arm_b, counts_b)):
            if index in counts:
                label = "failure" if is_failure(failure, counts[index]) else "success"
            else:
                label = "unresolved"
            rows.append(
                {"id": f"{scenario}/seed-{seed}/{arm}", "task": scenario, "arm": arm, "label": label}
            )
    return {
        "format": INPUT_FORMAT,
        "version": INPUT_VERSION,
        "description": (
            f"EMBERBench results of {model_a} and {model_b} on one manifest, failure rule "
            f"'{failure}'"
        ),
        "population": {
            "description": (
                "the scenarios of the evaluated manifest: a fixed, designed suite, not a random "
                "sample of buildings"
            ),
            "tasks": tasks,
        },
        "dependence": (
            "all scenarios run on the same simulator and are played by the same two models; "
            "scenarios are designed, not sampled independently, so tasks may share difficulty "
            "and failure modes"
        ),
        "arms": [arm_a, arm_b],
        "matching": {
            "shared": {
                "environment": "the EMBERBench simulator and the suite's scenario files",
                "budget": (
                    "the same manifest of (scenario, seed) episodes for both models, each run "
                    "to its scenario's step limit"
                ),
                "outcome_rubric": f"failure rule '{failure}' applied to the episode's counts",
            },
            "varied": {"condition": "agent", "per_arm": {arm_a: model_a, arm_b: model_b}},
        },
        "rubric": {
            "failure": rules[failure],
            "success": f"the episode completed and is not a failure under '{failure}'",
            "unresolved": "the manifest episode is missing from the model's result artifact",
        },
        "resampling": dict(resampling) if resampling is not None else default_resampling(len(tasks)),
        "episodes": rows,
    }
