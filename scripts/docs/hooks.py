"""MkDocs hooks for the EMBERBench site (mkdocs.yml names this file under ``hooks:``).

- The API reference page (``reference.md``) may document public names only:
  every ``::: emberbench.NAME`` must name a member of ``emberbench.__all__``,
  and names of ``__all__`` the page does not list are appended to it, so the
  reference always covers the whole public API.
- ``llms.txt`` (the llmstxt.org format) is written into the site from the
  navigation: the site's name and description, then one section per
  navigation section with a link per page. Each link's description is the
  text that follows the page's link on the landing page (``index.md``); a
  page the landing page does not describe is a warning (so ``--strict``
  fails). The Markdown source of every page is copied beside its HTML page,
  and ``llms.txt`` links to it.
- Every picture in ``docs/images/`` (the browser tests' screenshots) must be
  shown by some page.

Problems are logged as warnings, which make ``mkdocs build --strict`` fail.
"""

from __future__ import annotations

import importlib
import logging
import re
import shutil
from pathlib import Path, PurePosixPath
from typing import Any

from mkdocs.structure.nav import Navigation, Section
from mkdocs.structure.pages import Page

PACKAGE = "emberbench"
REFERENCE = "reference.md"
LANDING = "index.md"
IMAGES = "images"
_log = logging.getLogger("mkdocs.hooks.emberbench")
_DIRECTIVE = re.compile(r"^:::\s+(\S+)", re.M)
_IMAGE = re.compile(r"<img\b[^>]*?\bsrc=\"([^\"]+)\"")
_HEADING = re.compile(r"^#\s+(.+)$", re.M)

_state: dict[str, Any] = {"nav": None, "images": set()}


def public_names() -> list[str]:
    """The documented public names: ``emberbench.__all__`` without ``__version__``."""
    return [name for name in importlib.import_module(PACKAGE).__all__ if name != "__version__"]


def complete_reference(markdown: str, names: list[str]) -> tuple[str, list[str]]:
    """Check the page's ``:::`` identifiers against ``names``; append the names it lacks.

    Returns the completed Markdown and the problems found (identifiers that are
    not ``emberbench.NAME`` for a public NAME, or that appear twice).
    """
    problems, seen = [], set()
    for identifier in _DIRECTIVE.findall(markdown):
        package, _, name = identifier.partition(".")
        if package != PACKAGE or name not in names:
            problems.append(f"{REFERENCE}: '::: {identifier}' is not a public name ({PACKAGE}.NAME for NAME in "
                            f"{PACKAGE}.__all__)")
        elif name in seen:
            problems.append(f"{REFERENCE}: {identifier} is documented twice")
        seen.add(name)
    missing = [name for name in names if name not in seen]
    if missing:
        _log.info("%s: appending %d public names it does not list: %s", REFERENCE, len(missing), ", ".join(missing))
        blocks = "\n\n".join(f"::: {PACKAGE}.{name}" for name in missing)
        markdown = f"{markdown.rstrip()}\n\n## More public names\n\n{blocks}\n"
    return markdown, problems


def on_page_markdown(markdown: str, page: Page, **kwargs: Any) -> str:
    """Complete the reference page."""
    if page.file.src_uri == REFERENCE:
        markdown, problems = complete_reference(markdown, public_names())
        for problem in problems:
            _log.warning(problem)
    return markdown


def on_page_content(html: str, page: Page, **kwargs: Any) -> str:
    """Note the pictures the page shows (``src`` is relative to the page's URL)."""
    url = page.url or "index.html"
    base = PurePosixPath(url) if url.endswith("/") else PurePosixPath(url).parent
    for target in _IMAGE.findall(html):
        if ":" not in target and not target.startswith("/"):
            _state["images"].add(_normalise(base / target))
    return html


def _normalise(path: PurePosixPath) -> str:
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


def on_pre_build(**kwargs: Any) -> None:
    """Start each build (``mkdocs serve`` rebuilds) with nothing noted."""
    _state.update(nav=None, images=set())


def on_nav(nav: Navigation, **kwargs: Any) -> Navigation:
    """Keep the navigation for ``llms.txt``."""
    _state["nav"] = nav
    return nav


def descriptions(landing: str) -> dict[str, str]:
    """Page source path -> the text after its link in a list item of the landing page.

    A list item ``- [Title](page.md): what it covers`` gives ``page.md`` the
    description ``what it covers``.
    """
    found = {}
    for match in re.finditer(r"^[-*]\s+\[[^\]]+\]\(([^)#\s]+\.md)\)\s*[:—-]\s*(.+)$", landing, re.M):
        found.setdefault(match.group(1), match.group(2).strip())
    return found


def llms_txt(title: str, summary: str, details: str, sections: list[tuple[str, list[tuple[str, str, str]]]]) -> str:
    """The llms.txt text: ``# title``, ``> summary``, details, then ``## section`` lists of links."""
    lines = [f"# {title}", "", f"> {summary}", ""]
    if details:
        lines += [details, ""]
    for name, links in sections:
        lines += [f"## {name}", ""]
        lines += [f"- [{text}]({url}): {about}" for text, url, about in links]
        lines.append("")
    return "\n".join(lines)


def _first_paragraph(markdown: str) -> str:
    """The first paragraph after the page's top heading, joined into one line."""
    body = _HEADING.split(markdown, maxsplit=1)[-1]
    for block in re.split(r"\n\s*\n", body):
        text = " ".join(block.split())
        if text and not text.startswith(("#", "|", "!", "<", "```", "-", "*")):
            return text
    return ""


def _sections(nav: Navigation, about: dict[str, str]) -> list[tuple[str, list[tuple[str, str, str]]]]:
    sections = []
    for item in nav.items:
        if not isinstance(item, Section):
            continue  # the landing page itself
        links = []
        for child in item.children:
            if not isinstance(child, Page):
                _log.warning("llms.txt: nested navigation under %r is not supported", item.title)
                continue
            src = child.file.src_uri
            if src not in about:
                _log.warning("llms.txt: %s does not describe %s (add '- [Title](%s): what it covers')",
                             LANDING, src, src)
            generated = src == REFERENCE  # its Markdown is directives, not text: link the HTML page
            links.append((child.title, child.url if generated else src, about.get(src, "")))
        sections.append((item.title, links))
    return sections


def on_post_build(config: Any, **kwargs: Any) -> None:
    """Write llms.txt and the Markdown copies of the pages; check every picture is shown."""
    docs, site = Path(config["docs_dir"]), Path(config["site_dir"])
    nav: Navigation | None = _state["nav"]
    if nav is None:
        _log.warning("llms.txt: no navigation was built")
        return
    landing = (docs / LANDING).read_text(encoding="utf-8")
    sections = _sections(nav, descriptions(landing))
    for page in nav.pages:
        src = page.file.src_uri
        if src != REFERENCE:
            target = site / src
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(docs / src, target)
    text = llms_txt(config["site_name"], config["site_description"] or "", _first_paragraph(landing), sections)
    (site / "llms.txt").write_text(text, encoding="utf-8")
    pictures = sorted(p.relative_to(docs).as_posix() for p in (docs / IMAGES).glob("*") if p.is_file())
    for picture in pictures:
        if picture not in _state["images"]:
            _log.warning("%s is not shown by any page", f"docs/{picture}")
