"""End to end: the HTML leaderboard in headless Chromium (Debian's chromium + chromium-driver,
driven by Selenium): sorting, the corpus and stratum selectors, the plots, no console errors,
and names that look like markup shown as text.

.ci/run installs Chromium; outside CI the test is skipped when it is absent."""

import contextlib
import json
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
    # the packaged demo is shown only when named (with a real corpus beside it)
    leaderboard("--no-significance", "--corpus", "demo", "mini", cwd=root)
    return root / "leaderboard" / "index.html"


# Runs before the page's own script: records dialogs instead of blocking on them, and every
# error event (script errors, and load failures of injected elements such as <img src=x>).
_WATCH = """
window.__alerts = []; window.__errors = [];
['alert', 'confirm', 'prompt'].forEach(f => {
  window[f] = m => { window.__alerts.push(f + ': ' + m); };
});
window.addEventListener('error', e => {
  window.__errors.push(e.message || ('load failed: ' + (e.target && e.target.outerHTML)));
}, true);
"""


@contextlib.contextmanager
def _chromium(page):
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
    try:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _WATCH})
        driver.get(page.as_uri())
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def browser(page):
    with _chromium(page) as driver:
        yield driver


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


# Stored strings that look like markup; each must reach the page as literal text.
IMG = "<img src=x onerror=alert(1)>"
CLOSE = "</script><script>alert(1)</script>"
COMMENT = "<!--<script"  # unescaped inside a <script>, it swallowed the page's script
QUOTES = "\"'&"


def _hydra(text: str) -> str:
    """`text` as a quoted Hydra override value."""
    return '"' + text.replace('"', '\\"') + '"'


@pytest.fixture(scope="module")
def hostile_page(tmp_path_factory):
    """Cells whose display names, corpus, hop label and cluster labels are hostile strings."""
    _need_browser()
    pytest.importorskip("selenium")
    root = tmp_path_factory.mktemp("hostile")
    harness("retriever=bm25", "corpus=demo", f"retriever.display_name={_hydra(IMG)}", cwd=root)
    harness(
        "retriever=bm25-simple", "corpus=demo", f"retriever.display_name={_hydra(CLOSE)}", cwd=root
    )
    # a copy of one cell that claims a hostile corpus, with a hostile hop and cluster labels
    results = root / "results"
    cell = results / "hostile" / "bm25-simple"
    shutil.copytree(results / "demo" / "bm25-simple", cell)
    doc = json.loads((cell / "metrics.json").read_text(encoding="utf-8"))
    doc["corpus"] = COMMENT
    res = doc["results"]
    res["hop"][QUOTES] = res["hop"].pop("4")
    res["cluster"] = {"0": res["overall"], "1": res["hop"]["1"]}
    doc["semantic"] = {"strata_file": "hostile.json", "min_queries": 1}
    (cell / "metrics.json").write_text(json.dumps(doc), encoding="utf-8")
    clusters = [
        {"id": 0, "n_chunks": 5, "n_queries": 48, "label": IMG + QUOTES},
        {"id": 1, "n_chunks": 3, "n_queries": 12, "label": COMMENT + "\u2028" + CLOSE},
    ]
    strata = results / "strata" / COMMENT / "hostile.json"
    strata.parent.mkdir(parents=True)
    strata.write_text(json.dumps({"clusters": clusters, "summary": {}}), encoding="utf-8")
    # the packaged demo is shown only when named (with a real corpus beside it)
    leaderboard("--no-significance", "--corpus", "demo", COMMENT, cwd=root)
    return root / "leaderboard" / "index.html"


@pytest.fixture(scope="module")
def hostile_browser(hostile_page):
    with _chromium(hostile_page) as driver:
        yield driver


def _text(element) -> str:
    return element.get_property("textContent")  # exact, unlike .text (rendered, trimmed)


def _options(driver, sel_id) -> dict[str, str]:
    from selenium.webdriver.common.by import By

    opts = driver.find_elements(By.CSS_SELECTOR, f"#{sel_id} option")
    return {o.get_property("value"): _text(o) for o in opts}


def _choose(driver, sel_id, value):
    """Select by index: Selenium's select_by_value cannot quote a value holding both quotes."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element(By.ID, sel_id)).select_by_index(
        list(_options(driver, sel_id)).index(value)
    )


def _labels(driver) -> list[str]:
    from selenium.webdriver.common.by import By

    return [_text(th) for th in driver.find_elements(By.CSS_SELECTOR, "#board tbody tr th")]


def test_hostile_names_show_as_text_and_break_nothing(hostile_browser):
    from selenium.webdriver.common.by import By

    driver = hostile_browser
    assert driver.execute_script("return window.__alerts") == []
    assert driver.execute_script("return window.__errors") == []
    # nothing was parsed out of the data: the page's two scripts, only the plots' images
    assert driver.execute_script("return document.scripts.length") == 2
    assert driver.find_elements(By.CSS_SELECTOR, "img:not(figure img)") == []

    # the selectors are populated and the table has its rows
    assert sorted(_options(driver, "corpus")) == sorted([COMMENT, "demo"])
    _choose(driver, "corpus", "demo")
    assert sorted(_labels(driver)) == sorted([IMG, CLOSE])
    _choose(driver, "corpus", COMMENT)
    assert _labels(driver) == [CLOSE]
    assert f"on {COMMENT}, stratum overall" in _text(driver.find_element(By.ID, "count"))
    strata = _options(driver, "stratum")
    assert strata[f"hop={QUOTES}"] == f"hop={QUOTES}"
    assert strata["cluster=0"] == f"cluster=0 \u00b7 {IMG}{QUOTES}"
    assert strata["cluster=1"] == f"cluster=1 \u00b7 {COMMENT}\u2028{CLOSE}"
    _choose(driver, "stratum", f"hop={QUOTES}")
    assert [r[1] for r in _rows(driver)] == ["12"]
    assert f"stratum hop={QUOTES}" in _text(driver.find_element(By.ID, "count"))
    driver.find_element(By.CSS_SELECTOR, "#board tbody details summary").click()
    prov = json.loads(_text(driver.find_element(By.CSS_SELECTOR, "#board tbody details pre")))
    assert prov["config"]["retriever"]["display_name"] == CLOSE

    # what Python wrote into the HTML: the problem line, the paper tables' titles and rows
    problems = _text(driver.find_element(By.CSS_SELECTOR, ".problems"))
    assert f"says {COMMENT}/bm25-simple but sits in hostile/bm25-simple" in problems
    titles = [_text(h) for h in driver.find_elements(By.TAG_NAME, "h3")]
    assert f"{COMMENT}: overall and by hop depth, @10 (%)" in titles
    paper = {_text(th) for th in driver.find_elements(By.CSS_SELECTOR, "table.paper th")}
    assert {IMG, CLOSE, COMMENT} <= paper

    assert driver.execute_script("return window.__alerts") == []
    assert driver.execute_script("return window.__errors") == []
    errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert errors == []
