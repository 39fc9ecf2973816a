"""The prompt a served model gets for one step: fixed instructions, then the observation's canonical JSON.

The prompt is the whole of what the model learns, so it is built from the
observation alone (docs/v1-fairness-spec.md): the system message is a
constant of this module, and the user message is exactly
:meth:`~emberbench.sim.observation.Observation.to_json`. Nothing of the seed,
the scenario file, the manifest, the simulator or the run reaches it. Each
step is one self-contained request (no conversation history), so the same
observation always makes the same request, which is what lets the response
cache (:mod:`.cache`) answer it on a rerun.

:data:`PROMPT_VERSION` names this text. Any change to the instructions, to
how the observation is rendered or to the request parameters is a new
version; the version is part of every request's cache key, so answers to an
older prompt are never reused for a newer one.
"""

from __future__ import annotations

from typing import Any

from ...sim.observation import Observation

PROMPT_VERSION = "1"
"""The version of :data:`INSTRUCTIONS`, the rendering and :data:`PARAMETERS` (docs/served-models.md)."""

INSTRUCTIONS = f"""\
EMBERBench evacuation policy, prompt version {PROMPT_VERSION}.

You direct the people inside a burning building on a grid. Every step you \
receive the current observation as one JSON object and answer with one move \
for every person still inside.

The observation's fields:
- "grid": the map, one string per row; "#" wall, "." floor, "E" exit, "*" \
burning cell (floor or exit). People are not drawn on the grid.
- "height", "width": the map size. Row 0 is the top row, column 0 the left \
column.
- "exits": every exit as {{"id", "row", "col"}}, burning or not.
- "people": every person still inside as {{"id", "row", "col"}}.
- "step": steps completed so far; "max_steps": the episode's step limit.

Moves: "N" (row - 1), "E" (col + 1), "S" (row + 1), "W" (col - 1), "stay". \
All moves happen at once; walls, the map edge and other people block \
moves. Then the fire spreads: a person on a burning cell dies, and a person \
on an exit that is not burning is evacuated.

Reply with exactly one JSON object and nothing else: one key for every id in \
"people" and no other key, each mapped to one of "N", "E", "S", "W", "stay". \
Example: {{"p001": "E", "p002": "stay"}}"""
"""The system message: what the task is and the reply format. Constant for a prompt version."""

PARAMETERS: dict[str, Any] = {"temperature": 0, "seed": 314159, "max_tokens": 4096}
"""Sampling parameters of every request: greedy decoding, and a fixed ``seed`` for servers that sample
with one (a constant of the prompt version, never the episode's seed)."""


def render_messages(observation: Observation) -> list[dict[str, str]]:
    """The chat messages for one step: the fixed instructions, then the observation's canonical JSON.

    Args:
        observation: what the policy received; nothing else is read.
    """
    return [{"role": "system", "content": INSTRUCTIONS},
            {"role": "user", "content": observation.to_json()}]


__all__ = ["INSTRUCTIONS", "PARAMETERS", "PROMPT_VERSION", "render_messages"]
