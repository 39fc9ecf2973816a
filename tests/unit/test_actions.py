"""Action validation: each malformed action has a clear error."""

from __future__ import annotations

import pytest

from emberbench.sim.actions import encode_action
from emberbench.errors import InvalidActionError

INSIDE = ["p1", "p2"]

INVALID = [
    (["N", "S"], "expected a mapping of person id to move, got list"),
    ({"p1": "N"}, "no move for person 'p2'"),
    ({"p1": "N", "p2": "S", "p9": "E"}, "unknown person 'p9' (not inside)"),
    ({"p1": "N", "p3": "S"}, "unknown person 'p3' (not inside)"),
    ({"p1": "north", "p2": "S"}, "unknown move 'north' for 'p1'"),
    ({"p1": 1, "p2": "S"}, "move for 'p1' must be a string, got int"),
    ({"p1": ["N"], "p2": "S"}, "move for 'p1' must be a string, got list"),
    ({1: "N", "p2": "S"}, "person ids must be strings, got 1"),
    (None, "expected a mapping of person id to move, got NoneType"),
]


@pytest.mark.parametrize(("action", "message"), INVALID, ids=[m[:30] for _, m in INVALID])
def test_invalid_actions(action: object, message: str) -> None:
    """Invalid actions raise InvalidActionError naming the step and the problem."""
    with pytest.raises(InvalidActionError) as info:
        encode_action(action, INSIDE, 4)
    assert message in str(info.value)
    assert "step 5" in str(info.value)


def test_valid_action_codes() -> None:
    """Moves map to codes in the order stay, N, E, S, W, following the people order."""
    assert encode_action({"p2": "W", "p1": "stay"}, INSIDE, 0) == [0, 4]


def test_any_mapping_is_accepted() -> None:
    """A read-only mapping is as good as a dict."""
    from types import MappingProxyType

    assert encode_action(MappingProxyType({"p1": "N", "p2": "stay"}), INSIDE, 0) == [1, 0]
