"""Resolving a policy spec string into a policy factory.

A spec is one of:

* a built-in name: ``stay``, ``greedy``, ``fire-aware``, ``random``;
* an import path ``package.module:factory`` (the factory is called with no
  arguments once per episode);
* a Python file and a factory in it, ``./mypolicy.py:make`` or
  ``path/to/file.py:make``: the file (its name ends in ``.py``) is loaded as
  a module by its path, relative to the working folder unless absolute,
  without being on the import path (:func:`load_policy_file`);
* a name registered by an installed package in the entry-point group
  ``emberbench.policies``;
* ``cmd:<command line>``: an external agent process, one per episode, speaking
  the line protocol of docs/model-interface.md;
* ``openai:<model>``: a model behind an OpenAI-compatible chat-completions
  server (docs/served-models.md), which uses the store of the
  :class:`~emberbench.policies.context.PolicyContext` for its response cache.

A factory returns a fresh policy each call; :class:`FreshPolicies` holds a
factory to that within a run. Policies that hold resources (external agents)
have a ``close()`` method; :func:`closing` calls it.
"""

from __future__ import annotations

import contextlib
import importlib
import re
import types
import weakref
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from typing import Any

from ..errors import PolicyError
from .baselines import BUILTIN_POLICIES
from .context import PolicyContext

ENTRY_POINT_GROUP = "emberbench.policies"
DEFAULT_AGENT_TIMEOUT = 30.0
_IMPORT_RE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
FILE_SPEC_RE = re.compile(r"^(?P<path>[^:\x00]*\.py):(?P<attr>[A-Za-z_][\w.]*)$")
"""``PATH.py:factory``: a policy factory in a Python file named by its path."""

PolicyFactory = Callable[[], Callable[[Any], Any]]


def resolve_policy(spec: str, *, agent_timeout: float = DEFAULT_AGENT_TIMEOUT,
                   agent_log: str | None = None, context: PolicyContext | None = None) -> PolicyFactory:
    """Return the policy factory named by ``spec``.

    Args:
        spec: the policy spec (see module docstring).
        agent_timeout: seconds an external agent may take to answer one
            observation before the run stops.
        agent_log: a folder where an external agent's stderr is saved, one
            file per episode (ignored by other policies).
        context: the run's store and environment, for policies that use
            them (``openai:``); ignored by the others. None: no store, and
            the process's environment.

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
    if spec.startswith("openai:"):
        from .served.openai_chat import openai_factory

        ctx = context if context is not None else PolicyContext()
        return openai_factory(spec[len("openai:"):], store=ctx.store, environ=ctx.environ)
    file_spec = FILE_SPEC_RE.fullmatch(spec)
    if file_spec is not None:
        module = load_policy_file(file_spec.group("path"), spec)
        return _factory_in(module, file_spec.group("attr"), spec, file_spec.group("path"))
    if _IMPORT_RE.fullmatch(spec):
        module_name, attr = spec.split(":", 1)
        try:
            obj: Any = importlib.import_module(module_name)
        except ImportError as exc:
            raise PolicyError(f"policy {spec!r}: cannot import module {module_name!r}: {exc}"
                              f"{_file_hint(module_name, attr)}") from None
        return _factory_in(obj, attr, spec, repr(module_name))
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
        f"unknown policy {spec!r}{_did_you_mean(spec, [*builtins, *plugins])}: use a built-in name "
        f"({', '.join(builtins)}), an installed {ENTRY_POINT_GROUP!r} entry point "
        f"({', '.join(plugins) or 'none installed'}), module:factory, ./file.py:factory, cmd:<command> or "
        "openai:<model> (`emberbench policies` lists them)"
    )


def _factory_in(obj: Any, attr: str, spec: str, where: str) -> PolicyFactory:
    """The callable ``attr`` (dotted) of module ``obj``."""
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise PolicyError(f"policy {spec!r}: module {where} has no attribute {attr!r}") from None
    if not callable(obj):
        raise PolicyError(f"policy {spec!r}: {attr!r} is not callable")
    return obj  # type: ignore[no-any-return]


def _did_you_mean(spec: str, names: list[str]) -> str:
    """`` (did you mean 'X'?)`` for a misspelt name, or for a command line given without ``cmd:``."""
    import difflib
    import shutil

    words = spec.split()
    if len(words) > 1 or (words and "/" not in words[0] and shutil.which(words[0]) is not None):
        return f" (did you mean 'cmd:{spec}', an external agent?)"
    found = difflib.get_close_matches(spec, names, n=1, cutoff=0.6)
    return f" (did you mean {found[0]!r}?)" if found else ""


def _file_hint(module_name: str, attr: str) -> str:
    """Where ``module_name`` is a Python file in the working folder but not importable: how to name it."""
    import os

    path = module_name.replace(".", os.sep) + ".py"
    if not os.path.isfile(path):
        return ""
    return (f" ({path} is in the current folder; use ./{path}:{attr}, or add the folder to PYTHONPATH)")


_FILE_MODULES: dict[str, Any] = {}


def load_policy_file(path: str, spec: str | None = None) -> types.ModuleType:
    """Load the Python file at ``path`` as a module (once per process and absolute path) and return it.

    The module gets a private name derived from the file's absolute path
    (``_emberbench_policy_<stem>_<digest>``) and is registered under it in
    ``sys.modules`` (so that classes defined in the file pickle by reference
    within the process); the file's folder is not added to the import path.

    Raises:
        PolicyError: the file does not exist, is not a regular file, or
            raises while it is loaded (the message names the exception).
    """
    import hashlib
    import importlib.util
    import os
    import sys

    named = spec if spec is not None else f"{path}:"
    absolute = os.path.abspath(path)
    if absolute in _FILE_MODULES:
        return _FILE_MODULES[absolute]  # type: ignore[no-any-return]
    if not os.path.isfile(absolute):
        what = "no such file" if not os.path.lexists(absolute) else "not a regular file"
        raise PolicyError(f"policy {named!r}: {path}: {what}")
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(absolute))[0])
    name = f"_emberbench_policy_{stem}_{hashlib.sha256(absolute.encode('utf-8', 'surrogateescape')).hexdigest()[:12]}"
    module_spec = importlib.util.spec_from_file_location(name, absolute)
    if module_spec is None or module_spec.loader is None:
        raise PolicyError(f"policy {named!r}: {path} cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:  # the file's own error, in one line
        sys.modules.pop(name, None)
        raise PolicyError(f"policy {named!r}: {path} failed to load: {type(exc).__name__}: {exc}") from None
    _FILE_MODULES[absolute] = module
    return module


_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def spec_name(spec: str) -> str | None:
    """The name a policy spec gives its model when no model id is chosen, or None when it gives none.

    A built-in or entry-point name is itself (``greedy``); ``openai:MODEL``
    is ``MODEL``; a file ``path/mypolicy.py:make`` is ``mypolicy``; an import
    path ``pkg.module:make`` is ``pkg.module``; ``cmd:node agent.js`` is the
    first word after the executable that names a file, without its
    extension (``agent``), else the executable's name (``node``). The name
    must be 1 to 64 letters, digits, ``.``, ``_`` or ``-``, starting with a
    letter or digit; anything else gives None.
    """
    import os
    import shlex

    if not isinstance(spec, str):
        return None
    if spec.startswith("openai:"):
        name = spec[len("openai:"):]
    elif spec.startswith("cmd:"):
        try:
            words = shlex.split(spec[4:])
        except ValueError:
            return None
        files = [w for w in words[1:] if os.path.isfile(w)]
        name = os.path.splitext(os.path.basename(files[0]))[0] if files else os.path.basename(words[0]) if words else ""
    elif FILE_SPEC_RE.fullmatch(spec):
        name = os.path.splitext(os.path.basename(spec.split(":", 1)[0]))[0]
    elif _IMPORT_RE.fullmatch(spec):
        name = spec.split(":", 1)[0]
    else:
        name = spec
    return name if _NAME_RE.fullmatch(name) else None


@contextlib.contextmanager
def closing(policy: Any) -> Iterator[Any]:
    """Yield ``policy`` and call its ``close()`` afterwards, if it has one."""
    try:
        yield policy
    finally:
        close = getattr(policy, "close", None)
        if callable(close):
            close()


def policy_spec_of(policy: str | PolicyFactory) -> str:
    """The spec that names ``policy`` in a run's journal and run-info.

    A spec string is itself. A factory given as a Python object is named
    ``module:qualname`` when that resolves back to it (so a later repair can
    load it), else ``python:module.qualname``, which names but cannot be loaded.
    """
    if isinstance(policy, str):
        return policy
    module = getattr(policy, "__module__", None) or type(policy).__module__
    qualname = getattr(policy, "__qualname__", None)
    if qualname is None:
        return f"python:{type(policy).__module__}.{type(policy).__qualname__} instance"
    spec = f"{module}:{qualname}"
    return spec if _IMPORT_RE.match(spec) else f"python:{module}.{qualname}"


_IMMUTABLE_ATOMS = (type(None), bool, int, float, complex, str, bytes, range, type(Ellipsis))


def _immutable(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` is an immutable atom, or a tuple or frozenset of them (a few levels deep)."""
    if type(value) in _IMMUTABLE_ATOMS:
        return True
    if type(value) in (tuple, frozenset) and depth < 4:
        return all(_immutable(item, depth + 1) for item in value)
    return False


def is_stateless_function(obj: Any) -> bool:
    """Whether ``obj`` is a plain function that can hold no state of its own, so one object may serve every episode.

    The rule (docs/model-interface.md, "Policies and factories") accepts:

    * a plain ``def`` or ``lambda`` function (exactly ``types.FunctionType``:
      not a bound method, a ``functools.partial``, a class or a callable
      instance) with no closure cells (it reads no variable of an enclosing
      function, where state could live), no attributes of its own (nothing
      set on it, no ``__wrapped__``), and defaults that are immutable values
      only (``def p(obs, memory=[])`` keeps state in its default);
    * a built-in function of a module (``__self__`` a module or None), not a
      method bound to an object.

    Anything else can hold state and must be new for every episode. What a
    function does with module globals or objects it reaches is not seen.
    """
    if type(obj) is types.BuiltinFunctionType:
        owner = getattr(obj, "__self__", None)
        return owner is None or isinstance(owner, types.ModuleType)
    if type(obj) is not types.FunctionType:
        return False
    if obj.__closure__ or vars(obj):
        return False
    defaults = (*(obj.__defaults__ or ()), *(obj.__kwdefaults__ or {}).values())
    return all(_immutable(value) for value in defaults)


class FreshPolicies:
    """A policy factory that refuses to hand out an object it handed out before in this run.

    The fairness rules need a new policy per episode (docs/v1-fairness-spec.md):
    a factory that returns one shared object would carry what it saw from one
    episode into the next. Every object returned is remembered weakly (so
    remembering costs nothing once a policy is gone); an object that cannot be
    weakly referenced is compared with the previous one only. The exception
    is a plain stateless function (:func:`is_stateless_function`), which the
    specification allows: it may be returned for every episode.

    Args:
        factory: the underlying factory.
        spec: names the factory in the error message.
    """

    def __init__(self, factory: PolicyFactory, spec: str) -> None:
        self.factory = factory
        self.spec = spec
        self._alive: dict[int, weakref.ref[Any]] = {}
        self._last: Any = None
        self.calls = 0

    def __call__(self) -> Any:
        policy = self.factory()
        self.calls += 1
        if is_stateless_function(policy):
            return policy  # nothing of one episode can stay in it for the next
        return self._new(policy, "factory")

    @property
    def batch_factory(self) -> Callable[[], Any] | None:
        """The batch form of the underlying factory, held to the same rule (None if it declares none).

        Raises:
            PolicyError: the factory's ``batch_factory`` is not callable.
        """
        from .forms import batch_factory_of

        return None if batch_factory_of(self.factory) is None else self._batch

    def _batch(self) -> Any:
        """A new batch policy: refused when the batch factory hands out an object it handed out before."""
        from .forms import batch_factory_of, check_batch_policy

        make = batch_factory_of(self.factory)
        assert make is not None
        self.calls += 1
        return self._new(check_batch_policy(make(), f"policy {self.spec!r}"), "batch factory")

    def _new(self, policy: Any, what: str) -> Any:
        key = id(policy)
        known = self._alive.get(key)
        # Identity, never equality: two equal but distinct policies are two policies.
        again = (known is not None and known() is policy) or (self._last is not None and self._last is policy)
        if again:
            raise PolicyError(
                f"policy {self.spec!r}: the {what} returned an object it had already returned in this run "
                f"(call {self.calls}); a factory must build a new policy for every episode (only a plain "
                "function without closure, attributes or mutable defaults may be returned again)"
            )
        alive = self._alive
        try:
            alive[key] = weakref.ref(policy, lambda ref, key=key: alive.pop(key) if alive.get(key) is ref else None)
        except TypeError:  # cannot be weakly referenced: compare with the previous one only
            self._last = policy
        return policy
