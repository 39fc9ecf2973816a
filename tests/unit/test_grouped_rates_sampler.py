"""sha256-counter-rejection-v1 and the monte-carlo mode built on it."""

from __future__ import annotations

import hashlib
import itertools
from fractions import Fraction

import pytest

from emberbench.errors import GroupedRatesError
from emberbench.grouped_rates.contract import SAMPLER_DOMAIN
from emberbench.grouped_rates.sampler import indices, task_draws, words
from tests.unit.test_grouped_rates_support import EXAMPLE_COUNTS, make_document, report_of, stat


def test_first_words_follow_the_written_definition() -> None:
    """Word j of block c is bytes 4j..4j+3 (big-endian) of SHA-256(domain || seed || c)."""
    seed = 123456789
    expected = []
    for counter in range(2):
        block = hashlib.sha256(SAMPLER_DOMAIN + seed.to_bytes(8, "big") + counter.to_bytes(8, "big")).digest()
        expected += [int.from_bytes(block[j : j + 4], "big") for j in range(0, 32, 4)]
    assert list(itertools.islice(words(seed), 16)) == expected


def test_golden_draws_are_the_same_on_every_platform() -> None:
    """Fixed seeds give these exact draws; any platform or refactoring difference shows here."""
    assert list(task_draws(0, 4, 3)) == [(2, 3, 1, 3), (1, 0, 1, 1), (2, 0, 1, 0)]
    assert list(task_draws(20240601, 7, 2)) == [(5, 5, 2, 2, 3, 0, 5), (1, 0, 2, 1, 1, 3, 1)]
    assert list(itertools.islice(words(0), 3)) == [817524906, 1536797355, 862599605]


def test_words_at_or_above_the_limit_are_rejected_not_folded() -> None:
    """With n = 3 * 2**30 the limit is n itself: larger words are skipped, smaller ones kept as w mod n."""
    n = 3 * 2**30
    raw = list(itertools.islice(words(5), 200))
    expected = [w % n for w in raw if w < n]
    assert 0 < len(expected) < len(raw), "the seed must exercise at least one rejection"
    assert list(itertools.islice(indices(5, n), len(expected))) == expected


def test_same_seed_same_draws_and_different_seed_different_draws() -> None:
    """Re-running a seed repeats its draws exactly; another seed does not."""
    first = list(task_draws(42, 6, 50))
    assert first == list(task_draws(42, 6, 50))
    assert first != list(task_draws(43, 6, 50))
    assert all(len(draw) == 6 and all(0 <= i < 6 for i in draw) for draw in first)


@pytest.mark.parametrize("n", [0, 2**32 + 1])
def test_sampler_refuses_an_impossible_index_range(n: int) -> None:
    """Index ranges outside [1, 2**32] are refused."""
    with pytest.raises(GroupedRatesError, match="1 <= n <= 2\\*\\*32"):
        next(indices(0, n))


@pytest.mark.parametrize("seed", [-1, 2**64, True, "1"])
def test_sampler_refuses_a_seed_outside_its_range(seed: object) -> None:
    """Seeds must be integers in [0, 2**64 - 1]."""
    with pytest.raises(GroupedRatesError, match="seed"):
        next(words(seed))  # type: ignore[arg-type]


def test_monte_carlo_report_is_reproducible_and_seed_dependent() -> None:
    """Two reports with one seed are identical; a different seed changes the retained draws."""
    spec = {"mode": "monte-carlo", "seed": 9, "replicates": 200}
    first = report_of(make_document(EXAMPLE_COUNTS, spec))
    assert first == report_of(make_document(EXAMPLE_COUNTS, dict(spec)))
    other = report_of(make_document(EXAMPLE_COUNTS, {**spec, "seed": 10}))
    assert first["draws"]["rows"] != other["draws"]["rows"]
    assert first["resampling"]["sampler"] == "sha256-counter-rejection-v1"
    assert [row[0] for row in first["draws"]["rows"]] == [list(d) for d in task_draws(9, 4, 200)]
    assert any("Monte Carlo error" in w for w in first["warnings"])


def _cdf(rows: list, column: int) -> dict[Fraction, Fraction]:
    total = sum(row[1] for row in rows)
    mass: dict[Fraction, int] = {}
    for row in rows:
        value = Fraction(row[column])
        mass[value] = mass.get(value, 0) + row[1]
    out, running = {}, 0
    for value in sorted(mass):
        running += mass[value]
        out[value] = Fraction(running, total)
    return out


def test_monte_carlo_with_many_replicates_approaches_exact_enumeration() -> None:
    """With 3 tasks and 30,000 draws every CDF is within 0.015 of the exact 27-draw CDF."""
    counts = {k: EXAMPLE_COUNTS[k] for k in ("T01", "T02", "T03")}
    exact = report_of(make_document(counts, {"mode": "exact"}))
    mc = report_of(make_document(counts, {"mode": "monte-carlo", "seed": 2024, "replicates": 30_000}))
    for column in range(2, 8):
        want, got = _cdf(exact["draws"]["rows"], column), _cdf(mc["draws"]["rows"], column)
        assert set(got) <= set(want)
        previous = Fraction(0)
        for value, target in want.items():
            previous = got.get(value, previous)
            assert abs(previous - target) < Fraction(15, 1000), (column, value)
    contrast_exact = stat(exact, "episode_weighted", "contrast", None)
    contrast_mc = stat(mc, "episode_weighted", "contrast", None)
    assert contrast_mc["lower"] == contrast_exact["lower"]
    assert contrast_mc["upper"] == contrast_exact["upper"]
