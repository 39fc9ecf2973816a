"""The viewer page's data: a compact, versioned JSON document built from frames.

The page embeds one JSON document (``viewer_data_version`` 1.1) and draws
everything from it; nothing is fetched. Its parts:

* ``scenarios``: each scenario once (map rows, exits, people), shared by
  every embedded episode of that scenario;
* ``episodes``: the embedded episodes, each with its move codes (one string
  of ``steps * population`` characters, step-major), ignition steps, burning
  counts, fates and the twelve metrics (stored value and exact fraction);
* ``list``: for a result, one compact row per episode of the result, so the
  picker lists every episode even when only some are embedded;
* ``source``: where the data came from (file, model, digests);
* ``regenerate``, ``regenerate_page``: for a result, the command that makes
  a page for an episode that is not embedded, and where that page lands
  relative to this one (1.1; null when unknown).

The text is placed inside a ``<script type="application/json">`` element, so
every ``<``, ``>`` and ``&`` is written as a JSON ``\\u`` escape: no
user-controlled string (a model id, a scenario id) can close the element.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..records.metric_defs import METRICS
from ..records.metrics import metric_fractions
from ..sim.scenario import Scenario
from ..io.versions import VIEWER_DATA_VERSION
from .frames import EpisodeFrames



class ScenarioTable:
    """Scenarios of a page, each stored once, numbered in order of first use."""

    def __init__(self) -> None:
        self._slots: dict[str, int] = {}
        self.rows: list[dict[str, Any]] = []

    def slot(self, scenario: Scenario) -> int:
        """The number of ``scenario`` in the table (added on first use)."""
        key = scenario.content_hash
        if key not in self._slots:
            self._slots[key] = len(self.rows)
            self.rows.append(scenario_payload(scenario))
        return self._slots[key]


def scenario_payload(scenario: Scenario) -> dict[str, Any]:
    """What the page needs of a scenario: size, map rows, exits and people with their start cells."""
    return {
        "id": scenario.id,
        "description": scenario.description,
        "height": scenario.height,
        "width": scenario.width,
        "max_steps": scenario.max_steps,
        "map": list(scenario.map),
        "exits": [[e.id, e.row, e.col] for e in scenario.exits],
        "people": [[p.id, p.row, p.col] for p in scenario.people],
    }


def metric_rows(frames: EpisodeFrames) -> list[list[Any]]:
    """``[name, stored value, exact fraction text]`` for each of the twelve metrics, in table order."""
    stored = frames.metrics.to_dict()
    exact = metric_fractions(frames.metrics)
    rows = []
    for m in METRICS:
        value = exact[m.name]
        rows.append([m.name, stored[m.group][m.name], None if value is None else str(value)])
    return rows


def episode_payload(frames: EpisodeFrames, scenario_slot: int) -> dict[str, Any]:
    """The embedded form of one episode."""
    return {
        "index": frames.index,
        "scenario": scenario_slot,
        "seed": str(frames.seed),
        "steps": frames.steps,
        "termination": frames.termination,
        "moves": "".join(frames.moves),
        "ignition": list(frames.ignition),
        "burning": list(frames.burning),
        "fate_kind": "".join(f.kind[0] for f in frames.fates),
        "fate_step": [f.step for f in frames.fates],
        "fate_exit": [f.exit_index for f in frames.fates],
        "counts": frames.metrics.counts_dict(),
        "metrics": metric_rows(frames),
    }


def metric_definitions() -> list[dict[str, str]]:
    """Name, direction, kind and definition of each metric (shown beside the values)."""
    return [{"name": m.name, "direction": m.direction, "kind": m.kind, "definition": m.definition}
            for m in METRICS]


def page_document(*, title: str, source: dict[str, Any], scenarios: ScenarioTable,
                  episodes: Sequence[dict[str, Any]], listing: dict[str, list[Any]] | None,
                  start: int, regenerate: str | None, regenerate_page: str | None = None) -> dict[str, Any]:
    """The whole JSON document of a viewer page.

    ``regenerate`` is the command that makes a page for an episode this page
    does not embed (``{index}`` stands for its manifest index), and
    ``regenerate_page`` the URL of that page relative to this one, when known.
    """
    return {
        "viewer_data_version": VIEWER_DATA_VERSION,
        "title": title,
        "source": source,
        "metric_definitions": metric_definitions(),
        "scenarios": scenarios.rows,
        "episodes": list(episodes),
        "list": listing,
        "start": start,
        "regenerate": regenerate,
        "regenerate_page": regenerate_page,
    }


def script_json(document: Any) -> str:
    """JSON text that is safe inside a ``<script>`` element (no ``<``, ``>`` or ``&`` characters)."""
    text = json.dumps(document, separators=(",", ":"), ensure_ascii=False, allow_nan=False, sort_keys=False)
    return (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
