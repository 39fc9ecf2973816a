"""The grouped-rates input: its value types and its strict validation.

An input declares the task population, the two arms, the matching conditions
(what is shared and the one thing that differs), the label rubric, the
dependence between tasks, the resampling mode, and every episode with its id,
task, arm and label. :func:`parse_input` accepts a parsed JSON value and
either returns a :class:`GroupedInput` or raises :class:`GroupedRatesError`
naming the first offending field; nothing is repaired or dropped.

Order is meaningful and kept: tasks in declared order, arms in declared order
(the contrast is first minus second), episodes in file order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import GroupedRatesError
from .contract import (
    CONDITIONS,
    INPUT_FORMAT,
    INPUT_VERSION,
    LABELS,
    MAX_EPISODES,
    MAX_ID_CHARS,
    MAX_SEED,
    MAX_TASKS,
    MAX_TEXT_CHARS,
    MODES,
    VARIABLE_CONDITIONS,
)

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]*")

Pairs = tuple[tuple[str, str], ...]

_TOP_KEYS = (
    "format",
    "version",
    "description",
    "population",
    "dependence",
    "arms",
    "matching",
    "rubric",
    "resampling",
    "episodes",
)


@dataclass(frozen=True, slots=True)
class Episode:
    """One attempted episode: its id, task, arm and rubric label."""

    id: str
    task: str
    arm: str
    label: str


@dataclass(frozen=True, slots=True)
class Resampling:
    """The declared resampling mode; seed and replicates only for monte-carlo."""

    mode: str
    seed: int | None = None
    replicates: int | None = None

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise GroupedRatesError(f"resampling.mode {self.mode!r} is not one of {list(MODES)}")
        is_mc = self.mode == "monte-carlo"
        if is_mc != (self.seed is not None) or is_mc != (self.replicates is not None):
            raise GroupedRatesError("resampling: seed and replicates belong to monte-carlo only")

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form (the keys an input file carries)."""
        if self.mode != "monte-carlo":
            return {"mode": self.mode}
        return {"mode": self.mode, "seed": self.seed, "replicates": self.replicates}


@dataclass(frozen=True, slots=True)
class GroupedInput:
    """A validated grouped-rates input. Build it with :func:`parse_input`."""

    description: str
    population: str
    tasks: tuple[str, ...]
    dependence: str
    arms: tuple[str, str]
    shared: tuple[tuple[str, str], ...]
    varied_condition: str
    varied: tuple[tuple[str, str], ...]
    rubric: tuple[tuple[str, str], ...]
    resampling: Resampling
    episodes: tuple[Episode, ...]

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form; ``parse_input(x.to_dict()) == x``."""
        return {
            "format": INPUT_FORMAT,
            "version": INPUT_VERSION,
            "description": self.description,
            "population": {"description": self.population, "tasks": list(self.tasks)},
            "dependence": self.dependence,
            "arms": list(self.arms),
            "matching": {
                "shared": dict(self.shared),
                "varied": {"condition": self.varied_condition, "per_arm": dict(self.varied)},
            },
            "rubric": dict(self.rubric),
            "resampling": self.resampling.to_dict(),
            "episodes": [
                {"id": e.id, "task": e.task, "arm": e.arm, "label": e.label} for e in self.episodes
            ],
        }


def _fail(where: str, message: str) -> GroupedRatesError:
    return GroupedRatesError(f"input: {where}: {message}")


def _object(value: object, where: str, keys: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(where, "must be a JSON object")
    for key in value:
        if key not in keys:
            raise _fail(where, f"unknown key {key!r} (allowed: {', '.join(keys)})")
    for key in keys:
        if key not in value:
            raise _fail(where, f"missing key {key!r}")
    return value


def _text(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _fail(where, "must be a non-empty string")
    if len(value) > MAX_TEXT_CHARS:
        raise _fail(where, f"longer than max_text_chars = {MAX_TEXT_CHARS}")
    return value


def _ident(value: object, where: str) -> str:
    if not isinstance(value, str) or _ID.fullmatch(value) is None:
        raise _fail(
            where,
            f"{value!r} is not an id (letters, digits and . _ : / @ + -, starting with a "
            "letter or digit)",
        )
    if len(value) > MAX_ID_CHARS:
        raise _fail(where, f"id longer than max_id_chars = {MAX_ID_CHARS}")
    return value


def _integer(value: object, where: str, low: int, high: int, cap: str | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(where, "must be an integer")
    if value < low or value > high:
        bound = f" (cap {cap} = {high})" if cap and value > high else ""
        raise _fail(where, f"{value} is outside [{low}, {high}]{bound}")
    return value


def _id_list(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise _fail(where, "must be a JSON array")
    ids = tuple(_ident(item, f"{where}[{i}]") for i, item in enumerate(value))
    seen: set[str] = set()
    for i, item in enumerate(ids):
        if item in seen:
            raise _fail(f"{where}[{i}]", f"duplicate id {item!r}")
        seen.add(item)
    return ids


def _resampling(value: object) -> Resampling:
    if not isinstance(value, dict) or "mode" not in value:
        raise _fail("resampling", "must be an object with a 'mode'")
    mode = value["mode"]
    if mode not in MODES:
        raise _fail("resampling.mode", f"{mode!r} is not one of {list(MODES)}")
    if mode != "monte-carlo":
        _object(value, "resampling", ("mode",))
        return Resampling(mode)
    _object(value, "resampling", ("mode", "seed", "replicates"))
    seed = _integer(value["seed"], "resampling.seed", 0, MAX_SEED, "max_seed")
    # Larger replicate counts are refused later, against max_draws, by the planner.
    replicates = _integer(value["replicates"], "resampling.replicates", 1, 2**63)
    return Resampling(mode, seed, replicates)


def _matching(value: object, arms: tuple[str, str]) -> tuple[Pairs, str, Pairs]:
    body = _object(value, "matching", ("shared", "varied"))
    varied = _object(body["varied"], "matching.varied", ("condition", "per_arm"))
    condition = varied["condition"]
    if condition not in VARIABLE_CONDITIONS:
        raise _fail(
            "matching.varied.condition",
            f"{condition!r} is not one of {list(VARIABLE_CONDITIONS)} (the outcome rubric "
            "must be shared)",
        )
    shared_keys = tuple(name for name in CONDITIONS if name != condition)
    shared = _object(body["shared"], "matching.shared", shared_keys)
    per_arm = _object(varied["per_arm"], "matching.varied.per_arm", arms)
    values = tuple((arm, _text(per_arm[arm], f"matching.varied.per_arm.{arm}")) for arm in arms)
    if values[0][1] == values[1][1]:
        raise _fail("matching.varied.per_arm", "the two arms declare the same value")
    shared_pairs = tuple((k, _text(shared[k], f"matching.shared.{k}")) for k in shared_keys)
    return shared_pairs, condition, values


def _episodes(value: object, tasks: tuple[str, ...], arms: tuple[str, str]) -> tuple[Episode, ...]:
    if not isinstance(value, list):
        raise _fail("episodes", "must be a JSON array")
    if len(value) > MAX_EPISODES:
        raise _fail("episodes", f"{len(value)} episodes exceed the cap max_episodes = {MAX_EPISODES}")
    task_set, arm_set = frozenset(tasks), frozenset(arms)
    seen: set[str] = set()
    out = []
    for i, item in enumerate(value):
        where = f"episodes[{i}]"
        body = _object(item, where, ("id", "task", "arm", "label"))
        ident = _ident(body["id"], f"{where}.id")
        if ident in seen:
            raise _fail(f"{where}.id", f"duplicate episode id {ident!r}")
        seen.add(ident)
        task, arm, label = body["task"], body["arm"], body["label"]
        if not isinstance(task, str) or task not in task_set:
            raise _fail(f"{where}.task", f"{task!r} is not a declared task (population.tasks)")
        if not isinstance(arm, str) or arm not in arm_set:
            raise _fail(f"{where}.arm", f"{arm!r} is not a declared arm (arms)")
        if not isinstance(label, str) or label not in LABELS:
            raise _fail(f"{where}.label", f"{label!r} is not a rubric label {list(LABELS)}")
        out.append(Episode(ident, task, arm, label))
    return tuple(out)


def parse_input(data: object) -> GroupedInput:
    """Validate a parsed input document and return it as a :class:`GroupedInput`.

    Args:
        data: the value of ``json.loads`` on the input bytes.

    Raises:
        GroupedRatesError: on an unknown or missing key, a wrong format or a
            newer version, a malformed id or text, a duplicate task, arm or
            episode id, an episode in an undeclared task or arm, a label
            outside the rubric, or a task or episode count over its cap. The
            message names the field.
    """
    top = data if isinstance(data, dict) else None
    if top is None:
        raise _fail("document", "must be a JSON object")
    if top.get("format") != INPUT_FORMAT:
        raise _fail("format", f"{top.get('format')!r} is not {INPUT_FORMAT!r}")
    if top.get("version") != INPUT_VERSION:
        raise _fail(
            "version",
            f"{top.get('version')!r} is not supported; this reader reads version {INPUT_VERSION}",
        )
    _object(top, "document", _TOP_KEYS)
    population = _object(top["population"], "population", ("description", "tasks"))
    tasks = _id_list(population["tasks"], "population.tasks")
    if not tasks:
        raise _fail("population.tasks", "declares no task")
    if len(tasks) > MAX_TASKS:
        raise _fail("population.tasks", f"{len(tasks)} tasks exceed the cap max_tasks = {MAX_TASKS}")
    arm_ids = _id_list(top["arms"], "arms")
    if len(arm_ids) != 2:
        raise _fail("arms", f"must declare exactly two arms, not {len(arm_ids)}")
    arms = (arm_ids[0], arm_ids[1])
    shared, condition, varied = _matching(top["matching"], arms)
    rubric_body = _object(top["rubric"], "rubric", LABELS)
    rubric = tuple((label, _text(rubric_body[label], f"rubric.{label}")) for label in LABELS)
    return GroupedInput(
        description=_text(top["description"], "description"),
        population=_text(population["description"], "population.description"),
        tasks=tasks,
        dependence=_text(top["dependence"], "dependence"),
        arms=arms,
        shared=shared,
        varied_condition=condition,
        varied=varied,
        rubric=rubric,
        resampling=_resampling(top["resampling"]),
        episodes=_episodes(top["episodes"], tasks, arms),
    )
