"""The documentation site's build hooks (scripts/docs/hooks.py) and griffe extension, on tiny sites.

Each tiny site uses the repository's hooks and its mkdocs.yml ``validation``
settings, and is built with ``mkdocs build --strict`` in a subprocess; a
warning of the hooks must fail the build.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

import emberbench
from tests.docs_support import ROOT, mkdocs_build, require_docs_tools, warnings_of

pytestmark = pytest.mark.docs

HOOKS = ROOT / "scripts" / "docs" / "hooks.py"
EXTENSION = ROOT / "scripts" / "docs" / "griffe_public_api.py"
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


@pytest.fixture(scope="module")
def hooks() -> ModuleType:
    """scripts/docs/hooks.py, imported by path."""
    require_docs_tools()
    spec = importlib.util.spec_from_file_location("emberbench_docs_hooks", HOOKS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tiny_site(tmp_path: Path, pages: dict[str, str], nav: list, pictures: tuple[str, ...] = ()) -> Path:
    """Write a tiny site (the repository's hooks and validation rules) and return its mkdocs.yml."""
    import yaml

    require_docs_tools()
    ours = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    docs = tmp_path / "docs"
    for name, text in pages.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(text, encoding="utf-8")
    for name in pictures:
        (docs / "images").mkdir(exist_ok=True)
        (docs / "images" / name).write_bytes(PNG)
    config = {"site_name": "Tiny", "site_description": "A tiny site for testing the hooks.", "docs_dir": "docs",
              "use_directory_urls": False, "theme": {"name": "mkdocs"}, "hooks": [str(HOOKS)],
              "validation": ours["validation"], "nav": nav}
    path = tmp_path / "mkdocs.yml"
    path.write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
    return path


LANDING = "# Tiny\n\nA site about very little.\nIt has one guide.\n\n- [Guide](guide.md): how to do the thing\n"
GUIDE = "# Guide\n\n## First part\n\n![A picture](images/shot.png)\n"
NAV = [{"Home": "index.md"}, {"Users": [{"Guide": "guide.md"}]}]


def test_a_tiny_site_builds_with_its_llms_txt(tmp_path: Path) -> None:
    """llms.txt: title, summary, the landing page's first paragraph, then the navigation's sections with the
    landing page's descriptions, linking the Markdown copies of the pages."""
    config = _tiny_site(tmp_path, {"index.md": LANDING, "guide.md": GUIDE}, NAV, ("shot.png",))
    done = mkdocs_build(config, tmp_path / "site")
    assert done.returncode == 0, warnings_of(done)
    assert (tmp_path / "site" / "llms.txt").read_text(encoding="utf-8") == (
        "# Tiny\n\n> A tiny site for testing the hooks.\n\nA site about very little. It has one guide.\n\n"
        "## Users\n\n- [Guide](guide.md): how to do the thing\n")
    assert (tmp_path / "site" / "guide.md").read_text(encoding="utf-8") == GUIDE


@pytest.mark.parametrize(("pages", "pictures", "problem"), [
    ({"index.md": "# Tiny\n\nNo list.\n", "guide.md": GUIDE}, ("shot.png",), "index.md does not describe guide.md"),
    ({"index.md": LANDING, "guide.md": "# Guide\n"}, ("shot.png",), "docs/images/shot.png is not shown by any page"),
    ({"index.md": LANDING, "guide.md": "# Guide\n\n[x](index.md#nowhere)\n"}, (), "does not contain an anchor"),
    ({"index.md": LANDING, "guide.md": "# Guide\n\n[x](missing.md)\n"}, (), "not found among documentation files"),
], ids=["undescribed-page", "unshown-picture", "broken-anchor", "broken-link"])
def test_a_problem_fails_the_strict_build(tmp_path: Path, pages: dict, pictures: tuple, problem: str) -> None:
    """Each problem is a warning, and the strict build fails on it."""
    config = _tiny_site(tmp_path, pages, NAV, pictures)
    done = mkdocs_build(config, tmp_path / "site")
    assert done.returncode != 0
    assert any(problem in line for line in warnings_of(done)), warnings_of(done)


def test_the_reference_page_takes_public_names_only(tmp_path: Path) -> None:
    """A reference entry under an internal module path fails the build."""
    pages = {"index.md": LANDING.replace("(guide.md)", "(reference.md)"),
             "reference.md": "# Reference\n\n::: emberbench.sim.suite.Suite\n"}
    config = _tiny_site(tmp_path, pages, [{"Home": "index.md"}, {"Users": [{"Reference": "reference.md"}]}])
    done = mkdocs_build(config, tmp_path / "site")
    assert done.returncode != 0
    assert any("'::: emberbench.sim.suite.Suite' is not a public name" in line for line in warnings_of(done))


def test_complete_reference_appends_what_is_missing(hooks: ModuleType) -> None:
    """Names of ``__all__`` the page lacks are appended in ``__all__`` order; duplicates are problems."""
    text, problems = hooks.complete_reference("# R\n\n::: emberbench.b\n", ["a", "b", "c"])
    assert problems == []
    assert text.endswith("## More public names\n\n::: emberbench.a\n\n::: emberbench.c\n")
    _, problems = hooks.complete_reference("::: emberbench.a\n\n::: emberbench.a\n::: os.path\n", ["a"])
    assert problems == ["reference.md: emberbench.a is documented twice",
                        "reference.md: '::: os.path' is not a public name (emberbench.NAME for NAME in "
                        "emberbench.__all__)"]


def test_the_public_names_are_those_of_all(hooks: ModuleType) -> None:
    """The reference documents ``emberbench.__all__`` without the version string."""
    assert hooks.public_names() == [name for name in emberbench.__all__ if name != "__version__"]


def test_the_griffe_extension_places_every_public_name() -> None:
    """With the extension, griffe knows ``emberbench.NAME`` for every public name, as an alias of the module
    that defines it (lazy exports are invisible to static analysis without it)."""
    require_docs_tools()
    import griffe

    init = ROOT / "emberbench" / "__init__.py"
    plain = griffe.visit("emberbench", filepath=init, code=init.read_text(encoding="utf-8"))
    assert "Suite" not in plain.members  # static analysis alone cannot see the lazy exports
    package = griffe.load("emberbench", search_paths=[str(ROOT)],
                          extensions=griffe.load_extensions(f"{EXTENSION}:PublicAPI"))
    for name in emberbench.__all__:
        if name == "__version__":
            continue
        member = package[name]
        assert member.is_alias and member.target_path != f"emberbench.{name}", name
        target = member.final_target
        assert not target.is_alias and target.name == name, name
        assert target.docstring or target.is_attribute, f"{name} has no docstring"  # type aliases have none
        defined_in = getattr(getattr(emberbench, name), "__module__", "")
        if defined_in.startswith("emberbench."):  # classes and functions say where they live
            assert target.parent.path == defined_in, name
