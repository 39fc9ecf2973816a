"""Actions: the format a policy answers with, and its validation.

An action is a mapping from the id of **every** person inside to one move:
``"N"`` (row - 1), ``"E"`` (col + 1), ``"S"`` (row + 1), ``"W"`` (col - 1)
or ``"stay"``. People who are no longer inside must not appear. Anything else
raises :class:`InvalidActionError` saying what was wrong.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import InvalidActionError

MOVES = ("stay", "N", "E", "S", "W")
MOVE_CODE: dict[str, int] = {m: i for i, m in enumerate(MOVES)}
_ONLY_STR = frozenset({str})  # moves must be exactly str (a subclass could compare equal to a move)


def encode_action(action: Any, inside_ids: Sequence[str], step: int) -> list[int]:
    """Validate ``action`` for the people inside and return their move codes.

    Args:
        action: what the policy returned.
        inside_ids: ids of the people inside, in scenario order.
        step: the step the action is for (for messages).

    Returns:
        One move code per person in ``inside_ids`` order.

    Raises:
        InvalidActionError: the action is not a mapping, misses a person,
            names an unknown or departed person, or holds an unknown move.
    """
    if isinstance(action, Mapping) and len(action) == len(inside_ids):
        try:
            moves = list(map(action.__getitem__, inside_ids))
            codes = list(map(MOVE_CODE.__getitem__, moves))
        except (KeyError, TypeError):
            pass  # diagnose below
        else:
            if _ONLY_STR.issuperset(map(type, moves)):
                return codes
    _diagnose(action, inside_ids, step)
    raise AssertionError("unreachable: _diagnose always raises")  # pragma: no cover


def _diagnose(action: Any, inside_ids: Sequence[str], step: int) -> None:
    where = f"action for step {step + 1}"
    if not isinstance(action, Mapping):
        raise InvalidActionError(f"{where}: expected a mapping of person id to move, got {type(action).__name__}")
    inside = set(inside_ids)
    for key in action:
        if not isinstance(key, str):
            raise InvalidActionError(f"{where}: person ids must be strings, got {key!r}")
    for key in sorted(action):
        if key not in inside:
            raise InvalidActionError(f"{where}: unknown person {key!r} (not inside)")
    for pid in inside_ids:
        if pid not in action:
            raise InvalidActionError(f"{where}: no move for person {pid!r}")
        move = action[pid]
        if not isinstance(move, str):
            raise InvalidActionError(f"{where}: move for {pid!r} must be a string, got {type(move).__name__}")
        if move not in MOVE_CODE:
            raise InvalidActionError(f"{where}: unknown move {move!r} for {pid!r} (use N, E, S, W or stay)")
    raise InvalidActionError(f"{where}: invalid action")  # pragma: no cover
