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
    page.write_bytes(view_page(results["greedy"], suite, embed=3))
    report = build_report([results["stay"], results["greedy"]], suite, folder / "report", resamples=200)
    return {"page": page, "report": report.folder / "index.html"}


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

    driver.get(site["report"].as_uri())
    names = lambda: [a.text for a in driver.find_elements("css selector", "#leaderboard > table tbody th a")]  # noqa: E731
    assert names() == ["stay", "greedy"]
    Select(driver.find_element("id", "order-by")).select_by_value("evacuated_rate")
    assert names() == ["greedy", "stay"]
    assert _errors(driver) == []
    _screenshot(driver, "report.png", tmp_path)
    driver.find_element("link text", "greedy").click()
    assert _wait(lambda: driver.execute_script("return !!window.emberbenchViewer"))
    assert _errors(driver) == []
