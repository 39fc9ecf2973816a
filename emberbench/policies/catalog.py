"""Which policies can be named: the built-ins and the installed ``emberbench.policies`` entry points.

:func:`policy_names` lists names without importing any plugin (for error
messages); :func:`available_policies` also loads each entry point to show the
first line of its docstring, and reports a plugin that fails to load instead
of raising. Both list built-ins first, then entry points sorted by name and
value, the order in which :func:`~emberbench.policies.spec.resolve_policy`
searches them.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points

from .baselines import BUILTIN_POLICIES

ENTRY_POINT_GROUP = "emberbench.policies"


@dataclass(frozen=True, slots=True)
class PolicyInfo:
    """One nameable policy.

    Attributes:
        name: what ``--policy`` takes.
        origin: ``built-in``, or ``entry point <module:attr>`` (with the
            distribution that provides it, when known).
        description: the first line of the factory's docstring, or why it
            cannot be loaded.
        usable: False when the name is hidden (by a built-in or an earlier
            entry point of the same name) or the plugin fails to load.
    """

    name: str
    origin: str
    description: str
    usable: bool = True


def _first_line(obj: object) -> str:
    doc = (getattr(obj, "__doc__", None) or "").strip()
    return doc.splitlines()[0].strip() if doc else "(no description)"


def installed_entry_points() -> list[EntryPoint]:
    """The ``emberbench.policies`` entry points, sorted by name then value."""
    return sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: (ep.name, ep.value))


def policy_names() -> tuple[list[str], list[str]]:
    """``(built-in names, entry-point names)``, each sorted, without importing any plugin."""
    plugins = sorted({ep.name for ep in installed_entry_points()} - set(BUILTIN_POLICIES))
    return sorted(BUILTIN_POLICIES), plugins


def _origin(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    where = f" from {dist.name} {dist.version}" if dist is not None and getattr(dist, "name", None) else ""
    return f"entry point {ep.value}{where}"


def available_policies() -> list[PolicyInfo]:
    """Every built-in and installed policy, with a one-line description (plugins are imported)."""
    out = [PolicyInfo(name, "built-in", _first_line(factory)) for name, factory in BUILTIN_POLICIES.items()]
    taken = set(BUILTIN_POLICIES)
    for ep in installed_entry_points():
        if ep.name in taken:
            out.append(PolicyInfo(ep.name, _origin(ep), f"hidden: the name {ep.name!r} is already taken",
                                  usable=False))
            continue
        taken.add(ep.name)
        try:
            factory = ep.load()
        except Exception as exc:  # noqa: BLE001 - a broken plugin is reported, not raised
            out.append(PolicyInfo(ep.name, _origin(ep), f"cannot be loaded: {type(exc).__name__}: {exc}",
                                  usable=False))
            continue
        if not callable(factory):
            out.append(PolicyInfo(ep.name, _origin(ep), "not callable", usable=False))
            continue
        out.append(PolicyInfo(ep.name, _origin(ep), _first_line(factory)))
    return out


__all__ = ["ENTRY_POINT_GROUP", "PolicyInfo", "available_policies", "installed_entry_points", "policy_names"]
