"""Resolving a policy spec string into a policy factory.

A spec is one of:

* a built-in name: ``stay``, ``greedy``, ``fire-aware``, ``random``;
* an import path ``package.module:factory`` (the factory is called with no
  arguments once per episode);
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
    if _IMPORT_RE.fullmatch(spec):
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
        "cmd:<command> or openai:<model> (`emberbench policies` lists them)"
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
