"""Run records: round trip, canonical identity, and tamper detection by replay."""

from __future__ import annotations

import copy
import json

import pytest

from emberbench.io.canonical import canonical_bytes
from emberbench.records.episode import authenticate, authenticate_bytes, play_episode
from emberbench.errors import RecordAuthenticationError
from emberbench.policies import BUILTIN_POLICIES
from emberbench.records.record import record_from_dict
from emberbench.sim.rng import SplitMix64


def test_round_trip_every_baseline_every_scenario(suite) -> None:  # noqa: ANN001
    """Run, serialize, load and authenticate gives the metrics computed during the run."""
    for scenario in suite.scenarios:
        for factory in BUILTIN_POLICIES.values():
            record, metrics = play_episode(scenario, 0, factory())
            text = record.canonical_bytes()
            loaded = record_from_dict(json.loads(text))
            assert loaded == record
            assert authenticate(json.loads(text), suite) == metrics
            assert authenticate_bytes(text + b"\n", suite) == metrics


@pytest.fixture(scope="module")
def sample(suite):  # noqa: ANN001
    scenario = suite.scenario("v1-pub-10-route-invalidation")
    record, metrics = play_episode(scenario, 4, BUILTIN_POLICIES["greedy"]())
    return record.to_dict()


def tampered(sample: dict, path: list, value: object) -> dict:
    data = copy.deepcopy(sample)
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value(target[path[-1]]) if callable(value) else value
    return data


def flip_char(line: str, i: int, new: str) -> str:
    return line[:i] + new + line[i + 1:]


CASES = [
    ("one action", ["actions", 3], lambda a: flip_char(a, a.index("E") if "E" in a else 0, "S" if "E" in a else "N"),
     "at step"),
    ("one event", ["outcome", "evacuations", 0, 0], lambda s: s + 1, "outcome.evacuations[0]"),
    ("seed", ["header", "seed"], lambda s: s + 1, "outcome.burning"),
    ("scenario hash", ["header", "scenario_hash"], "0" * 64, "has content hash"),
    ("record version", ["header", "record_version"], "9.9", "unsupported record_version '9.9'"),
    ("simulator version", ["header", "simulator_version"], "0.1.0", "differs from the running"),
    ("truncated log", ["actions"], lambda a: a[:-3], "the log ends at step"),
    ("steps", ["outcome", "steps"], lambda s: s + 1, "outcome.steps"),
    ("blocked", ["outcome", "blocked", 0], lambda b: flip_char(b, 0, "c"), "blocked at step 1"),
    ("extra key", ["header", "note"], "hi", "unexpected keys ['note']"),
    ("population", ["header", "population"], 11, "first difference in header.population"),
]


@pytest.mark.parametrize(("name", "path", "value", "message"), CASES, ids=[c[0] for c in CASES])
def test_tampered_records_are_rejected(suite, sample, name, path, value, message) -> None:  # noqa: ANN001
    """Each single change is rejected with a message that names what differs."""
    bad = tampered(sample, path, value)
    with pytest.raises(RecordAuthenticationError) as info:
        authenticate(bad, suite)
    assert message in str(info.value)


def test_non_canonical_text_is_rejected(suite, sample) -> None:  # noqa: ANN001
    """Reordered keys or extra whitespace in the text are not the record's canonical form."""
    text = json.dumps(sample, sort_keys=False, separators=(",", ":")).encode()
    reordered = json.dumps(dict(reversed(list(sample.items()))), separators=(",", ":")).encode()
    assert canonical_bytes(sample) != reordered
    with pytest.raises(RecordAuthenticationError, match="not in canonical JSON form"):
        authenticate_bytes(reordered, suite)
    with pytest.raises(RecordAuthenticationError, match="not in canonical JSON form"):
        authenticate_bytes(json.dumps(sample, indent=1).encode(), suite)
    assert authenticate_bytes(canonical_bytes(sample), suite) is not None
    del text


def _leaves(obj, path=()):  # noqa: ANN001
    if isinstance(obj, dict):
        for k in sorted(obj):
            yield from _leaves(obj[k], path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _leaves(v, path + (i,))
    else:
        yield path, obj


def _mutations(value: object, rng: SplitMix64) -> object:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1 + rng.below(3)
    if isinstance(value, str):
        if not value:
            return "x"
        i = rng.below(len(value))
        alphabet = ".NESW-wc0123456789abcdefp"
        new = alphabet[rng.below(len(alphabet))]
        if new == value[i]:
            new = "Z"
        return value[:i] + new + value[i + 1:]
    return value


def test_random_single_field_mutations_are_all_rejected(suite, sample) -> None:  # noqa: ANN001
    """Many random single-leaf changes of a record: every one is rejected."""
    leaves = list(_leaves(sample))
    rng = SplitMix64(2026)
    for _ in range(300):
        path, value = leaves[rng.below(len(leaves))]
        bad = copy.deepcopy(sample)
        target = bad
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = _mutations(value, rng)
        if bad == sample:
            continue
        with pytest.raises(RecordAuthenticationError):
            authenticate(bad, suite)
