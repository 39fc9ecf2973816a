"""Small helpers for tests: building scenarios inline, watching processes end."""

from __future__ import annotations

import time

from emberbench.sim.scenario import Scenario, scenario_from_dict


def process_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_gone(pid: int, seconds: float = 10.0) -> bool:
    """Wait up to ``seconds`` for ``pid`` to end; whether it did."""
    deadline = time.monotonic() + seconds
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not process_alive(pid)


def make_scenario(
    rows: list[str],
    *,
    exits: dict[str, tuple[int, int]] | None = None,
    people: list[tuple[int, int]] | None = None,
    fire: list[tuple[int, int]] = (),
    spread: tuple[int, int] = (0, 1),
    max_steps: int = 20,
    allow_unreachable: bool = True,
    sid: str = "tiny",
) -> Scenario:
    """Build a scenario from a picture: 'E' exits (ids e0, e1... unless given), 'P' people, '*' fire."""
    auto_exits, auto_people, auto_fire, grid = [], [], [], []
    for r, row in enumerate(rows):
        line = ""
        for c, ch in enumerate(row):
            if ch == "E":
                auto_exits.append((r, c))
            elif ch == "P":
                auto_people.append((r, c))
            elif ch == "*":
                auto_fire.append((r, c))
            line += "#" if ch == "#" else "."
        grid.append(line)
    ex = exits if exits is not None else {f"e{i}": cell for i, cell in enumerate(auto_exits)}
    data = {
        "scenario_format": "1.0",
        "id": sid,
        "description": "test scenario",
        "map": grid,
        "exits": [{"id": k, "row": r, "col": c} for k, (r, c) in ex.items()],
        "people": [{"id": f"p{i}", "row": r, "col": c} for i, (r, c) in enumerate(people or auto_people)],
        "fire": [[r, c] for r, c in (list(fire) or auto_fire)],
        "spread": {"numerator": spread[0], "denominator": spread[1]},
        "max_steps": max_steps,
        "seed": 0,
        "allow_unreachable": allow_unreachable,
    }
    return scenario_from_dict(data)


class Script:
    """A policy that plays a fixed list of per-step actions (dicts), then stays."""

    def __init__(self, steps: list[dict[str, str]]) -> None:
        self.steps = steps
        self.t = 0

    def __call__(self, obs):  # noqa: ANN001
        planned = self.steps[self.t] if self.t < len(self.steps) else {}
        self.t += 1
        return {p.id: planned.get(p.id, "stay") for p in obs.people}
