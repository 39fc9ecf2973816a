"""The viewer page and the report in real headless Chromium (one browser session for this module).

Needs Debian's ``chromium`` and ``chromium-driver`` (scripts/test.sh installs
them when it can) and selenium (the test extra). Where they are missing the
tests skip and say why; with ``EMBERBENCH_REQUIRE_BROWSER=1`` (CI) they fail
instead, so CI cannot pass without running them.

Set ``EMBERBENCH_WRITE_SCREENSHOTS=1`` to also copy the screenshots into
docs/images/ (how the pictures of docs/viewer.md are made).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from tests.viewer_data import make_results

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("EMBERBENCH_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("EMBERBENCH_CHROMEDRIVER", "/usr/bin/chromedriver")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-quic", "--window-size=1100,820")

pytestmark = pytest.mark.browser


def _missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    for path in (CHROMIUM, CHROMEDRIVER):
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            return f"{path} is missing (apt-get install chromium chromium-driver; scripts/test.sh does it as root)"
    return None


@pytest.fixture(scope="module")
def driver():  # noqa: ANN201
    """One headless Chromium for the module, with its console log captured."""
    reason = _missing()
    if reason:
        if os.environ.get("EMBERBENCH_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser tests are required here but cannot run: {reason}")
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="emberbench-chromium-")
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield browser
    finally:
        browser.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def site(tmp_path_factory, suite):  # noqa: ANN001
    """A viewer page (two embedded episodes of six) and a report of two results."""
    from emberbench.viewer import view_page
    from emberbench.viewer.report import build_report

    folder = tmp_path_factory.mktemp("site")
    results = make_results(folder, suite, policies=("stay", "greedy"))
    page = folder / "greedy.view.html"
    page.write_bytes(view_page(results["greedy"], suite, embed=3, page_path=page))
    report = build_report([results["stay"], results["greedy"]], suite, folder / "report", resamples=200)
    # greedy on route invalidation, seed 1: five people die on one cell
    from emberbench.policies.spec import resolve_policy
    from emberbench.records.episode import run_episode

    factory = resolve_policy("greedy")
    record = run_episode(suite.scenario("v1-pub-10-route-invalidation"), 1, factory())
    (folder / "stacked.json").write_bytes(record.canonical_bytes() + b"\n")
    stacked = folder / "stacked.view.html"
    stacked.write_bytes(view_page(folder / "stacked.json", suite))
    return {"page": page, "report": report.folder / "index.html", "stacked": stacked, "stacked_record": record}


@pytest.fixture(autouse=True)
def _window(driver):  # noqa: ANN001, ANN202
    """Every test starts at the module's window size (a test may emulate another viewport)."""
    yield
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def _errors(driver) -> list[dict]:  # noqa: ANN001
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def _wait(predicate, timeout: float = 5.0) -> bool:  # noqa: ANN001
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def _screenshot(driver, name: str, tmp_path: Path) -> Path:  # noqa: ANN001
    """Save a screenshot, check it is not blank, and copy it to docs/images when asked."""
    from PIL import Image

    path = tmp_path / name
    driver.save_screenshot(str(path))
    with Image.open(path) as image:
        small = image.convert("RGB").resize((image.width // 4, image.height // 4))
        colours = small.getcolors(maxcolors=1 << 16) or []
    assert len(colours) > 20, f"{name} looks blank ({len(colours)} colours)"
    if os.environ.get("EMBERBENCH_WRITE_SCREENSHOTS") == "1":
        with Image.open(path) as image:
            target = ROOT / "docs" / "images" / name
            target.parent.mkdir(exist_ok=True)
            image.convert("P", palette=Image.Palette.ADAPTIVE, colors=64).save(target, optimize=True)
    return path


def _step(driver) -> int:  # noqa: ANN001
    return int(driver.find_element("id", "step").text)


def test_viewer_plays_and_changes_the_canvas(driver, site, tmp_path) -> None:  # noqa: ANN001
    """Play advances the step counter and changes the canvas; no console errors; first frame within 1 s."""
    driver.get(site["page"].as_uri())
    assert driver.execute_script("return window.emberbenchViewer.firstFrameMs") < 1000
    before = driver.execute_script("return document.getElementById('grid').toDataURL()")
    assert _step(driver) == 0
    driver.find_element("id", "play").click()
    assert _wait(lambda: _step(driver) >= 3), "the step counter did not advance"
    driver.find_element("id", "play").click()
    after = driver.execute_script("return document.getElementById('grid').toDataURL()")
    assert after != before
    assert _errors(driver) == []
    _screenshot(driver, "viewer.png", tmp_path)


def test_keyboard_and_slider(driver, site) -> None:  # noqa: ANN001
    """Right/Left step, End jumps to the last step, Home back to 0."""
    from selenium.webdriver.common.keys import Keys

    driver.get(site["page"].as_uri())
    body = driver.find_element("tag name", "body")
    body.send_keys(Keys.ARROW_RIGHT, Keys.ARROW_RIGHT)
    assert _step(driver) == 2
    body.send_keys(Keys.END)
    assert _step(driver) == int(driver.find_element("id", "steps").text)
    body.send_keys(Keys.HOME)
    assert _step(driver) == 0
    assert _errors(driver) == []


def test_picker_loads_another_episode(driver, site) -> None:  # noqa: ANN001
    """Clicking another embedded row loads that episode; a listed but absent one shows the command."""
    driver.get(site["page"].as_uri())
    first = driver.execute_script("return window.emberbenchViewer.episodeIndex()")
    embedded = driver.find_elements("css selector", "#episodes tbody tr:not(.absent)")
    other = next(tr for tr in embedded if int(tr.get_attribute("data-index")) != first)
    target = int(other.get_attribute("data-index"))
    other.click()
    assert driver.execute_script("return window.emberbenchViewer.episodeIndex()") == target
    assert driver.current_url.endswith(f"#episode={target}")
    absent = driver.find_elements("css selector", "#episodes tbody tr.absent")
    assert absent, "with --embed 3 some of the six episodes are not embedded"
    absent[0].click()
    notice = driver.find_element("id", "notice")
    assert notice.is_displayed() and "emberbench view greedy.json --episode" in notice.text
    assert _errors(driver) == []


def test_report_orders_and_links_to_the_viewer(driver, site, tmp_path) -> None:  # noqa: ANN001
    """The report loads cleanly, reorders its leaderboard by a chosen metric, and its links open a viewer."""
    from selenium.webdriver.support.ui import Select

    _viewport(driver, 1280)
    driver.get(site["report"].as_uri())
    names = lambda: [a.text for a in driver.find_elements(  # noqa: E731
        "css selector", "#leaderboard .boards > .scroll table tbody th a")]
    assert names() == ["stay", "greedy"]
    Select(driver.find_element("id", "order-by")).select_by_value("evacuated_rate")
    assert names() == ["greedy", "stay"]
    assert _errors(driver) == []
    Select(driver.find_element("id", "order-by")).select_by_value("")
    driver.execute_script("window.scrollTo(0, 0)")
    _screenshot(driver, "report.png", tmp_path)
    driver.find_element("link text", "greedy").click()
    assert _wait(lambda: driver.execute_script("return !!window.emberbenchViewer"))
    assert _errors(driver) == []


def _viewport(driver, width: int, height: int = 900) -> None:  # noqa: ANN001
    """Make the page's viewport exactly ``width`` CSS pixels wide."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})


_OVERFLOW = """
var doc = document.documentElement, out = {page: doc.scrollWidth - doc.clientWidth, boxes: {}};
arguments[0].forEach(function (sel) {
  var el = document.querySelector(sel), r = el.getBoundingClientRect();
  out.boxes[sel] = {right: r.right - doc.clientWidth, left: r.left, inner: el.scrollWidth - el.clientWidth};
});
return out;
"""


@pytest.mark.parametrize("width", [1280, 800])
def test_report_fits_the_screen(driver, site, width) -> None:  # noqa: ANN001
    """Issue 27: the report opens with its summary, and at 1280 px neither the page nor the summary and the
    leaderboard (its default metric group) scroll sideways; at 800 px only the wide tables scroll, inside
    their own box. No console errors."""
    _viewport(driver, width)
    driver.get(site["report"].as_uri())
    headings = [h.text for h in driver.find_elements("css selector", "section > h2, section summary h2")]
    assert headings[:2] == ["Summary", "Leaderboard"] and headings[-1] == "Built from"
    board = "#leaderboard .boards > .scroll"
    found = driver.execute_script(_OVERFLOW, ["#summary", "#leaderboard", board])
    assert found["page"] <= 0, f"the page scrolls sideways by {found['page']} px at {width} px"
    for sel, box in found["boxes"].items():
        assert box["right"] <= 0 and box["left"] >= 0, (width, sel, box)
        if width == 1280:
            assert box["inner"] <= 0, f"{sel} scrolls sideways by {box['inner']} px at 1280 px"
    assert _errors(driver) == []


def test_paired_bar_labels_read_in_order(driver, site) -> None:  # noqa: ANN001
    """Issue 27 (defect 1), as drawn: in every paired bar the green, grey and red segments run left to right
    in the order of the chart's title, and the numbers beside the bar follow the same order with their words."""
    _viewport(driver, 1280)
    driver.get(site["report"].as_uri())
    charts = driver.execute_script("""
      return Array.prototype.map.call(document.querySelectorAll("svg"), function (svg) {
        var rows = svg.querySelectorAll("g.wlt-row");
        if (!rows.length) { return null; }
        return {title: svg.getAttribute("aria-label"), rows: Array.prototype.map.call(rows, function (g) {
          var seg = {};
          ["better", "tied", "worse"].forEach(function (w) {
            var r = g.querySelector("rect.wlt-" + w), box = r.getBoundingClientRect();
            seg[w] = {left: box.left, right: box.right, count: Number(r.dataset.count)};
          });
          return {segments: seg, text: g.querySelector("text.wlt-numbers").textContent};
        })};
      }).filter(function (c) { return c; });""")
    assert len(charts) == 1
    for chart in charts:
        import re

        words = re.search(r"paired episodes (\w+) / (\w+) / (\w+)", chart["title"]).groups()
        assert words == ("better", "tied", "worse")
        for row in chart["rows"]:
            seg = row["segments"]
            assert seg["better"]["right"] <= seg["tied"]["left"] + 0.5
            assert seg["tied"]["right"] <= seg["worse"]["left"] + 0.5
            said = re.findall(r"(\d+) (\w+)", row["text"])
            assert [w for _, w in said] == list(words)
            assert [int(n) for n, _ in said] == [seg[w]["count"] for w in words]
    assert _errors(driver) == []


def test_opening_an_episode_that_is_not_embedded(driver, site) -> None:  # noqa: ANN001
    """Issue 27 (defect 2): #episode=N for a listed episode the page does not embed draws no map at all (it used
    to draw episode 0's under the banner) and says it is not embedded, with the command that makes its page;
    picking an embedded episode brings the map back."""
    driver.get(site["page"].as_uri())
    absent = int(driver.find_elements("css selector", "#episodes tbody tr.absent")[0].get_attribute("data-index"))
    driver.get(site["page"].as_uri() + f"#episode={absent}")
    driver.refresh()
    assert driver.execute_script("return window.emberbenchViewer.episodeIndex()") is None
    assert driver.execute_script("return window.emberbenchViewer.absentIndex()") == absent
    assert not driver.find_element("id", "grid").is_displayed()
    notice = driver.find_element("id", "notice")
    assert notice.is_displayed() and f"Episode {absent} " in notice.text and "not embedded" in notice.text
    assert f"emberbench view greedy.json --episode {absent}" in notice.text
    link = notice.find_element("tag name", "a").get_attribute("href")
    assert link.endswith(f"greedy.episode-{absent}.view.html")
    embedded = driver.find_elements("css selector", "#episodes tbody tr:not(.absent)")[0]
    index = int(embedded.get_attribute("data-index"))
    embedded.click()
    assert driver.execute_script("return window.emberbenchViewer.episodeIndex()") == index
    assert driver.find_element("id", "grid").is_displayed() and not notice.is_displayed()
    assert _errors(driver) == []


_WRAPPED = """
var out = [];
document.querySelectorAll("#panel td, #panel th").forEach(function (cell) {
  if (!cell.textContent) { return; }
  var range = document.createRange(); range.selectNodeContents(cell);
  var tops = {};
  Array.prototype.forEach.call(range.getClientRects(), function (r) {
    if (r.width > 0) { tops[Math.round(r.top)] = 1; }
  });
  if (Object.keys(tops).length > 1) { out.push(cell.textContent); }
});
return out;
"""


@pytest.mark.parametrize("width", [1280, 800])
def test_viewer_panel_keeps_words_and_numbers_whole(driver, site, width) -> None:  # noqa: ANN001
    """Issue 27: no cell of the side panel wraps (no metric name or number broken over two lines), the page does
    not scroll sideways, and a decimal shows its exact fraction on hover."""
    _viewport(driver, width)
    driver.get(site["page"].as_uri())
    assert driver.execute_script(_WRAPPED) == []
    assert driver.execute_script(_OVERFLOW, ["#panel"])["page"] <= 0
    exact = driver.execute_script("""return Array.prototype.map.call(document.querySelectorAll("#metrics td.exact"),
        function (td) { return [td.textContent, td.title]; });""")
    assert exact and all(title.startswith("exact: ") and "/" in title for _, title in exact)
    for shown, title in exact:
        num, den = (int(x) for x in title[len("exact: "):].split("/"))
        assert abs(float(shown) - num / den) <= 5e-4 * max(1.0, abs(num / den))
    assert _errors(driver) == []


def test_stacked_casualties_show_how_many(driver, site, suite) -> None:  # noqa: ANN001
    """Issue 27: casualties that fell on one cell are counted on it (drawn, listed in the panel, said on hover),
    and the counts are the ones the simulator's replay gives."""
    from collections import Counter

    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    from emberbench.viewer.frames import casualty_cells

    expected = {cell: n for cell, n in Counter(casualty_cells(suite.scenario("v1-pub-10-route-invalidation"),
                                                              site["stacked_record"])).items() if n > 1}
    assert expected, "the episode must hold a cell with several casualties"
    driver.get(site["stacked"].as_uri())
    driver.find_element("tag name", "body").send_keys(Keys.END)
    stacks = {(r, c): n for r, c, n in driver.execute_script("return window.emberbenchViewer.stacks()")}
    assert {cell: stacks.get(cell) for cell in expected} == expected
    panel = driver.find_element("id", "stacks").text
    (row, col), count = next(iter(expected.items()))
    assert f"{count} at ({row}, {col})" in panel
    cell = driver.execute_script("return window.emberbenchViewer.cellSize()")
    grid = driver.find_element("id", "grid")
    ActionChains(driver).move_to_element_with_offset(
        grid, int((col + 0.5) * cell - grid.size["width"] / 2), int((row + 0.5) * cell - grid.size["height"] / 2)
    ).perform()
    assert grid.get_attribute("title") == f"{count} people on cell ({row}, {col})"
    assert _errors(driver) == []
