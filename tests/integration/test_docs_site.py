"""The documentation site: ``mkdocs build --strict`` of mkdocs.yml, built once into a temporary folder.

The build fails on any warning: a broken link or anchor, a page outside the
navigation, a reference entry that is not a public name, a page the landing
page does not describe, a screenshot no page shows. These tests then check
what the build produced: the API reference covers exactly
``emberbench.__all__``, ``llms.txt`` follows the navigation, the browser
tests' screenshots are on the site, and no page loads anything from the
network.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import emberbench
from tests.docs_support import ROOT, mkdocs_build, require_docs_tools, warnings_of

pytestmark = pytest.mark.docs

IMAGES = ROOT / "docs" / "images"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:  # noqa: ANN001
    """The site built from the repository's mkdocs.yml (strict)."""
    require_docs_tools()
    folder = tmp_path_factory.mktemp("docs-site") / "site"
    done = mkdocs_build(ROOT / "mkdocs.yml", folder)
    if done.returncode != 0:
        problems = "\n".join(warnings_of(done)) or (done.stdout + done.stderr)[-3000:]
        pytest.fail(f"mkdocs build --strict failed:\n{problems}", pytrace=False)
    return folder


def _nav() -> list[tuple[str, list[tuple[str, str]]]]:
    """The navigation sections of mkdocs.yml: (title, [(page title, source file)])."""
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    sections = []
    for item in config["nav"]:
        ((title, value),) = item.items()
        if isinstance(value, list):
            sections.append((title, [next(iter(page.items())) for page in value]))
    return sections


def test_every_doc_page_is_in_the_navigation(site: Path) -> None:
    """Each docs/*.md page is built and reachable from the navigation (grouped by reader)."""
    pages = {path.name for path in (ROOT / "docs").glob("*.md")}
    in_nav = {source for _, links in _nav() for _, source in links} | {"index.md"}
    assert pages == in_nav
    assert [title for title, _ in _nav()] == ["Users", "Contracts and formats", "Operators", "Contributors"]
    for page in pages:
        assert (site / page.replace(".md", ".html")).is_file(), page


def test_reference_documents_exactly_the_public_api(site: Path) -> None:
    """The API reference has one entry per name of ``emberbench.__all__``, each under its public name."""
    html = (site / "reference.html").read_text(encoding="utf-8")
    entries = set(re.findall(r'<h[23] id="emberbench\.(\w+)" class="doc doc-heading"', html))
    assert entries == set(emberbench.__all__) - {"__version__"}
    headings = re.findall(r'id="(emberbench(?:\.\w+)+)" class="doc doc-heading"', html)
    assert headings and all(h.split(".")[1] in entries for h in headings), "an entry under an internal path"


def test_llms_txt_follows_the_navigation(site: Path) -> None:
    """llms.txt: the site's title and summary, then one section per navigation section, one described link per
    page, each link leading to a file of the site."""
    lines = (site / "llms.txt").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "# EMBERBench"
    assert lines[2].startswith("> ") and len(lines[2]) > 40
    sections: list[tuple[str, list[tuple[str, str]]]] = []
    for line in lines[3:]:
        if line.startswith("## "):
            sections.append((line[3:], []))
        elif line.startswith("- "):
            match = re.fullmatch(r"- \[([^\]]+)\]\(([^)]+)\): (\S.*)", line)
            assert match, line
            title, target, _ = match.groups()
            assert (site / target).is_file(), target
            sections[-1][1].append((title, target.replace(".html", ".md")))
        else:
            assert not line.startswith("#"), line
    assert sections == _nav()


def test_markdown_copies_are_the_sources(site: Path) -> None:
    """The Markdown pages llms.txt links to are the docs sources, byte for byte."""
    for title, links in _nav():
        for _, source in links:
            copy = site / source
            if source != "reference.md":
                assert copy.read_bytes() == (ROOT / "docs" / source).read_bytes(), (title, source)


def test_the_browser_tests_screenshots_are_shown(site: Path) -> None:
    """Every picture in docs/images (tests/integration/test_browser.py writes them) is on a page of the site."""
    pictures = sorted(path.name for path in IMAGES.iterdir() if path.is_file())
    assert {"viewer.png", "report.png"} <= set(pictures)
    html = " ".join(page.read_text(encoding="utf-8") for page in site.glob("*.html"))
    for name in pictures:
        assert (site / "images" / name).read_bytes() == (IMAGES / name).read_bytes()
        assert f'src="images/{name}"' in html, name


def test_pages_load_nothing_from_the_network(site: Path) -> None:
    """No page pulls a script, stylesheet, font or image from another host (theme.font is false)."""
    remote = re.compile(r'<(?:script|img|iframe)\b[^>]*\bsrc="(?:https?:)?//|<link\b[^>]*\bhref="(?:https?:)?//', re.I)
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert not remote.search(text), (page.name, remote.search(text).group(0))
        assert "fonts.googleapis.com" not in text and "fonts.gstatic.com" not in text, page.name
