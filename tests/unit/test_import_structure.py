"""The import structure: no module imports itself back, and every layer imports only downward.

Every module of the distribution is read with ``ast`` (nothing is imported):
the core in ``emberbench/``, the store in ``store/`` and the Ray runner in
``cluster/`` (installed as ``emberbench.store`` and ``emberbench.cluster``).
Every import statement is an edge of the graph, wherever it stands: at module
level, inside a function (a lazy import) or under ``if TYPE_CHECKING:``. A
lazy import only changes *when* one module needs the other, not *whether*, so
it counts; laziness matters only to the rules that keep ``ray`` and the store
out of a plain ``import emberbench``.

The rules (docs/architecture.md explains them):

* no circles: no module imports another that imports it back, directly or
  through others;
* :data:`LAYERS`: a module imports its own package and the packages of lower
  layers; never a higher layer, nor a neighbour in its own layer;
* only ``emberbench.cluster`` imports ``ray``, and the CLI and the API's front
  door (``emberbench.api``) are the only parts of the core that reach
  ``emberbench.cluster``, inside the functions that run on Ray;
* ``emberbench.store`` imports nothing of the core; the core imports the
  store only inside functions;
* every import of ``emberbench...`` names a module that exists (and a name
  that module binds), in the package and in tests/ and scripts/.

A circle is reported as the group of modules that reach one another (a
strongly connected component of the graph) with one shortest cycle through
it, each step with its line and kind.

Importing a submodule also runs its parent packages' ``__init__``; those
implied imports are not edges (a package that re-exports its submodules would
otherwise form a circle with each of them).
"""

from __future__ import annotations

import ast
import tomllib
from collections import deque
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

LAYERS: tuple[tuple[str, ...], ...] = (
    ("emberbench", "emberbench.errors"),  # the package root (version, lazy public names) and the errors
    ("emberbench.io", "emberbench.schemas"),  # I/O rules and format versions; the JSON Schemas
    # scenarios, suites, simulator; the stand-alone grouped rates; tables out (a typed table and its file
    # writers: results, statistics and the run catalog make its rows, so it sits below them, above io)
    ("emberbench.sim", "emberbench.grouped_rates", "emberbench.tables"),
    ("emberbench.policies",),  # built-in policies, policy specs, external agents
    ("emberbench.records",),  # one episode: play, record, replay, metrics
    # manifests and result artifacts; suite generation; the Gymnasium environment, a leaf that needs only
    # the simulator (episodes, the batch stepper) and the records (an episode's record and metrics), and
    # that nothing of the core imports, so Gymnasium stays an optional dependency
    ("emberbench.results", "emberbench.generate", "emberbench.gym"),
    ("emberbench.evaluation", "emberbench.statistics"),  # the run path; statistics of results
    ("emberbench.provenance",),  # signed provenance: attestations of runs, keys, the policy code digest
    ("emberbench.runs", "emberbench.viewer"),  # the runs a store holds; presentation
    ("emberbench.cluster",),  # the Ray executor, replayer and reducer
    # the front door of the Python API (evaluate on a chosen executor, report, view, plot, exports): it combines
    # every stage as the CLI does, may reach the cluster inside functions, and the CLI calls it
    ("emberbench.api",),
    ("emberbench.cli",),  # the command line
    ("emberbench.__main__",),  # ``python -m emberbench``
)
"""The layers of the package, lowest first. Each entry is a package (with everything below it) or, for
the package root, exactly one module. ``emberbench.store`` stands apart: it imports nothing of the
core, and any layer may use it (the core only inside functions)."""

STORE = "emberbench.store"
CLUSTER = "emberbench.cluster"
CLI = "emberbench.cli"
API = "emberbench.api"
SINGLE_MODULES = frozenset({"emberbench", "emberbench.errors", "emberbench.__main__"})

MODULE, FUNCTION, TYPING = "module level", "inside a function", "under TYPE_CHECKING"


@dataclass(frozen=True, slots=True)
class Import:
    """One imported name: which module imports which, on what line, and when the import runs."""

    source: str
    target: str  # the module imported (for ``from m import name``: m.name if that is a module, else m)
    line: int
    kind: str  # MODULE, FUNCTION or TYPING
    name: str | None = None  # for ``from m import name`` where m.name is no module: the name taken from m


def _folders() -> dict[str, Path]:
    """Top-level package name -> its folder, as pyproject.toml installs them."""
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    return {"emberbench": ROOT / "emberbench", **{name: ROOT / folder for name, folder in mapping.items()}}


@cache
def modules() -> dict[str, tuple[Path, bool]]:
    """Every module of the distribution: dotted name -> (file, is a package)."""
    found: dict[str, tuple[Path, bool]] = {}
    for prefix, folder in _folders().items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                found[".".join((prefix, *parts[:-1]))] = (path, True)
            else:
                found[".".join((prefix, *parts))] = (path, False)
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _walk(node: ast.AST, kind: str):
    """Yield (import node, kind) for every import under ``node``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child, kind
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield from _walk(child, FUNCTION if kind == MODULE else kind)
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            for stmt in child.body:
                yield from _walk(ast.Module(body=[stmt], type_ignores=[]), TYPING)
            for stmt in child.orelse:
                yield from _walk(ast.Module(body=[stmt], type_ignores=[]), kind)
        else:
            yield from _walk(child, kind)


def _resolve(package: str, level: int, module: str | None) -> str:
    parts = package.split(".")
    if level - 1 >= len(parts):
        raise AssertionError(f"relative import beyond the top level from {package}")
    return ".".join(parts[: len(parts) - (level - 1)] + ([module] if module else []))


@cache
def imports() -> tuple[Import, ...]:
    """Every import statement of every module, one entry per imported name."""
    known = modules()
    out: list[Import] = []
    for name, (path, is_package) in known.items():
        package = name if is_package else name.rpartition(".")[0]
        for node, kind in _walk(ast.parse(path.read_text(), str(path)), MODULE):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
                out.extend(Import(name, target, node.lineno, kind) for target in targets)
            else:
                base = _resolve(package, node.level, node.module) if node.level else node.module or ""
                for alias in node.names:
                    if f"{base}.{alias.name}" in known:
                        out.append(Import(name, f"{base}.{alias.name}", node.lineno, kind))
                    else:
                        out.append(Import(name, base, node.lineno, kind, alias.name))
    return tuple(out)


@cache
def defined_names(module: str) -> frozenset[str] | None:
    """The names a module binds at its top level, or None if it resolves any name (a module ``__getattr__``)."""
    path, _ = modules()[module]
    names: set[str] = set()
    pending = list(ast.parse(path.read_text(), str(path)).body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == "__getattr__":
                return None
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            pending.extend(ast.iter_child_nodes(node))
    return frozenset(names)


def internal(entry: Import) -> bool:
    return entry.target.split(".")[0] == "emberbench"


def graph() -> dict[str, dict[str, Import]]:
    """Module -> {imported module of the package: the first import of it}."""
    out: dict[str, dict[str, Import]] = {name: {} for name in modules()}
    for entry in imports():
        if internal(entry) and entry.target in out and entry.target != entry.source:
            out[entry.source].setdefault(entry.target, entry)
    return out


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted, in sorted order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def shortest_cycle(edges: dict[str, set[str]], start: str) -> list[str]:
    """The shortest path from ``start`` back to itself (breadth first, neighbours in sorted order)."""
    previous: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for child in sorted(edges[node]):
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return [*reversed(path), start]
            if child not in previous:
                previous[child] = node
                queue.append(child)
    raise AssertionError(f"{start} is on no cycle")


def describe_cycle(cycle: list[str], imports_of: dict[str, dict[str, Import]]) -> str:
    steps = [cycle[0]]
    for source, target in zip(cycle, cycle[1:]):
        entry = imports_of[source][target]
        steps.append(f"-> {target} (line {entry.line}, {entry.kind})")
    return " ".join(steps)


def unit_of(module: str) -> str | None:
    """The entry of :data:`LAYERS` that ``module`` belongs to (the longest that holds it)."""
    best = None
    for layer in LAYERS:
        for unit in layer:
            holds = module == unit if unit in SINGLE_MODULES else module == unit or module.startswith(unit + ".")
            if holds and (best is None or len(unit) > len(best)):
                best = unit
    return best


RANK = {unit: rank for rank, layer in enumerate(LAYERS) for unit in layer}


def in_package(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


# ----------------------------------------------------------------------------- the rules


def test_the_walk_sees_the_whole_distribution() -> None:
    """The walk finds the core, the store and the cluster, and thousands of imports (it cannot pass empty)."""
    names = modules()
    assert {"emberbench", "emberbench.errors", "emberbench.cli.main", STORE, f"{STORE}.core", CLUSTER} <= set(names)
    assert len(names) > 150
    assert sum(len(targets) for targets in graph().values()) > 500


def test_no_import_circles() -> None:
    """No module imports another that imports it back, directly or through others (lazy imports included)."""
    imports_of = graph()
    edges = {source: set(targets) for source, targets in imports_of.items()}
    circles = strongly_connected(edges)
    report = [
        f"  {', '.join(component)}\n    e.g. {describe_cycle(shortest_cycle(edges, component[0]), imports_of)}"
        for component in circles
    ]
    if circles:
        pytest.fail(f"{len(circles)} import circles:\n" + "\n".join(report), pytrace=False)


def test_every_core_module_belongs_to_a_layer() -> None:
    """Every module but the store's is in exactly one entry of LAYERS, so a new package must be placed."""
    units = [unit for layer in LAYERS for unit in layer]
    assert len(units) == len(set(units))
    missing = sorted(name for name in modules() if not in_package(name, STORE) and unit_of(name) is None)
    if missing:
        pytest.fail(f"modules in no layer of LAYERS: {', '.join(missing)}", pytrace=False)


def test_layers_import_only_downward() -> None:
    """A module imports its own package and lower layers: never a higher layer or a neighbour in its own."""
    wrong = []
    for source, targets in graph().items():
        if in_package(source, STORE):
            continue
        mine = unit_of(source)
        for target, entry in targets.items():
            theirs = unit_of(target)
            if in_package(target, STORE) or mine is None or theirs is None or theirs == mine:
                continue
            if RANK[theirs] >= RANK[mine]:
                wrong.append(f"{source} (layer {RANK[mine]}, {mine}) imports {target} (layer {RANK[theirs]}, "
                             f"{theirs}) on line {entry.line}")
    if wrong:
        pytest.fail("imports against the layers:\n  " + "\n  ".join(wrong), pytrace=False)


def test_only_the_cluster_imports_ray() -> None:
    """``ray`` is imported by emberbench.cluster alone, whether at module level or inside a function."""
    wrong = [f"{e.source} line {e.line} ({e.kind}): {e.target}" for e in imports()
             if e.target.split(".")[0] == "ray" and not in_package(e.source, CLUSTER)]
    if wrong:
        pytest.fail("ray imported outside emberbench.cluster:\n  " + "\n  ".join(wrong), pytrace=False)


def test_the_core_reaches_the_cluster_only_from_cli_commands() -> None:
    """Only the CLI and the API's front door import emberbench.cluster, and only inside the functions that use it."""
    wrong = [f"{e.source} line {e.line} ({e.kind})" for e in imports()
             if in_package(e.target, CLUSTER) and not in_package(e.source, CLUSTER)
             and not ((in_package(e.source, CLI) or in_package(e.source, API)) and e.kind != MODULE)]
    if wrong:
        pytest.fail("emberbench.cluster imported from the core other than lazily by the CLI or the API:\n  "
                    + "\n  ".join(wrong), pytrace=False)


def test_the_store_imports_nothing_of_the_core() -> None:
    """emberbench.store is generic: it imports only itself of the whole distribution."""
    wrong = [f"{e.source} line {e.line}: {e.target}" for e in imports()
             if in_package(e.source, STORE) and internal(e) and not in_package(e.target, STORE)]
    if wrong:
        pytest.fail("the store imports the core:\n  " + "\n  ".join(wrong), pytrace=False)


def test_the_core_imports_the_store_only_inside_functions() -> None:
    """``import emberbench`` and any core module leave the store unimported until a function needs it."""
    wrong = [f"{e.source} line {e.line}: {e.target}" for e in imports()
             if in_package(e.target, STORE) and e.kind == MODULE
             and not in_package(e.source, STORE) and not in_package(e.source, CLUSTER)]
    if wrong:
        pytest.fail("the core imports the store at module level:\n  " + "\n  ".join(wrong), pytrace=False)


def _missing(target: str, name: str | None) -> str | None:
    """What is wrong with importing ``name`` from ``target`` (or the module ``target``), if anything."""
    if target not in modules():
        return f"no module {target}"
    if name is not None and name != "*":
        names = defined_names(target)
        if names is not None and name not in names:
            return f"{target} has no {name}"
    return None


def test_every_import_of_the_package_names_something_that_exists() -> None:
    """An import of ``emberbench...`` names an existing module, and ``from m import x`` a name that m binds.

    This catches an import left at a module's old place, including a name
    asked of a package that no longer holds it.
    """
    wrong = [f"{e.source} line {e.line}: {problem}" for e in imports()
             if internal(e) and (problem := _missing(e.target, e.name)) is not None]
    if wrong:
        pytest.fail("imports of what does not exist:\n  " + "\n  ".join(wrong), pytrace=False)


def test_tests_and_scripts_import_what_exists() -> None:
    """The same check for tests/ and scripts/ (their absolute imports of ``emberbench...``)."""
    known = modules()
    wrong = []
    for folder in ("tests", "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node, _ in _walk(ast.parse(path.read_text(), str(path)), MODULE):
                if isinstance(node, ast.Import):
                    pairs = [(alias.name, None) for alias in node.names]
                elif node.level == 0 and node.module is not None:
                    pairs = [(f"{node.module}.{a.name}", None) if f"{node.module}.{a.name}" in known
                             else (node.module, a.name) for a in node.names]
                else:
                    continue
                for target, name in pairs:
                    if target.split(".")[0] == "emberbench" and (problem := _missing(target, name)) is not None:
                        wrong.append(f"{path.relative_to(ROOT)} line {node.lineno}: {problem}")
    if wrong:
        pytest.fail("imports of what does not exist:\n  " + "\n  ".join(wrong), pytrace=False)


# ----------------------------------------------------------------------------- the checker itself


@pytest.mark.parametrize(("edges", "expected"), [
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c"}, "e": {"a", "c"}}, [["a", "b"], ["c", "d"]]),
])
def test_circles_are_found(edges: dict[str, set[str]], expected: list[list[str]]) -> None:
    """The component search finds every circle and only circles."""
    assert strongly_connected(edges) == expected


def test_a_lazy_or_typing_import_is_an_edge_of_its_kind() -> None:
    """Imports inside functions and under TYPE_CHECKING are walked, each with its kind."""
    tree = ast.parse(
        "import a\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import b\nelse:\n    import c\n"
        "def f():\n    import d\n"
        "class K:\n    import e\n    def m(self):\n        import f\n"
    )
    kinds = {node.names[0].name: kind for node, kind in _walk(tree, MODULE)}
    assert kinds == {"a": MODULE, "TYPE_CHECKING": MODULE, "b": TYPING, "c": MODULE, "d": FUNCTION, "e": MODULE,
                     "f": FUNCTION}


def test_every_layer_entry_names_a_package_or_module() -> None:
    """The LAYERS table names only things that exist (a renamed package cannot leave a dead entry)."""
    known = modules()
    assert sorted(unit for layer in LAYERS for unit in layer if unit not in known) == []
