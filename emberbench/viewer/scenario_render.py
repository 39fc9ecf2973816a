"""Drawing a scenario's starting state for a terminal: the map with people, exits and fire.

:func:`plain_rows` is the map as ``suite show`` has always printed it
(``P`` people, ``E`` exits, ``*`` fire over ``#`` and ``.``). :func:`render`
adds what helps reading a large generated map: column and row rulers, one
colour per kind of cell (when the terminal shows colour), and a legend with
counts. Both read only the scenario.
"""

from __future__ import annotations

from typing import Any

from ..sim.scenario import Scenario

STYLES = {"#": "grey50", ".": "grey30", "E": "bold green", "*": "red", "P": "bold blue"}
"""The colours of the episode viewer's terminal view (emberbench/viewer/terminal.py), for one look."""


def plain_rows(scenario: Scenario) -> list[str]:
    """The map with people (``P``), exits (``E``) and fire (``*``) drawn in; people win a shared cell."""
    rows = [list(r) for r in scenario.map]
    for e in scenario.exits:
        rows[e.row][e.col] = "E"
    for r, c in scenario.fire:
        rows[r][c] = "*"
    for p in scenario.people:
        rows[p.row][p.col] = "P"
    return ["".join(row) for row in rows]


def render(scenario: Scenario) -> list[Any]:
    """Rich ``Text`` lines: column rulers, rows with their numbers, and a legend."""
    from rich.text import Text

    width = scenario.width
    gutter = len(str(scenario.height - 1)) + 2
    lines = []
    if width > 10:
        lines.append(Text(" " * gutter + "".join(str(c // 10 % 10) if c % 10 == 0 else " " for c in range(width)),
                          style="dim"))
    lines.append(Text(" " * gutter + "".join(str(c % 10) for c in range(width)), style="dim"))
    for r, row in enumerate(plain_rows(scenario)):
        line = Text(f"{r:>{gutter - 2}}  ", style="dim")
        for ch in row:
            line.append(ch, style=STYLES[ch])
        lines.append(line)
    legend = Text()
    for ch, name, count in (("P", "people", scenario.population), ("E", "exit cells", len(scenario.exits)),
                            ("*", "burning", len(scenario.fire)), ("#", "wall", None), (".", "floor", None)):
        legend.append(ch, style=STYLES[ch])
        legend.append(f" {name}" + (f" ({count})" if count is not None else "") + "   ")
    lines.append(legend)
    return lines
