"""Fresh policies: a factory may hand out one plain stateless function every time, and nothing else twice
(issue 22, defect 9)."""

from __future__ import annotations

import functools

import pytest

from emberbench.errors import PolicyError
from emberbench.results.manifest import write_manifest
from emberbench.policies import GreedyPolicy
from emberbench.policies.spec import FreshPolicies, is_stateless_function
from emberbench.evaluation.runner import run_evaluation
from tests.run_support import invoke, small_manifest


def stay(obs):  # noqa: ANN001, ANN201
    """A stateless policy: everybody stays (what the built-in `stay` does)."""
    return {p.id: "stay" for p in obs.people}


def make():  # noqa: ANN201
    """A factory returning the one module-level function (`module:make` at the command line)."""
    return stay


def with_default(obs, moves=("stay",)):  # noqa: ANN001, ANN201
    return {p.id: moves[0] for p in obs.people}


def with_memory(obs, seen=[]):  # noqa: ANN001, ANN201, B006 - the state a default can carry
    seen.append(obs)
    return stay(obs)


def _closure():  # noqa: ANN202
    memory: list = []

    def policy(obs):  # noqa: ANN001, ANN202
        memory.append(obs)
        return stay(obs)

    return policy


def _with_attribute():  # noqa: ANN202
    def policy(obs):  # noqa: ANN001, ANN202
        policy.calls += 1
        return stay(obs)

    policy.calls = 0
    return policy


@functools.wraps(stay)
def _wrapped(obs):  # noqa: ANN001, ANN202
    return stay(obs)


class _Holder:
    def act(self, obs):  # noqa: ANN001, ANN201
        return stay(obs)


STATELESS = [stay, lambda obs: stay(obs), with_default, len]
NOT_STATELESS = [with_memory, _closure(), _with_attribute(), _wrapped, _Holder().act, functools.partial(with_default),
                 GreedyPolicy(), GreedyPolicy, [].append]


@pytest.mark.parametrize("policy", STATELESS, ids=lambda p: getattr(p, "__name__", repr(p)))
def test_plain_functions_without_state_are_stateless(policy) -> None:  # noqa: ANN001
    """A def or lambda with no closure cells, no attributes and immutable defaults, or a module's builtin."""
    assert is_stateless_function(policy)
    fresh = FreshPolicies(lambda: policy, "p")
    assert fresh() is policy and fresh() is policy and fresh.calls == 2


@pytest.mark.parametrize("policy", NOT_STATELESS, ids=lambda p: type(p).__name__)
def test_anything_that_can_hold_state_is_refused_the_second_time(policy) -> None:  # noqa: ANN001
    """Closures, attributes, mutable defaults, decorated or bound methods, partials, instances, classes and builtin
    methods of an object can all carry an episode into the next: handed out twice, they are refused."""
    assert not is_stateless_function(policy)
    fresh = FreshPolicies(lambda: policy, "p")
    assert fresh() is policy
    with pytest.raises(PolicyError, match=r"already returned in this run \(call 2\)"):
        fresh()


def test_a_factory_returning_one_stateless_function_runs(tmp_path, suite) -> None:  # noqa: ANN001
    """Issue 22 defect 9: run_evaluation(..., lambda: policy, ...) plays every episode with the one function, and
    writes exactly what the built-in class does."""
    manifest = small_manifest(suite)
    out = tmp_path / "f.json"
    summary = run_evaluation(manifest, suite, lambda: stay, "m", out)
    assert summary.completed == len(manifest.episodes) == 4
    run_evaluation(manifest, suite, "stay", "m", tmp_path / "c.json")
    assert out.read_bytes() == (tmp_path / "c.json").read_bytes()


def test_module_make_at_the_command_line(tmp_path, suite) -> None:  # noqa: ANN001
    """Issue 22 defect 9, as reported: `--policy module:make` whose make returns one function runs to the end."""
    write_manifest(small_manifest(suite), tmp_path / "m.json")
    result = invoke("run", "--manifest", tmp_path / "m.json", "--policy", "tests.unit.test_policy_factories:make",
                    "--model-id", "m", "--out", tmp_path / "f.json", "--no-store", "--executor", "local")
    assert result.exit_code == 0, result.output
    assert "4/4 episodes (4 run now" in result.output


def test_a_shared_stateful_policy_is_still_refused_in_a_run(tmp_path, suite) -> None:  # noqa: ANN001
    """The check stays for what can hold state: a closure handed out twice stops the run at the second episode."""
    shared = _closure()
    with pytest.raises(PolicyError, match="already returned"):
        run_evaluation(small_manifest(suite), suite, lambda: shared, "m", tmp_path / "r.json")
