"""Run records: the complete, replayable account of one episode.

Layout (canonical JSON; docs/formats.md)::

    {"header": {"record_version": "1.0", "scenario_id": "...", "scenario_hash": "<sha256>",
                "seed": 3, "simulator_version": "0.2.0", "observation_version": "1.0",
                "population": 6},
     "actions": ["NN.-S.", ...],          # one string per step, one char per person
     "outcome": {"steps": 12, "termination": "all_resolved",
                 "blocked": [".c.-..", ...],   # per step: . not blocked, w wall, c people, - not inside
                 "evacuations": [[step, "p001", "east"], ...],
                 "casualties": [[step, "p004"], ...],
                 "stranded": ["p006"],
                 "burning": [3, 4, 6, ...],           # burning cells at the end of each step
                 "exposure": [[1, 4], [2, 9], ...]}}  # [distance, person-steps] (docs/metrics.md)

Action characters: ``N E S W`` moves, ``.`` stay, ``-`` person not inside.
The record's identity is its canonical JSON; its digest is the SHA-256 of
those bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..io.canonical import canonical_bytes, is_sha256_hex, sha256_hex
from ..errors import RecordAuthenticationError
from ..sim.scenario import Scenario
from ..sim.simulator import Outcome
from ..io.versions import OBSERVATION_VERSION, RECORD_VERSION, SIMULATOR_VERSION

HEADER_KEYS = frozenset(
    {"record_version", "scenario_id", "scenario_hash", "seed", "simulator_version",
     "observation_version", "population"}
)
OUTCOME_KEYS = frozenset(
    {"steps", "termination", "blocked", "evacuations", "casualties", "stranded", "burning", "exposure"}
)
RECORD_KEYS = frozenset({"header", "actions", "outcome"})
TERMINATIONS = ("all_resolved", "max_steps")


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One episode: header, action log and what the episode produced."""

    scenario_id: str
    scenario_hash: str
    seed: int
    population: int
    actions: tuple[str, ...]
    steps: int
    termination: str
    blocked: tuple[str, ...]
    evacuations: tuple[tuple[int, str, str], ...]
    casualties: tuple[tuple[int, str], ...]
    stranded: tuple[str, ...]
    burning: tuple[int, ...]
    exposure: tuple[tuple[int, int], ...]
    record_version: str = RECORD_VERSION
    simulator_version: str = SIMULATOR_VERSION
    observation_version: str = OBSERVATION_VERSION

    def header(self) -> dict[str, Any]:
        """The header object."""
        return {
            "record_version": self.record_version,
            "scenario_id": self.scenario_id,
            "scenario_hash": self.scenario_hash,
            "seed": self.seed,
            "simulator_version": self.simulator_version,
            "observation_version": self.observation_version,
            "population": self.population,
        }

    def to_dict(self) -> dict[str, Any]:
        """The record's JSON object."""
        return {
            "header": self.header(),
            "actions": list(self.actions),
            "outcome": {
                "steps": self.steps,
                "termination": self.termination,
                "blocked": list(self.blocked),
                "evacuations": [list(e) for e in self.evacuations],
                "casualties": [list(c) for c in self.casualties],
                "stranded": list(self.stranded),
                "burning": list(self.burning),
                "exposure": [list(e) for e in self.exposure],
            },
        }

    def canonical_bytes(self) -> bytes:
        """The record's canonical JSON (its identity)."""
        return canonical_bytes(self.to_dict())

    def digest(self) -> str:
        """SHA-256 of :meth:`canonical_bytes`."""
        return sha256_hex(self.canonical_bytes())


def record_from_outcome(scenario: Scenario, seed: int, outcome: Outcome) -> RunRecord:
    """Build the record of a finished simulation of ``scenario`` under ``seed``."""
    ids = [p.id for p in scenario.people]
    exits = [e.id for e in scenario.exits]
    return RunRecord(
        scenario_id=scenario.id,
        scenario_hash=scenario.content_hash,
        seed=seed,
        population=scenario.population,
        actions=outcome.actions,
        steps=outcome.steps,
        termination=outcome.termination,
        blocked=outcome.blocked,
        evacuations=tuple((s, ids[p], exits[e]) for s, p, e in outcome.evacuations),
        casualties=tuple((s, ids[p]) for s, p in outcome.casualties),
        stranded=tuple(ids[p] for p in outcome.stranded),
        burning=outcome.burning,
        exposure=tuple((d, n) for d, n in enumerate(outcome.exposure) if d >= 1 and n > 0),
    )


def _fail(message: str, field: str) -> RecordAuthenticationError:
    return RecordAuthenticationError(f"record {field}: {message}", field=field)


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _exact_keys(obj: object, keys: frozenset[str], field: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise _fail(f"must be an object, got {type(obj).__name__}", field)
    if set(obj) != keys:
        extra, missing = sorted(set(obj) - keys), sorted(keys - set(obj))
        raise _fail(f"unexpected keys {extra}, missing keys {missing}", field)
    return obj


def _str_list(obj: object, field: str) -> tuple[str, ...]:
    if not isinstance(obj, list) or not all(isinstance(x, str) for x in obj):
        raise _fail("must be a list of strings", field)
    return tuple(obj)


def record_from_dict(data: object) -> RunRecord:
    """Parse a record object, checking structure, types and versions (not replay).

    Raises:
        RecordAuthenticationError: naming the field that is wrong.
    """
    top = _exact_keys(data, RECORD_KEYS, "object")
    h = _exact_keys(top["header"], HEADER_KEYS, "header")
    if h["record_version"] != RECORD_VERSION:
        raise _fail(f"unsupported record_version {h['record_version']!r} (this version reads {RECORD_VERSION!r})",
                    "header.record_version")
    if h["simulator_version"] != SIMULATOR_VERSION:
        raise _fail(f"simulator_version {h['simulator_version']!r} differs from the running {SIMULATOR_VERSION!r}",
                    "header.simulator_version")
    if h["observation_version"] != OBSERVATION_VERSION:
        raise _fail(f"observation_version {h['observation_version']!r} differs from the running "
                    f"{OBSERVATION_VERSION!r}", "header.observation_version")
    if not isinstance(h["scenario_id"], str):
        raise _fail("must be a string", "header.scenario_id")
    if not is_sha256_hex(h["scenario_hash"]):
        raise _fail("must be a lowercase SHA-256 hex digest", "header.scenario_hash")
    if not _is_int(h["seed"]) or not 0 <= h["seed"] < (1 << 64):
        raise _fail("must be an integer in [0, 2**64 - 1]", "header.seed")
    if not _is_int(h["population"]) or h["population"] < 1:
        raise _fail("must be a positive integer", "header.population")
    actions = _str_list(top["actions"], "actions")
    o = _exact_keys(top["outcome"], OUTCOME_KEYS, "outcome")
    if not _is_int(o["steps"]) or o["steps"] < 0:
        raise _fail("must be a non-negative integer", "outcome.steps")
    if o["termination"] not in TERMINATIONS:
        raise _fail(f"must be one of {TERMINATIONS}", "outcome.termination")
    evac = o["evacuations"]
    if not isinstance(evac, list) or not all(
        isinstance(e, list) and len(e) == 3 and _is_int(e[0]) and isinstance(e[1], str) and isinstance(e[2], str)
        for e in evac
    ):
        raise _fail("must be a list of [step, person id, exit id]", "outcome.evacuations")
    cas = o["casualties"]
    if not isinstance(cas, list) or not all(
        isinstance(c, list) and len(c) == 2 and _is_int(c[0]) and isinstance(c[1], str) for c in cas
    ):
        raise _fail("must be a list of [step, person id]", "outcome.casualties")
    burning = o["burning"]
    if not isinstance(burning, list) or not all(_is_int(b) and b >= 0 for b in burning):
        raise _fail("must be a list of non-negative integers", "outcome.burning")
    exposure = o["exposure"]
    if not isinstance(exposure, list) or not all(
        isinstance(e, list) and len(e) == 2 and _is_int(e[0]) and _is_int(e[1]) for e in exposure
    ):
        raise _fail("must be a list of [distance, count] pairs", "outcome.exposure")
    return RunRecord(
        scenario_id=h["scenario_id"], scenario_hash=h["scenario_hash"], seed=h["seed"],
        population=h["population"], actions=actions, steps=o["steps"], termination=o["termination"],
        blocked=_str_list(o["blocked"], "outcome.blocked"),
        evacuations=tuple((e[0], e[1], e[2]) for e in evac),
        casualties=tuple((c[0], c[1]) for c in cas),
        stranded=_str_list(o["stranded"], "outcome.stranded"),
        burning=tuple(burning),
        exposure=tuple((e[0], e[1]) for e in exposure),
        record_version=h["record_version"], simulator_version=h["simulator_version"],
        observation_version=h["observation_version"],
    )


def first_difference(expected: RunRecord, actual: RunRecord) -> str:
    """Name the first field (or step) where two records differ, for error messages."""
    eh, ah = expected.header(), actual.header()
    for key in sorted(eh):
        if eh[key] != ah[key]:
            return f"header.{key}"
    for name in ("actions", "blocked"):
        e, a = getattr(expected, name), getattr(actual, name)
        for step, (x, y) in enumerate(zip(e, a), start=1):
            if x != y:
                col = next(i for i, (p, q) in enumerate(zip(x, y)) if p != q) if len(x) == len(y) else None
                where = f" (person index {col})" if col is not None else ""
                return f"{'outcome.' if name == 'blocked' else ''}{name} at step {step}{where}"
        if len(e) != len(a):
            return f"{'outcome.' if name == 'blocked' else ''}{name} length ({len(a)} vs {len(e)} steps)"
    for name in ("steps", "termination", "evacuations", "casualties", "stranded", "burning", "exposure"):
        e, a = getattr(expected, name), getattr(actual, name)
        if e != a:
            if isinstance(e, tuple):
                for i, (x, y) in enumerate(zip(e, a)):
                    if x != y:
                        return f"outcome.{name}[{i}]"
                return f"outcome.{name} length"
            return f"outcome.{name}"
    return "canonical form"
