"""Markers given by what a test uses, so the quick loop cannot pick up a heavy test by omission.

``scripts/test.sh --quick`` deselects every test that starts something slow or
outside the process: Ray, the S3 server, the model server, Chromium, the docs
build, the multi-host rig, and the integration and ``slow`` tests. Writing a
marker on each such test is easy to forget, so :func:`mark_items` (the
``pytest_collection_modifyitems`` hook below, which tests/conftest.py imports)
adds them from what the test asks for:

* the fixtures in its closure (:data:`FIXTURE_MARKERS`: ``s3_endpoint`` and
  everything built on it, ``model_server``, the Ray session fixtures, ``rig``,
  the browser's ``driver``);
* a parameter value of ``"s3"`` (the local/S3 backend pairs, which reach the
  server through ``request.getfixturevalue``);
* its folder (:data:`FOLDER_MARKERS`: everything under ``tests/integration`` is
  ``integration``, under ``tests/multihost`` is ``multihost``);
* its module's imports (:data:`MODULE_MARKERS`: a module using the docs-build
  helpers is ``docs``).

:func:`check_fixture` is the net under that: a test that reaches one of those
fixtures without carrying its marker (a ``getfixturevalue`` the rules above
cannot see) fails and says which marker to add.

Under pytest-xdist (``--dist loadgroup``), :func:`xdist_group` keeps together
what must share one resource or is built once per module: all ``ray`` and
``multihost`` tests on one worker, one after another (one Ray instance for the
run; one rig per machine, since its namespaces have a fixed prefix and
subnet; never both clusters at once), and every test module with a module-,
package- or class-scoped fixture, or under tests/integration, on one worker
(its fixtures are built once).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

FIXTURE_MARKERS = {
    "s3_endpoint": "s3",
    "s3_locator": "s3",
    "model_server": "served_server",
    "ray_token": "ray",
    "ray_cluster": "ray",
    "rig": "multihost",
    "driver": "browser",
}
"""Fixture name -> the marker every test using it (directly or through another fixture) gets."""

PARAM_MARKERS = {"s3": "s3"}
"""A parameter value -> the marker a test parametrized with it gets (the backend pairs name S3 ``"s3"``)."""

FOLDER_MARKERS = {"integration": "integration", "multihost": "multihost"}
"""A folder directly under tests/ -> the marker of every test in it."""

MODULE_MARKERS = {"tests.docs_support": "docs"}
"""A helper module -> the marker of every test in a module that imports from it."""

QUICK_EXCLUDES = ("integration", "ray", "s3", "served_server", "browser", "docs", "multihost", "slow")
"""The markers ``scripts/test.sh --quick`` deselects (tests/unit/test_test_selection.py checks the script)."""

CLUSTER_GROUP = "clusters"
CLUSTER_MARKERS = ("ray", "multihost")
"""Markers whose tests all run on one worker under xdist, one after another (:data:`CLUSTER_GROUP`).

That worker holds the run's one embedded Ray instance, and the machine holds
one multi-host rig at a time (fixed namespace prefix and subnet). The rig's
Ray cluster and the embedded one never run at once either: on two cores, two
clusters starve each other's heartbeats and the rig tests' time bounds.
"""

SHARED_SCOPES = ("module", "package", "class")
"""Fixture scopes whose value a module's tests share: such a module runs on one worker."""


def quick_expression() -> str:
    """The ``-m`` expression of the quick loop."""
    return "not (" + " or ".join(QUICK_EXCLUDES) + ")"


def _uses_module(module: object, helper: str) -> bool:
    for value in list(vars(module).values()):
        try:
            if getattr(value, "__name__", None) == helper or getattr(value, "__module__", None) == helper:
                return True
        except Exception:  # noqa: BLE001 - an object whose attribute lookup raises uses nothing of ours
            continue
    return False


def _folder(item: pytest.Item) -> str | None:
    """The folder directly under the suite's ``tests/`` that holds ``item`` (None for a file of its own)."""
    try:  # both paths are absolute already: no resolve(), which costs a system call per part
        parts = Path(item.path).relative_to(Path(item.config.rootpath) / "tests").parts
    except ValueError:
        return None
    return parts[0] if len(parts) > 1 else None


def _module_markers(item: pytest.Item, seen: dict[str, set[str]]) -> set[str]:
    """The markers of ``item``'s file (folder and imports), worked out once per file into ``seen``."""
    key = str(item.path)
    if key not in seen:
        names = set()
        folder = _folder(item)
        if folder in FOLDER_MARKERS:
            names.add(FOLDER_MARKERS[folder])
        module = getattr(item, "module", None)
        if module is not None:
            names.update(marker for helper, marker in MODULE_MARKERS.items() if _uses_module(module, helper))
        seen[key] = names
    return seen[key]


def markers_for(item: pytest.Item, seen: dict[str, set[str]] | None = None) -> set[str]:
    """The markers ``item`` gets from its fixtures, parameters, folder and module imports."""
    names = set(_module_markers(item, {} if seen is None else seen))
    for fixture in getattr(item, "fixturenames", ()):
        if fixture in FIXTURE_MARKERS:
            names.add(FIXTURE_MARKERS[fixture])
    callspec = getattr(item, "callspec", None)
    if callspec is not None:
        for value in callspec.params.values():
            if isinstance(value, str) and value in PARAM_MARKERS:
                names.add(PARAM_MARKERS[value])
    return names


def _shares_fixtures(item: pytest.Item) -> bool:
    """Whether ``item`` uses a fixture whose value other tests of its module share (module, package or class scope)."""
    info = getattr(item, "_fixtureinfo", None)
    for definitions in getattr(info, "name2fixturedefs", {}).values():
        if any(getattr(d, "scope", "function") in SHARED_SCOPES for d in definitions):
            return True
    return False


def xdist_group(item: pytest.Item) -> str | None:
    """The xdist group of ``item`` (None: any worker may take it)."""
    if any(item.get_closest_marker(marker) is not None for marker in CLUSTER_MARKERS):
        return CLUSTER_GROUP
    if item.get_closest_marker("integration") is not None or _shares_fixtures(item):
        return item.nodeid.split("::", 1)[0]
    return None


def mark_items(items: list[pytest.Item]) -> None:
    """Add the automatic markers, then the xdist group, to every collected test."""
    seen: dict[str, set[str]] = {}
    for item in items:
        for name in sorted(markers_for(item, seen)):
            if item.get_closest_marker(name) is None:
                item.add_marker(name)
        group = xdist_group(item)
        if group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))


def check_fixture(item: pytest.Item | None, fixture: str) -> None:
    """Fail ``item`` if it reached ``fixture`` without the marker that fixture implies."""
    marker = FIXTURE_MARKERS.get(fixture)
    if item is None or marker is None or item.get_closest_marker(marker) is not None:
        return
    pytest.fail(f"{item.nodeid} uses the {fixture} fixture without the {marker!r} marker (it reaches it through "
                f"request.getfixturevalue, which tests/markers.py cannot see): add @pytest.mark.{marker}",
                pytrace=False)


# The hooks (tests/conftest.py imports them, which registers them with pytest).

@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test by what it uses, so ``-m`` selections need no marker by hand.

    First of all the hooks: pytest-xdist reads the ``xdist_group`` markers in its own hook, and ``-m``
    deselects in pytest's; both must see these markers.
    """
    mark_items(items)


_RUNNING: list[pytest.Item] = []


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Remember the running test (for :func:`pytest_fixture_setup`)."""
    _RUNNING.append(item)
    try:
        return (yield)
    finally:
        _RUNNING.pop()


def pytest_fixture_setup(fixturedef: pytest.FixtureDef, request: pytest.FixtureRequest) -> None:
    """A test that sets up a server fixture without its marker fails, naming the marker."""
    check_fixture(_RUNNING[-1] if _RUNNING else None, fixturedef.argname)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """After the test: the same check for every fixture it reached, a session one set up by an earlier test too."""
    result = yield
    # pytest keeps what a test's request resolved (getfixturevalue included) in this attribute.
    for name in sorted(getattr(getattr(item, "_request", None), "_fixture_defs", {})):
        check_fixture(item, name)
    return result
