"""Packaging: the store and the Ray runner install inside ``emberbench``, under names that cannot collide."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_package_folder_is_listed() -> None:
    """Each folder with an ``__init__.py`` under emberbench/, store/ and cluster/ is a listed package."""
    config = _config()
    mapping = {folder: name for name, folder in config["package-dir"].items()}
    found = set()
    for top in ("emberbench", "store", "cluster"):
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT).parts
            prefix = mapping.get(rel[0], rel[0])
            found.add(".".join((prefix, *rel[1:])))
    assert found == set(config["packages"])


def test_no_top_level_store_or_cluster() -> None:
    """Only ``emberbench`` is a top-level import name; store and cluster map into it."""
    config = _config()
    assert {name.split(".")[0] for name in config["packages"]} == {"emberbench"}
    assert config["package-dir"] == {"emberbench.store": "store", "emberbench.cluster": "cluster"}


def test_source_tree_resolves_subpackages_without_install(tmp_path: Path) -> None:
    """From a bare copy of the source tree (as a Ray job's working_dir), emberbench.store is that copy's store/."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import importlib.util as u;"
        "print(u.find_spec('emberbench.store').origin); print(u.find_spec('emberbench.cluster').origin)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(ROOT)], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(ROOT / "store" / "__init__.py"), str(ROOT / "cluster" / "__init__.py")]


def test_version_is_written_once_and_reported() -> None:
    """``--version`` and ``python -m emberbench`` report emberbench.__version__, the one version source."""
    import emberbench

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert config["project"]["dynamic"] == ["version"]
    assert config["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "emberbench.__version__"}
    out = subprocess.run([sys.executable, "-m", "emberbench", "--version"], capture_output=True, text=True,
                         check=True)
    assert out.stdout == f"emberbench {emberbench.__version__}\n"


def test_job_submission_parts_are_an_extra() -> None:
    """Plain installs get Ray's core; only the ``submit`` extra (and the tests) pull in ray[default]."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "ray>=2.40" in project["dependencies"]
    assert not any(dep.startswith("ray[") for dep in project["dependencies"])
    assert project["optional-dependencies"]["submit"] == ["ray[default]>=2.40"]
    assert (ROOT / "LICENSE").read_text().lstrip().startswith("Apache License")


def test_viewer_assets_are_package_data() -> None:
    """The viewer's HTML, script and style files are shipped as package data."""
    config = _config()
    patterns = config["package-data"]["emberbench.viewer"]
    assets = ROOT / "emberbench" / "viewer" / "assets"
    shipped = {p.name for pattern in patterns for p in assets.glob(pattern.split("/", 1)[1])}
    assert shipped == {p.name for p in assets.iterdir() if p.is_file()}
    assert {"viewer.html", "viewer.js", "viewer.css", "report.html", "report.js", "report.css"} <= shipped
