"""EMBERBench: a reference benchmark for evacuation decision-making under fire.

The public Python API is the list ``__all__`` below, walked through in
docs/api.md: build a manifest, run an evaluation (to a file, or in memory,
in process or on Ray), load and verify results, pair them, compute aggregate
and paired statistics, show them as tables (in Jupyter, in a terminal, in
pandas or Arrow), export them, write reports, viewer pages and plots, and
write a policy for the ``Observation`` it receives. The
names are re-exported lazily (PEP 562 ``__getattr__``): ``import emberbench``
stays cheap and pulls in neither numpy, ray nor the store; a name's module is
imported the first time the name is used.

The content-addressed store and the Ray runner live in the repository's
top-level folders ``store/`` and ``cluster/`` and are installed as the
subpackages ``emberbench.store`` and ``emberbench.cluster`` (so that no
top-level name can collide with another distribution). An installed wheel
holds them inside this package; when this package is imported straight from
a source tree (an editable install, ``PYTHONPATH``, a Ray job's uploaded
working directory), :class:`_SourceTreeFinder` maps the two names to the
sibling folders.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from pathlib import Path

__version__ = "0.2.0"


class _SourceTreeFinder(importlib.abc.MetaPathFinder):
    """Finds ``emberbench.store`` / ``emberbench.cluster`` in the source tree's top-level folders."""

    def __init__(self, folders: dict[str, Path]) -> None:
        self.folders = folders

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        folder = self.folders.get(fullname)
        if folder is None:
            return None
        return importlib.util.spec_from_file_location(fullname, folder / "__init__.py",
                                                      submodule_search_locations=[str(folder)])


def _map_source_tree() -> None:
    here = Path(__file__).resolve().parent
    folders = {f"{__name__}.{name}": here.parent / name for name in ("store", "cluster")
               if not (here / name).is_dir() and (here.parent / name / "__init__.py").is_file()}
    if folders and not any(isinstance(f, _SourceTreeFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _SourceTreeFinder(folders))


_map_source_tree()

# Public name -> the module that defines it. Everything else is internal.
_EXPORTS: dict[str, str] = {
    "EmberError": "emberbench.errors",
    "Suite": "emberbench.sim.suite",
    "load_suite": "emberbench.sim.suite",
    "EvaluationManifest": "emberbench.results.manifest",
    "build_manifest": "emberbench.results.manifest",
    "load_manifest": "emberbench.results.manifest",
    "write_manifest": "emberbench.results.manifest",
    "RunSummary": "emberbench.evaluation.runner",
    "run_evaluation": "emberbench.evaluation.runner",
    "evaluate": "emberbench.api.evaluate",
    "EvaluationResult": "emberbench.results.artifact",
    "load_result": "emberbench.results.artifact",
    "verify_artifact": "emberbench.results.stream",
    "ArtifactStream": "emberbench.results.stream",
    "StreamedEpisode": "emberbench.results.stream",
    "VerifiedArtifact": "emberbench.results.stream",
    "play_episode": "emberbench.records.episode",
    "authenticate": "emberbench.records.episode",
    "PairingReport": "emberbench.results.pairing",
    "load_pair": "emberbench.results.pairing",
    "pair_results": "emberbench.results.pairing",
    "pair_artifacts": "emberbench.results.pairing",
    "AggregateStatistics": "emberbench.statistics",
    "PairedStatistics": "emberbench.statistics",
    "aggregate_statistics": "emberbench.statistics",
    "paired_statistics": "emberbench.statistics",
    "aggregate_artifact": "emberbench.statistics",
    "paired_artifacts": "emberbench.statistics",
    "write_artifact": "emberbench.statistics",
    "Observation": "emberbench.sim.observation",
    "ExitView": "emberbench.sim.observation",
    "PersonView": "emberbench.sim.observation",
    "Policy": "emberbench.records.episode",
    "PolicyFactory": "emberbench.policies.spec",
    "resolve_policy": "emberbench.policies.spec",
    "report": "emberbench.api.presentation",
    "view": "emberbench.api.presentation",
    "plot": "emberbench.api.presentation",
    "export_episodes": "emberbench.api.exports",
    "run_catalog": "emberbench.api.exports",
    "Table": "emberbench.tables.table",
}


def __getattr__(name: str) -> object:
    """Import a public name's module on first use (PEP 562) and cache the name here."""
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


__all__ = ["__version__", *_EXPORTS]
