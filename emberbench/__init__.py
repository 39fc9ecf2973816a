"""EMBERBench: a reference benchmark for evacuation decision-making under fire.

The package's public surface is re-exported lazily so that importing
``emberbench`` stays cheap and pulls in neither numpy, ray nor the store.

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

__all__ = ["__version__"]
