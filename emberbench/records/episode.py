"""Playing an episode, and authenticating a record by replaying it.

:func:`run_episode` is the single way an episode is played: every runner calls
it (or :func:`play_episode`, which also returns the metrics computed on the
way). :func:`authenticate` replays a record's action log in a fresh
simulator, requires the replay to reproduce the record byte for byte, and
returns the episode metrics. Nothing is repaired.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from ..sim.actions import encode_action
from ..io.canonical import canonical_bytes
from ..errors import MALFORMED, AgentError, CanonicalFormError, RecordAuthenticationError, SuiteError
from .metrics import EpisodeMetrics, metrics_from_outcome
from ..sim.observation import Observation
from ..policies.external import ExternalAgent
from .record import RunRecord, first_difference, record_from_dict, record_from_outcome
from ..sim.scenario import Scenario
from ..sim.simulator import Simulation

Policy = Callable[[Observation], Any]

# Action characters -> move codes; 255 marks a character that is not a move.
_CODE_OF = np.full(256, 255, dtype=np.uint8)
for _code, _ch in enumerate(".NESW"):
    _CODE_OF[ord(_ch)] = _code
_DASH = ord("-")


def play_episode(scenario: Scenario, seed: int, policy: Policy) -> tuple[RunRecord, EpisodeMetrics]:
    """Play one episode and return its record and metrics.

    The policy is called with exactly one positional argument, the
    observation, once per step.

    An external agent (``cmd:`` policy) is told which episode it plays, for
    its errors and stderr log only; the agent process never learns it.

    Raises:
        InvalidActionError: the policy returned an invalid action.
        AgentError: an external agent failed; the message names the scenario
            and seed.
        Exception: whatever the policy raises propagates unchanged.
    """
    if isinstance(policy, ExternalAgent):
        policy.label_episode(scenario.id, seed)
    sim = Simulation(scenario, seed)
    try:
        while not sim.done:
            action = policy(sim.observation())
            codes = encode_action(action, sim.inside_ids(), sim.t)
            sim.step(np.asarray(codes, dtype=np.int64))
    except AgentError as exc:
        raise exc.in_episode(scenario.id, seed) from None
    outcome = sim.outcome()
    return record_from_outcome(scenario, seed, outcome), metrics_from_outcome(scenario, outcome)


async def play_episode_async(scenario: Scenario, seed: int, policy: Callable[[Observation], Any],
                             ) -> tuple[RunRecord, EpisodeMetrics]:
    """:func:`play_episode` for an asynchronous policy: ``await policy(observation)`` at every step.

    The record is the one :func:`play_episode` would give for the same
    answers; only how the runner waits for them differs.

    Raises:
        InvalidActionError, Exception: as :func:`play_episode`.
    """
    sim = Simulation(scenario, seed)
    while not sim.done:
        action = await policy(sim.observation())
        codes = encode_action(action, sim.inside_ids(), sim.t)
        sim.step(np.asarray(codes, dtype=np.int64))
    outcome = sim.outcome()
    return record_from_outcome(scenario, seed, outcome), metrics_from_outcome(scenario, outcome)


def run_episode(scenario: Scenario, seed: int, policy: Policy) -> RunRecord:
    """Play one episode of ``scenario`` under ``seed`` with ``policy``; return its record."""
    return play_episode(scenario, seed, policy)[0]


def replay(scenario: Scenario, record: RunRecord, *,
           observer: Callable[[Simulation], None] | None = None) -> tuple[RunRecord, EpisodeMetrics]:
    """Re-simulate ``record``'s action log on ``scenario``; return the reproduced record and metrics.

    ``observer``, if given, is called with the simulation after every step
    (the viewer records positions this way); it must not change it.

    Raises:
        RecordAuthenticationError: the action log is not playable (wrong
            length, a move for someone not inside, a missing move, an unknown
            character).
    """
    sim = Simulation(scenario, record.seed)
    n = scenario.population
    for step, line in enumerate(record.actions, start=1):
        if sim.done:
            raise RecordAuthenticationError(
                f"record actions: the log continues after the episode ended at step {sim.t}", field="actions"
            )
        if len(line) != n:
            raise RecordAuthenticationError(
                f"record actions at step {step}: {len(line)} characters for {n} people", field=f"actions[{step}]"
            )
        raw = np.frombuffer(line.encode("ascii", "replace"), dtype=np.uint8)
        codes = _CODE_OF[raw[sim.inside]]
        dash = raw == _DASH
        if (codes == 255).any() or dash.sum() != n - sim.inside.size:
            raise RecordAuthenticationError(
                f"record actions at step {step}: the log's moves do not match the people inside "
                "at that step in the replay", field=f"actions[{step}]"
            )
        # The line was checked against the people inside: it is exactly the
        # line the step would write, so the simulator keeps it as is.
        sim.step(codes.astype(np.int64), line)
        if observer is not None:
            observer(sim)
        # Stop at the first step whose replayed outcome differs, so the message
        # points at where the record and the replay part ways.
        if step <= len(record.blocked) and sim.blocked_line(step) != record.blocked[step - 1]:
            raise RecordAuthenticationError(
                f"record does not reproduce under replay: first difference in outcome.blocked at step {step}",
                field=f"outcome.blocked[{step}]",
            )
    if not sim.done:
        raise RecordAuthenticationError(
            f"record actions: the log ends at step {sim.t} but the episode is not finished", field="actions"
        )
    outcome = sim.outcome()
    return record_from_outcome(scenario, record.seed, outcome), metrics_from_outcome(scenario, outcome)


def authenticate(record: RunRecord | dict[str, Any], suite: Any) -> EpisodeMetrics:
    """Check and replay a record; return its metrics if it reproduces exactly.

    Args:
        record: a :class:`RunRecord` or its parsed JSON object.
        suite: the :class:`~emberbench.sim.suite.Suite` that resolves the scenario
            by id and content hash.

    Raises:
        RecordAuthenticationError: naming the field or step that differs (a
            :class:`RunRecord` whose fields cannot be serialized, or a suite
            that is not one, too).
    """
    if isinstance(record, RunRecord):
        try:
            as_dict = record.to_dict()
            given_bytes = canonical_bytes(as_dict)
        except CanonicalFormError as exc:
            raise RecordAuthenticationError(f"record: {exc}", field="record") from None
        except MALFORMED as exc:
            raise RecordAuthenticationError(f"record cannot be serialized ({type(exc).__name__}: {exc})",
                                            field="record") from None
        parsed = record_from_dict(as_dict)
    else:
        parsed = record_from_dict(record)
        given_bytes = None
    return authenticate_parsed(parsed, suite, given_bytes)


def authenticate_parsed(parsed: RunRecord, suite: Any, given_bytes: bytes | None = None) -> EpisodeMetrics:
    """:func:`authenticate` for a record already parsed by :func:`~emberbench.records.record.record_from_dict`.

    Args:
        parsed: the parsed record.
        suite: resolves the scenario by id and content hash.
        given_bytes: the record's canonical JSON if the caller has it
            (``parsed.canonical_bytes()`` otherwise); the replay must
            reproduce exactly these bytes.

    Raises:
        RecordAuthenticationError: naming the field or step that differs.
    """
    if not callable(getattr(suite, "resolve", None)):
        raise RecordAuthenticationError(f"expected a Suite, got {type(suite).__name__}", field="suite")
    try:
        scenario = suite.resolve(parsed.scenario_id, parsed.scenario_hash)
    except SuiteError as exc:
        raise RecordAuthenticationError(f"record header: {exc}", field="header.scenario_hash") from None
    reproduced, metrics = replay(scenario, parsed)
    if given_bytes is None:
        given_bytes = parsed.canonical_bytes()
    if reproduced.canonical_bytes() != given_bytes:
        where = first_difference(reproduced, parsed)
        raise RecordAuthenticationError(f"record does not reproduce under replay: first difference in {where}",
                                        field=where)
    return metrics


def authenticate_file(path: str | os.PathLike[str], suite: Any) -> EpisodeMetrics:
    """Read a record file under the input policy and authenticate it (:func:`authenticate_bytes`).

    Raises:
        RecordAuthenticationError: the file breaks the input policy, is not
            the record's canonical JSON, or fails :func:`authenticate`; the
            message names the file.
    """
    from ..io.input_policy import RECORD, read_input

    where = os.fspath(path)
    return authenticate_bytes(read_input(where, RECORD, error=RecordAuthenticationError), suite, where=where)


def authenticate_bytes(data: bytes, suite: Any, *, where: str = "record") -> EpisodeMetrics:
    """Authenticate a serialized record: it must be canonical JSON (one trailing newline allowed).

    Raises:
        RecordAuthenticationError: the text is not the record's canonical form,
            or the record fails :func:`authenticate`.
    """
    from ..io.canonical import CanonicalFormError, parse_json_strict
    from ..io.input_policy import RECORD

    body = data[:-1] if data.endswith(b"\n") else data
    try:
        obj = parse_json_strict(body, where=where, max_values=RECORD.max_values)
    except CanonicalFormError as exc:
        raise RecordAuthenticationError(str(exc), field="text") from None
    from ..schemas.kinds import not_what_was_wanted

    other = not_what_was_wanted(where, obj, "record")
    if other is not None:  # a result, a manifest...: refused as what it is, not by its keys
        raise RecordAuthenticationError(other, field="object")
    if canonical_bytes(obj) != body:
        raise RecordAuthenticationError(f"{where}: record is not in canonical JSON form", field="text")
    try:
        return authenticate(obj, suite)
    except RecordAuthenticationError as exc:
        raise RecordAuthenticationError(f"{where}: {exc}", field=exc.field) from None
