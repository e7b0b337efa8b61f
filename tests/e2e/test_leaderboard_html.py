"""End to end: the HTML leaderboard in headless Chromium (Debian's chromium + chromium-driver,
driven by Selenium): sorting, the corpus and stratum selectors, the plots, no console errors.

.ci/run installs Chromium; outside CI the test is skipped when it is absent."""

import os
import re
import shutil

import pytest

from tests.conftest import write_redqa
from tests.helpers.cli import harness, leaderboard

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")


def _need_browser():
    if CHROMIUM and DRIVER:
        return
    why = "chromium and chromium-driver are needed (apt-get install chromium chromium-driver)"
    if os.environ.get("CI"):
        pytest.fail(why)  # CI installs them: a missing browser there is a real failure
    pytest.skip(why)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    _need_browser()
    pytest.importorskip("selenium")
    root = tmp_path_factory.mktemp("html")
    harness("-m", "retriever=bm25,bm25-simple", "corpus=demo", cwd=root)
    write_redqa(root / "mini.json")
    harness("retriever=bm25", "corpus=redqa", f"corpus.path={root / 'mini.json'}", cwd=root)
    leaderboard("--no-significance", cwd=root)
    return root / "leaderboard" / "index.html"


@pytest.fixture(scope="module")
def browser(page):
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
    ):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    driver.get(page.as_uri())
    yield driver
    driver.quit()


def _rows(driver):
    from selenium.webdriver.common.by import By

    out = []
    for tr in driver.find_elements(By.CSS_SELECTOR, "#board tbody tr"):
        cells = tr.find_elements(By.CSS_SELECTOR, "th, td")
        # a mean is followed by its interval: "61.46 [52.1, 70.3]"; keep the mean
        out.append([cells[0].text, *(c.text.split(" [")[0] for c in cells[1:])])
    return out


def _intervals(driver):
    from selenium.webdriver.common.by import By

    return [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#board tbody td .ci")]


def _header(driver):
    from selenium.webdriver.common.by import By

    return [
        th.text.rstrip(" ▲▼") for th in driver.find_elements(By.CSS_SELECTOR, "#board thead th")
    ]


def _select(driver, sel_id, value):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element(By.ID, sel_id)).select_by_value(value)


def test_table_selectors_sorting_plots_and_no_console_errors(browser):
    from selenium.webdriver.common.by import By

    driver = browser
    corpora = [
        o.get_attribute("value") for o in driver.find_elements(By.CSS_SELECTOR, "#corpus option")
    ]
    assert corpora == ["demo", "mini"]
    head = _header(driver)
    assert head[:2] == ["retriever", "n"] and "coverage@10" in head and head[-1] == "provenance"
    rows = _rows(driver)
    assert sorted(r[0] for r in rows) == ["BM25", "BM25 (simple)"]  # display names
    ci = _intervals(driver)  # every mean carries its 95% interval
    assert ci and all(re.fullmatch(r"\[\d+\.\d, \d+\.\d\]", c) for c in ci), ci[:3]
    assert all(r[1] == "48" for r in rows)

    # sorting: click coverage@10 (descending first), then again (ascending)
    col = head.index("coverage@10")
    driver.find_elements(By.CSS_SELECTOR, "#board thead th")[col].click()
    down = [float(r[col]) for r in _rows(driver)]
    assert down == sorted(down, reverse=True)
    driver.find_elements(By.CSS_SELECTOR, "#board thead th")[col].click()
    up = [float(r[col]) for r in _rows(driver)]
    assert up == sorted(up) and up != down
    driver.find_elements(By.CSS_SELECTOR, "#board thead th")[0].click()  # by name, A→Z
    assert [r[0] for r in _rows(driver)] == ["BM25", "BM25 (simple)"]

    # the stratum selector: hop=4 has 12 demo queries
    strata = [
        o.get_attribute("value") for o in driver.find_elements(By.CSS_SELECTOR, "#stratum option")
    ]
    assert strata[:5] == ["overall", "hop=1", "hop=2", "hop=3", "hop=4"]
    _select(driver, "stratum", "hop=4")
    assert all(r[1] == "12" for r in _rows(driver))
    assert "stratum hop=4" in driver.find_element(By.ID, "count").text

    # the corpus selector: mini has one cell with 2 queries
    _select(driver, "corpus", "mini")
    rows = _rows(driver)
    assert [r[0] for r in rows] == ["BM25"]
    assert "on mini" in driver.find_element(By.ID, "count").text

    # provenance opens, with the config and the data checksum
    driver.find_element(By.CSS_SELECTOR, "#board tbody details summary").click()
    prov = driver.find_element(By.CSS_SELECTOR, "#board tbody details pre").text
    assert '"checksum": "sha256:' in prov and '"config"' in prov and '"versions"' in prov

    # every plot is inline and decodes
    imgs = driver.find_elements(By.CSS_SELECTOR, "figure img")
    assert imgs and all(i.get_attribute("src").startswith("data:image/png;base64,") for i in imgs)
    assert all(driver.execute_script("return arguments[0].naturalWidth", i) > 100 for i in imgs)

    errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert errors == []
