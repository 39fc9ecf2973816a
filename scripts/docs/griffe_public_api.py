"""Griffe extension: make the lazily exported public names visible as ``emberbench.NAME``.

``emberbench/__init__.py`` re-exports its public names through a PEP 562
``__getattr__``, which static analysis cannot follow, so griffe would not
know ``emberbench.Suite``. This extension adds one alias per name of
``emberbench.__all__`` to the package, pointing at wherever the name is
defined today. The API reference therefore names only ``emberbench.NAME``
and keeps working when the modules behind the names move.

Where a name is defined is taken from the imported object (``__module__``
and ``__qualname__``); a name without them (a type alias such as ``Policy``)
is looked up in the loaded package: the one module that defines it, not
imports it. A name that cannot be placed, or is defined in several modules,
is logged as a warning, which fails a ``--strict`` build.
"""

from __future__ import annotations

import importlib
import logging
from typing import Any

import griffe

PACKAGE = "emberbench"
_log = logging.getLogger("mkdocs.plugins.emberbench.griffe")


def _definitions(module: griffe.Module, name: str) -> list[str]:
    """Paths of the modules under ``module`` that define ``name`` themselves (no imports, no aliases)."""
    found = []
    member = module.members.get(name)
    if member is not None and not member.is_alias:
        found.append(member.path)
    for sub in module.modules.values():
        if not sub.is_alias:
            found.extend(_definitions(sub, name))
    return found


def _target(pkg: griffe.Module, name: str, value: object) -> str | None:
    module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str) and module.split(".")[0] == PACKAGE:
        return f"{module}.{qualname}"
    found = _definitions(pkg, name)
    if len(found) == 1:
        return found[0]
    _log.warning("public name %s.%s: defined in %s; cannot tell which to document",
                 PACKAGE, name, ", ".join(found) or "no module")
    return None


class PublicAPI(griffe.Extension):
    """Adds ``emberbench.NAME`` aliases for the names of ``emberbench.__all__``."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.name != PACKAGE:
            return
        runtime = importlib.import_module(PACKAGE)
        for name in runtime.__all__:
            existing = pkg.members.get(name)
            if existing is not None and existing.is_module:
                _log.warning("public name %s.%s is also a submodule's name", PACKAGE, name)
                continue
            if existing is not None:  # defined (or imported) in __init__.py itself
                continue
            target = _target(pkg, name, getattr(runtime, name))
            if target is not None:
                pkg.set_member(name, griffe.Alias(name, target, parent=pkg))
