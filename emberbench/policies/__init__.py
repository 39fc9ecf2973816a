"""Policies: baselines, and resolution of a policy spec string into a factory.

The baselines are imported when first named here (PEP 562 ``__getattr__``):
they bring the simulator and numpy, and a module that needs a light part of
this package (every run-info holds a served model's usage accounting,
:mod:`.served.usage`) should not pay for them; ``emberbench runs ls`` reads
run-infos and never plays an episode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .baselines import BUILTIN_POLICIES, FireAwarePolicy, GreedyPolicy, RandomPolicy, StayPolicy

__all__ = [
    "BUILTIN_POLICIES",
    "FireAwarePolicy",
    "GreedyPolicy",
    "RandomPolicy",
    "StayPolicy",
]


def __getattr__(name: str) -> Any:
    """The baselines' names, from :mod:`.baselines` (imported on first use)."""
    if name in __all__:
        from . import baselines

        return getattr(baselines, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
