"""Every cap of the contract refuses input over it with a message naming the cap."""

from __future__ import annotations

import pytest

from emberbench.errors import GroupedRatesError
from emberbench.grouped_rates import check_file, contract_document, evaluate, parse_input, reader, render
from emberbench.grouped_rates.contract import (
    MAX_DRAW_CELLS,
    MAX_DRAWS,
    MAX_EPISODES,
    MAX_ID_CHARS,
    MAX_INPUT_BYTES,
    MAX_SEED,
    MAX_TASKS,
    MAX_TEXT_CHARS,
)
from tests.unit.test_grouped_rates_support import EXAMPLE, EXAMPLE_COUNTS, make_document


def _tasks(n: int) -> dict:
    return {f"T{i}": ((1, 1, 0), (0, 2, 0)) for i in range(n)}


def test_contract_states_every_cap_with_its_value() -> None:
    """contract.json lists each cap the reader enforces, with the enforced value."""
    caps = contract_document()["caps"]
    assert caps["max_input_bytes"] == MAX_INPUT_BYTES
    assert caps["max_draws"] == MAX_DRAWS
    assert caps["max_draw_cells"] == MAX_DRAW_CELLS
    assert caps["max_tasks"] == MAX_TASKS and caps["max_episodes"] == MAX_EPISODES


def test_input_bytes_over_the_cap_are_refused_before_parsing(tmp_path) -> None:
    """A file one byte over max_input_bytes is refused by name, from a file and from bytes."""
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (MAX_INPUT_BYTES + 1))
    with pytest.raises(GroupedRatesError, match="max_input_bytes = 4194304"):
        check_file(big)
    with pytest.raises(GroupedRatesError, match="max_input_bytes"):
        evaluate(b" " * (MAX_INPUT_BYTES + 1))


def test_expected_report_over_its_cap_is_refused(tmp_path, monkeypatch) -> None:
    """An --expect file larger than max_report_bytes is refused by name."""
    monkeypatch.setattr(reader, "MAX_REPORT_BYTES", 10)
    with pytest.raises(GroupedRatesError, match="max_report_bytes = 10"):
        check_file(EXAMPLE / "input.json", expect=EXAMPLE / "report.json")


def test_tasks_over_the_population_cap_are_refused() -> None:
    """Declaring max_tasks + 1 tasks names the cap max_tasks."""
    doc = make_document(_tasks(1))
    doc["population"]["tasks"] = [f"T{i}" for i in range(MAX_TASKS + 1)]
    with pytest.raises(GroupedRatesError, match=f"exceed the cap max_tasks = {MAX_TASKS}"):
        parse_input(doc)


def test_episodes_over_the_population_cap_are_refused() -> None:
    """max_episodes + 1 episodes name the cap max_episodes."""
    doc = make_document(_tasks(1))
    episode = doc["episodes"][0]
    doc["episodes"] = [dict(episode, id=f"e{i}") for i in range(MAX_EPISODES + 1)]
    with pytest.raises(GroupedRatesError, match=f"exceed the cap max_episodes = {MAX_EPISODES}"):
        parse_input(doc)


@pytest.mark.parametrize(
    ("n", "resampling", "hint"),
    [
        (7, {"mode": "exact"}, "use exact-multiset or monte-carlo"),
        (11, {"mode": "exact-multiset"}, "use monte-carlo"),
        (2, {"mode": "monte-carlo", "seed": 0, "replicates": MAX_DRAWS + 1}, "ask for fewer replicates"),
    ],
    ids=["exact-7", "multiset-11", "monte-carlo"],
)
def test_draws_over_the_cap_are_refused_with_a_way_forward(n: int, resampling: dict, hint: str) -> None:
    """Each mode refuses more than max_draws rows, naming the cap and what to use instead."""
    with pytest.raises(GroupedRatesError, match=f"over the cap max_draws = {MAX_DRAWS}; {hint}"):
        evaluate(render(make_document(_tasks(n), resampling)))


def test_the_largest_modes_within_the_draw_cap_are_accepted_by_the_planner() -> None:
    """6 tasks fit exact (46,656 rows) and 10 tasks fit exact-multiset (92,378 rows)."""
    from emberbench.grouped_rates.inputs import Resampling
    from emberbench.grouped_rates.resampling import plan

    assert plan(Resampling("exact"), 6) == 46_656
    assert plan(Resampling("exact-multiset"), 10) == 92_378


def test_draw_cells_over_the_cap_are_refused() -> None:
    """Monte Carlo rows times tasks over max_draw_cells names that cap."""
    n = 100
    replicates = MAX_DRAW_CELLS // n + 1
    spec = {"mode": "monte-carlo", "seed": 0, "replicates": replicates}
    with pytest.raises(GroupedRatesError, match=f"over the cap max_draw_cells = {MAX_DRAW_CELLS}"):
        evaluate(render(make_document(_tasks(n), spec)))


def test_seed_over_the_cap_is_refused() -> None:
    """A seed of 2**64 names max_seed."""
    doc = make_document(EXAMPLE_COUNTS, {"mode": "monte-carlo", "seed": MAX_SEED + 1, "replicates": 3})
    with pytest.raises(GroupedRatesError, match="cap max_seed"):
        parse_input(doc)


def test_ids_and_texts_over_their_caps_are_refused() -> None:
    """An id over max_id_chars and a text over max_text_chars are refused by name."""
    doc = make_document(EXAMPLE_COUNTS)
    doc["episodes"][0]["id"] = "x" * (MAX_ID_CHARS + 1)
    with pytest.raises(GroupedRatesError, match="max_id_chars"):
        parse_input(doc)
    doc = make_document(EXAMPLE_COUNTS)
    doc["dependence"] = "y" * (MAX_TEXT_CHARS + 1)
    with pytest.raises(GroupedRatesError, match="max_text_chars"):
        parse_input(doc)
