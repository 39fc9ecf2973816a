"""Policies: baselines, and resolution of a policy spec string into a factory."""

from __future__ import annotations

from .baselines import BUILTIN_POLICIES, FireAwarePolicy, GreedyPolicy, RandomPolicy, StayPolicy

__all__ = [
    "BUILTIN_POLICIES",
    "FireAwarePolicy",
    "GreedyPolicy",
    "RandomPolicy",
    "StayPolicy",
]
