"""The episode groups every artifact summarizes: overall, per scenario, per family.

* ``overall`` (name ``overall``): every scheduled episode.
* ``scenario`` (name: the scenario id): the scheduled episodes of one
  scenario, in suite manifest order of scenarios.
* ``family`` (name: the family id): the scheduled episodes of every scenario
  in the family, in family declaration order. A scenario in several families
  is in each of them, so families may overlap.

Groups with no scheduled episode are left out. Within a group, episodes keep
manifest order. Overall statistics are computed from the overall group's own
episodes, never from other groups' results.
"""

from __future__ import annotations

from dataclasses import dataclass

from .inputs import EpisodeKey, StatisticsContext

GROUP_KINDS = ("overall", "scenario", "family")


@dataclass(frozen=True, slots=True)
class GroupSpec:
    """One group: its kind, name and scheduled episodes.

    Attributes:
        kind: ``overall``, ``scenario`` or ``family``.
        name: ``overall``, the scenario id or the family id.
        keys: the group's scheduled episode keys, in manifest order.
    """

    kind: str
    name: str
    keys: tuple[EpisodeKey, ...]

    def __post_init__(self) -> None:
        if self.kind not in GROUP_KINDS:
            raise ValueError(f"unknown group kind {self.kind!r}")

    @property
    def indices(self) -> tuple[int, ...]:
        """The group's scheduled episode indices, in manifest order."""
        return tuple(key[0] for key in self.keys)


@dataclass(frozen=True, slots=True)
class GroupPlan:
    """Every group of one context, in output order.

    Attributes:
        overall: the overall group.
        scenarios: one group per scheduled scenario, suite manifest order.
        families: one group per family with a scheduled scenario, declaration order.
    """

    overall: GroupSpec
    scenarios: tuple[GroupSpec, ...]
    families: tuple[GroupSpec, ...]

    def all(self) -> tuple[GroupSpec, ...]:
        """Every group: overall, then scenarios, then families."""
        return (self.overall, *self.scenarios, *self.families)


def plan_groups(ctx: StatisticsContext) -> GroupPlan:
    """Return the groups of ``ctx`` (see the module docstring for the rules)."""
    overall = GroupSpec("overall", "overall", ctx.scheduled)
    # Position of every scheduled key, bucketed by scenario (lookups only).
    buckets: dict[str, list[int]] = {}
    for position, key in enumerate(ctx.scheduled):
        buckets.setdefault(key[1], []).append(position)
    scenarios = []
    for scenario_id in ctx.scenario_order:
        positions = buckets.get(scenario_id, [])
        if positions:
            keys = tuple(ctx.scheduled[p] for p in positions)
            scenarios.append(GroupSpec("scenario", scenario_id, keys))
    families = []
    for family_id, members in ctx.families:
        positions = sorted({p for sid in members for p in buckets.get(sid, [])})
        if positions:
            keys = tuple(ctx.scheduled[p] for p in positions)
            families.append(GroupSpec("family", family_id, keys))
    return GroupPlan(overall, tuple(scenarios), tuple(families))
