"""Input checks: every malformed input raises StatisticsInputError with a clear message."""

from __future__ import annotations

from fractions import Fraction

import pytest

from emberbench.errors import EvaluationError, StatisticsInputError
from emberbench.statistics import EpisodeValues, StatisticsContext, aggregate_from_values, paired_from_values
from stats_factory import DIGEST_A, DIGEST_B, all_episodes, make_ctx, make_episode, metric_values


def _episode_with(**changes):
    ctx = make_ctx()
    fields = dict(index=0, scenario_id="s1", termination="all_resolved", evacuated=1, casualties=0,
                  stranded=0, values=metric_values(0))
    fields.update(changes)
    return lambda: EpisodeValues(**fields)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (_episode_with(values={**metric_values(0), "score": Fraction(1)}), "unknown metric names"),
        (_episode_with(values={k: v for k, v in metric_values(0).items() if k != "exit_balance"}),
         "missing metric names"),
        (_episode_with(values={**metric_values(0), "casualty_rate": 0.5}), "Fraction or None"),
        (_episode_with(values={**metric_values(0), "casualty_rate": Fraction(10**400)}), "too large"),
        (_episode_with(termination="timeout"), "termination"),
        (_episode_with(evacuated=-1), "evacuated"),
        (_episode_with(casualties=True), "casualties"),
        (_episode_with(index=-3), "index"),
        (_episode_with(scenario_id=""), "scenario_id"),
    ],
)
def test_malformed_episode_values_are_refused(build, message):
    """EpisodeValues refuses unknown/missing metrics, non-Fraction values and bad counts."""
    with pytest.raises(StatisticsInputError, match=message):
        build()


def test_statistics_input_error_is_an_evaluation_error():
    """The error is both an evaluation error and a ValueError."""
    assert issubclass(StatisticsInputError, EvaluationError)
    assert issubclass(StatisticsInputError, ValueError)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda eps, ctx: eps + [make_episode(ctx, 0)], "appears twice"),
        (lambda eps, ctx: eps + [make_episode(make_ctx((("s1", 40), ("s2", 3))), 30)], "not scheduled"),
        (lambda eps, ctx: [make_episode(ctx, 0, scenario_id="s2")] + eps[1:], "scenario"),
        (lambda eps, ctx: eps + ["not an episode"], "expected EpisodeValues"),
    ],
)
def test_episode_lists_are_checked_against_the_schedule(mutate, message):
    """Duplicate, unscheduled and mislabelled episodes are refused by both functions."""
    ctx = make_ctx()
    episodes = mutate(all_episodes(ctx), ctx)
    with pytest.raises(StatisticsInputError, match=message):
        aggregate_from_values(ctx, "m", DIGEST_A, episodes, resamples=100)
    with pytest.raises(StatisticsInputError, match=message):
        paired_from_values(ctx, "a", "b", DIGEST_A, DIGEST_B, all_episodes(ctx), episodes, resamples=100)


@pytest.mark.parametrize("resamples", [99, 1_000_001, 2000.0, True, "2000", None])
def test_resamples_must_be_an_int_in_range(resamples):
    """resamples outside [100, 1_000_000] or not an int is refused."""
    ctx = make_ctx()
    with pytest.raises(StatisticsInputError, match="resamples"):
        aggregate_from_values(ctx, "m", DIGEST_A, all_episodes(ctx), resamples=resamples)


@pytest.mark.parametrize(
    ("model_id", "digest", "message"),
    [("", DIGEST_A, "model_id"), ("m", "A" * 64, "result_digest"), ("m", "abc", "result_digest")],
)
def test_labels_and_digests_are_checked(model_id, digest, message):
    """The model id must be non-empty and the result digest a lowercase hex SHA-256."""
    ctx = make_ctx()
    with pytest.raises(StatisticsInputError, match=message):
        aggregate_from_values(ctx, model_id, digest, all_episodes(ctx), resamples=100)


def _ctx_fields(**changes):
    base = dict(
        evaluation_manifest_hash="e" * 64, suite_id="s", suite_version="1", suite_hash="h",
        simulator_version="0.2.0", observation_version="1.0", metrics_version="1.0",
        scheduled=((0, "s1", "h1", 1), (1, "s1", "h1", 2)), scenario_order=("s1",), families=(),
    )
    base.update(changes)
    return base


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"scheduled": ((0, "s1", "h1", 1), (0, "s1", "h1", 2))}, "appears twice"),
        ({"scheduled": ((0, "s9", "h1", 1),)}, "not in scenario_order"),
        ({"scenario_order": ("s1", "s1")}, "twice"),
        ({"families": (("f", ("s1",)), ("f", ()))}, "declared twice"),
        ({"families": (("f", ("nope",)),)}, "unknown scenarios"),
        ({"scheduled": ((0, "s1", "h1"),)}, "not \\(index"),
        ({"suite_id": ""}, "suite_id"),
    ],
)
def test_inconsistent_context_is_refused(changes, message):
    """A context with duplicate indices, unknown scenarios or families is refused."""
    with pytest.raises(StatisticsInputError, match=message):
        StatisticsContext(**_ctx_fields(**changes))
