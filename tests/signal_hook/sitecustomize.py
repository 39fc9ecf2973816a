"""Test hook: a child process sends itself a signal at one named point of its start-up.

Put this folder first on ``PYTHONPATH`` and set ``EMBERBENCH_TEST_SIGNAL_AT``
and ``EMBERBENCH_TEST_SIGNAL`` (``TERM`` or ``INT``); Python imports this
module while it starts, before any of the program's code. A point is one of:

* ``start``: now, before the program's first import;
* ``import:MODULE``: when ``MODULE`` begins to be imported (the signal's
  handler then runs inside the import machinery, as a signal arriving during
  a slow import would);
* ``call:MODULE:NAME`` (``NAME`` may be ``Class.method``): when that function
  is entered, once ``MODULE`` has been imported.

With ``EMBERBENCH_TEST_SIGNAL_IN=finalizer`` the signal is sent from inside
an object's ``__del__``, which goes on running a little, so that the
handler runs inside the finalizer, where Python reports an exception as
"Exception ignored in ..." and carries on (as when garbage collection
happens to run a finalizer at the moment a signal arrives).

The variables are removed from the environment at once, so no process the
program starts (a Ray worker) sees them. Nothing here is EMBERBench's.
"""

from __future__ import annotations

import functools
import importlib.abc
import os
import signal
import sys

_POINT = os.environ.pop("EMBERBENCH_TEST_SIGNAL_AT", "")
_SIGNAL = getattr(signal, "SIG" + os.environ.pop("EMBERBENCH_TEST_SIGNAL", "TERM"))
_IN_FINALIZER = os.environ.pop("EMBERBENCH_TEST_SIGNAL_IN", "") == "finalizer"
_fired = False


class _Garbage:
    def __del__(self) -> None:
        os.kill(os.getpid(), _SIGNAL)
        total = 0
        for step in range(1000):  # the handler runs in here
            total += step


def _fire() -> None:
    global _fired
    if not _fired:
        _fired = True
        if _IN_FINALIZER:
            _Garbage()  # dropped at once: its __del__ runs now
        else:
            os.kill(os.getpid(), _SIGNAL)


class _Hook(importlib.abc.MetaPathFinder):
    """Fires at ``import:MODULE``; wraps the function of ``call:MODULE:NAME`` once its module is loaded."""

    def __init__(self, kind: str, module: str, name: str) -> None:
        self.kind, self.module, self.name = kind, module, name

    def find_spec(self, fullname, path=None, target=None):  # noqa: ANN001, ANN201
        if fullname != self.module or _fired:
            return None
        if self.kind == "import":
            _fire()
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        real_exec = spec.loader.exec_module
        name = self.name

        def exec_module(module):  # noqa: ANN001, ANN202
            real_exec(module)
            owner, _, attr = name.rpartition(".")
            holder = functools.reduce(getattr, owner.split("."), module) if owner else module
            original = getattr(holder, attr)

            @functools.wraps(original)
            def fired(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
                _fire()
                return original(*args, **kwargs)

            setattr(holder, attr, fired)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


if _POINT == "start":
    _fire()
elif _POINT:
    import importlib.util

    _kind, _, _rest = _POINT.partition(":")
    _module, _, _name = _rest.partition(":")
    sys.meta_path.insert(0, _Hook(_kind, _module, _name))
