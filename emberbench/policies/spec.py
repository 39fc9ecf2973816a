"""Resolving a policy spec string into a policy factory.

A spec is one of:

* a built-in name: ``stay``, ``greedy``, ``fire-aware``, ``random``;
* an import path ``package.module:factory`` (the factory is called with no
  arguments once per episode);
* a name registered by an installed package in the entry-point group
  ``emberbench.policies``;
* ``cmd:<command line>``: an external agent process, one per episode, speaking
  the line protocol of docs/model-interface.md.

A factory returns a fresh policy each call. Policies that hold resources
(external agents) have a ``close()`` method; :func:`closing` calls it.
"""

from __future__ import annotations

import contextlib
import importlib
import re
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from typing import Any

from ..errors import PolicyError
from .baselines import BUILTIN_POLICIES

ENTRY_POINT_GROUP = "emberbench.policies"
DEFAULT_AGENT_TIMEOUT = 30.0
_IMPORT_RE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")

PolicyFactory = Callable[[], Callable[[Any], Any]]


def resolve_policy(spec: str, *, agent_timeout: float = DEFAULT_AGENT_TIMEOUT,
                   agent_log: str | None = None) -> PolicyFactory:
    """Return the policy factory named by ``spec``.

    Args:
        spec: the policy spec (see module docstring).
        agent_timeout: seconds an external agent may take to answer one
            observation before the run stops.
        agent_log: a folder where an external agent's stderr is saved, one
            file per episode (ignored by other policies).

    Raises:
        PolicyError: the spec names nothing that can be loaded.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise PolicyError("policy spec must be a non-empty string")
    if spec in BUILTIN_POLICIES:
        return BUILTIN_POLICIES[spec]
    if spec.startswith("cmd:"):
        from .external import ExternalAgentFactory

        return ExternalAgentFactory(spec[4:], timeout=agent_timeout, log_dir=agent_log)
    if _IMPORT_RE.match(spec):
        module_name, attr = spec.split(":", 1)
        try:
            obj: Any = importlib.import_module(module_name)
        except ImportError as exc:
            raise PolicyError(f"policy {spec!r}: cannot import module {module_name!r}: {exc}") from None
        for part in attr.split("."):
            try:
                obj = getattr(obj, part)
            except AttributeError:
                raise PolicyError(f"policy {spec!r}: module {module_name!r} has no attribute {attr!r}") from None
        if not callable(obj):
            raise PolicyError(f"policy {spec!r}: {attr!r} is not callable")
        return obj
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: (e.name, e.value)):
        if ep.name == spec:
            try:
                factory = ep.load()
            except Exception as exc:  # a broken plugin must not crash with a traceback
                raise PolicyError(f"policy {spec!r}: entry point {ep.value!r} failed to load: {exc}") from None
            if not callable(factory):
                raise PolicyError(f"policy {spec!r}: entry point {ep.value!r} is not callable")
            return factory
    from .catalog import policy_names

    builtins, plugins = policy_names()
    raise PolicyError(
        f"unknown policy {spec!r}: use a built-in name ({', '.join(builtins)}), an installed "
        f"{ENTRY_POINT_GROUP!r} entry point ({', '.join(plugins) or 'none installed'}), module:factory, "
        "or cmd:<command> (`emberbench policies` lists them)"
    )


@contextlib.contextmanager
def closing(policy: Any) -> Iterator[Any]:
    """Yield ``policy`` and call its ``close()`` afterwards, if it has one."""
    try:
        yield policy
    finally:
        close = getattr(policy, "close", None)
        if callable(close):
            close()
