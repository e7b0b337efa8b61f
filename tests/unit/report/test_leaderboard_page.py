"""The HTML leaderboard page without a browser: stored strings that look like markup cannot
end or comment out the page's scripts, and the embedded data parses back unchanged."""

import json
import re
from pathlib import Path

import pytest

from harness.report.leaderboard.collect import Board
from harness.report.leaderboard.html import _data, page, script_json
from harness.report.leaderboard.tables import Options, hops
from tests.helpers.cells import cell

HOSTILE = [
    "<img src=x onerror=alert(1)>",
    "</script><script>alert(1)</script>",
    "<!--<script",
    "\"'&",
    "</SCRIPT >",
    "-->",
    "<![CDATA[",
    "a\u2028b\u2029c",
    "\\u003c\\</script",  # backslashes next to what gets escaped
    "&lt;&amp;",
]
DATA_BLOCK = re.compile(r'<script type="application/json" id="board-data">(.*?)</script>', re.S)


@pytest.mark.parametrize("text", HOSTILE)
def test_script_json_is_inert_and_round_trips(text):
    out = script_json({"s": text, text: [text]})
    assert not set(out) & set("<>&\u2028\u2029")
    assert json.loads(out) == {"s": text, text: [text]}


def _board() -> Board:
    """One corpus and one cell where every string the page shows is hostile."""
    corpus, label, hop, cluster = HOSTILE[2], HOSTILE[0], HOSTILE[3], HOSTILE[1]
    summary = {"n": 2, "mean": {"coverage@10": 0.5, "perfrecall@10": 0.25}}
    doc = {
        "display_name": label,
        "metrics": ["coverage@10", "perfrecall@10"],
        "results": {"overall": summary, "hop": {hop: summary}, "cluster": {"0": summary}},
        "provenance": {"git": {"commit": HOSTILE[5]}},
        "config": {"note": HOSTILE[7]},
    }
    board = Board(Path("/results") / HOSTILE[6])
    board.cells = {corpus: {"bm25": cell(corpus, "bm25", doc, path="/x")}}
    board.strata = {corpus: {"clusters": [{"id": 0, "label": cluster}]}}
    board.problems = [f"{corpus}: {label} {HOSTILE[1]}"]
    return board


def test_page_data_block_has_no_markup_and_parses_back():
    board = _board()
    corpora = board.corpora
    text = page(board, corpora, [hops(board, corpora[0], Options(), sig=None)], [])
    blocks = DATA_BLOCK.findall(text)
    assert len(blocks) == 1
    assert "</script" not in blocks[0].lower() and "<!--" not in blocks[0]
    assert not set(blocks[0]) & set("<>&\u2028\u2029")
    assert json.loads(blocks[0]) == json.loads(json.dumps(_data(board, corpora), default=str))
    # the hostile strings reach the data intact
    data = json.loads(blocks[0])
    assert data["corpora"] == [HOSTILE[2]] and data["cells"][0]["label"] == HOSTILE[0]
    assert data["clusters"][HOSTILE[2]] == {"0": HOSTILE[1]}
    # everything else Python wrote (problems, paper tables, paths) is escaped too: the only
    # script tags are the page's own, and there is no comment at all
    assert text.lower().count("<script") == 2 and text.lower().count("</script") == 2
    assert "<!--" not in text and "<img" not in text


def test_the_same_results_give_the_same_page(monkeypatch):
    import time

    board = _board()
    corpora = board.corpora
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    first = page(board, corpora, [], [])
    time.sleep(1.1)  # a wall-clock stamp would differ now
    assert page(board, corpora, [], []) == first and "generated" not in first
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    assert "generated 2026-01-01T00:00:00+00:00" in page(board, corpora, [], [])


def test_the_page_rounds_as_the_tables_do():
    """The page's `shown` (its JavaScript, run by node) against Python's formatting, exact
    ties (6.25 to one place) and near-ties of large query counts included."""
    import shutil
    import subprocess

    from harness.report.leaderboard.html import _SCRIPT

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    fn = re.search(r"  function shown\(m, x, digits\) \{.*?\n  \}", _SCRIPT, re.S).group(0)
    xs = [k / n for n in (16, 48, 997, 20000) for k in range(0, n + 1, max(1, n // 300))]
    xs += [0.05, 0.15, 0.0625, 223 / 20000, 1e-7, 1.0, 12.345]
    cases = [(x, d) for x in xs for d in (0, 1, 2)]
    script = (
        "const data = {percent: {}}; function get(o, k) { return o[k]; }\n" + fn + "\n"
        f"console.log(JSON.stringify({json.dumps(cases)}.map(([x, d]) => shown('m', x, d))));"
    )
    out = subprocess.run([node, "-e", script], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [f"{100 * x:.{d}f}" for x, d in cases]


def test_the_metrics_most_cells_hold_come_first():
    rare = {"n": 2, "mean": {"coverage@10": 0.5, "perfrecall@10": 0.25}}
    both = {"n": 2, "mean": {"nDCG@1": 0.1, **rare["mean"]}}
    board = Board(Path("/results"))
    board.cells = {
        "c": {
            "a-standard": cell("c", "a-standard", {"results": {"overall": both}}),
            "b": cell("c", "b", {"results": {"overall": rare}}),
            "c": cell("c", "c", {"results": {"overall": rare}}),
        }
    }
    assert _data(board, ["c"])["metrics"] == ["coverage@10", "perfrecall@10", "nDCG@1"]
