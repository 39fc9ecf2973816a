"""Hypothesis strategies shared by the property tests: small random scenarios and policies."""

from __future__ import annotations

from hypothesis import strategies as st

from emberbench.sim.scenario import Scenario, scenario_from_dict


@st.composite
def small_scenarios(draw: st.DrawFn, max_side: int = 7, max_people: int = 8) -> Scenario:
    """A random valid scenario: walls, 1-3 exits, people, fire, any spread."""
    h = draw(st.integers(2, max_side))
    w = draw(st.integers(2, max_side))
    cells = [(r, c) for r in range(h) for c in range(w)]
    walls = set(draw(st.lists(st.sampled_from(cells), max_size=(h * w) // 3, unique=True)))
    free = [cell for cell in cells if cell not in walls]
    if len(free) < 2:
        walls = set()
        free = cells
    chosen = draw(st.permutations(free))
    n_exits = draw(st.integers(1, min(3, len(chosen) - 1)))
    exits, rest = chosen[:n_exits], chosen[n_exits:]
    n_people = draw(st.integers(1, min(max_people, len(rest))))
    people, rest = rest[:n_people], rest[n_people:]
    fire = rest[: draw(st.integers(0, min(3, len(rest))))]
    den = draw(st.integers(1, 8))
    num = draw(st.integers(0, den))
    data = {
        "scenario_format": "1.0",
        "id": "prop",
        "description": "random property-test scenario",
        "map": ["".join("#" if (r, c) in walls else "." for c in range(w)) for r in range(h)],
        "exits": [{"id": f"x{i}", "row": r, "col": c} for i, (r, c) in enumerate(exits)],
        "people": [{"id": f"p{i}", "row": r, "col": c} for i, (r, c) in enumerate(people)],
        "fire": [[r, c] for r, c in fire],
        "spread": {"numerator": num, "denominator": den},
        "max_steps": draw(st.integers(1, 25)),
        "seed": draw(st.integers(0, 2**64 - 1)),
        "allow_unreachable": True,
    }
    return scenario_from_dict(data)


class ScriptedRandomPolicy:
    """A policy drawing moves from a fixed list of choices (replays Hypothesis data)."""

    def __init__(self, choices: list[int]) -> None:
        self.choices = choices
        self.i = 0

    def __call__(self, obs):  # noqa: ANN001
        moves = ("stay", "N", "E", "S", "W")
        out = {}
        for p in obs.people:
            out[p.id] = moves[self.choices[self.i % len(self.choices)]] if self.choices else "stay"
            self.i += 1
        return out
