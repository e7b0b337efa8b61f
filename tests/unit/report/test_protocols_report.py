"""The deflection section as terminal lines and as a leaderboard table (Markdown, LaTeX, CSV,
HTML) built from hand-written metrics.json documents."""

from pathlib import Path

import pytest

from harness.core.run import Run
from harness.core.types import Benchmark, Chunk, Query
from harness.report.leaderboard.collect import Board
from harness.report.leaderboard.html import table_html
from harness.report.leaderboard.protocols import deflection_table
from harness.report.leaderboard.render import csv_text, latex, markdown
from harness.report.leaderboard.tables import Options
from harness.report.protocols import lines
from metrics.deflection import deflection
from tests.helpers.cells import cell
from tests.helpers.markdown import squeeze


def _q(qid, answerable, labels=None):
    groups = () if answerable == "no" else (frozenset({"a"}),)
    absent = () if answerable == "yes" else (frozenset({"z"}),)
    return Query(qid, qid, groups, absent=absent, answerable=answerable, labels=labels)


def test_terminal_lines_on_a_small_block():
    bench = Benchmark(
        "t",
        {c: Chunk(c, c) for c in "abc"},
        (
            _q("y1", "yes"),
            _q("y2", "yes"),
            _q("n1", "no", labels={"b": "RELATED"}),
            _q("n2", "no", labels={}),
        ),
        "sha256:0",
        "test",
    )
    run = Run.from_dict({"y1": {"a": 4.0, "c": 2.0}, "y2": {"a": 1.0}, "n1": {"b": 2.0}})
    got = lines(deflection(bench, run, [10], ["RELATED"]))
    assert got == [
        "",
        "Deflection (retrieval side): top-1 score by answerable (raw retriever scores; quartiles",
        "linearly interpolated; empty: nothing retrieved, below every threshold)",
        "answerable  n  empty   mean    min    q25  median    q75    max",
        "----------  -  -----  -----  -----  -----  ------  -----  -----",
        "yes         2      0  2.500  1.000  1.750   2.500  3.250  4.000",
        "no          1      1  2.000  2.000  2.000   2.000  2.000  2.000",
        "AUROC answerable (yes, 2) vs unanswerable (no, 2) by score, 0.5 = chance:",
        # top-1: (4 vs 2, -inf) 1 + 1, (1 vs 2) 0, (1 vs -inf) 1 -> 3/4;
        # top-10 mean: y1 3.0, y2 1.0 vs n1 2.0, n2 -inf -> 3/4 as well
        "  top-1 0.750, top-10 mean 0.750",
        "Unanswerable queries (2 with labels) with a distractor in the top K:",
        "  @10 50.0% (1); distractors: related",
    ]
    assert lines(None) == []
    # a cell holding @5 as well, shown for a run that asked for @10: the @10 lines only
    both = deflection(bench, run, [5, 10], ["RELATED"])
    assert "top-5 mean" in lines(both)[-3] and "@5 " in lines(both)[-1]
    assert lines(both, ks={10}) == got


def _block(top1, means, shares=None, n=(40, 10)):
    b = {
        "n": {"yes": n[0], "partial": 0, "no": n[1]},
        "top1": {},  # the table reads neither the distribution nor the empty counts
        "auroc": {"top1": top1} | {f"top{k}_mean": v for k, v in means.items()},
    }
    if shares is not None:
        b["distractors"] = {"labels": ["outdated", "related"]} | {
            f"top{k}": {"share": s, "queries": round(s * n[1]), "n": n[1]}
            for k, s in shares.items()
        }
    return b


def _entry(corpus, retriever, block, stale=False):
    doc = {"results": {"overall": {"n": 50, "mean": {}}}, "display_name": retriever.upper()}
    if block is not None:
        doc["protocols"] = {"deflection": block}
    return cell(corpus, retriever, doc, stale=stale)


@pytest.fixture
def board():
    b = Board(Path("/nowhere"))
    b.cells = {
        "garage": {
            "bm25": _entry(
                "garage", "bm25", _block(0.61234, {5: 0.6, 10: 0.58}, {5: 0.3, 10: 0.5})
            ),
            "dense": _entry("garage", "dense", _block(0.8, {5: 0.75, 10: None}, {5: 0.2, 10: 0.4})),
        },
        "finance": {"bm25": _entry("finance", "bm25", None)},  # every query answerable
    }
    return b


def test_leaderboard_table_rows_columns_and_best(board):
    assert deflection_table(board, "finance", Options()) is None
    t = deflection_table(board, "garage", Options())
    assert t.key == "deflection_garage"
    assert t.groups == [("queries", 2), ("AUROC yes vs no", 3), ("distractor in top K (%)", 2)]
    assert t.columns == ["yes", "no", "top-1", "top-5 mean", "top-10 mean", "@5", "@10"]
    assert [label for label, _ in t.rows] == ["BM25", "DENSE"]  # weakest top-1 AUROC first
    bm25, dense = (vals for _, vals in t.rows)
    assert [v.text for v in bm25[:5]] == ["40", "10", "0.612", "0.600", "0.580"]
    assert [v.text for v in dense[2:5]] == ["0.800", "0.750", "-"]
    assert [v.value for v in bm25[5:]] == pytest.approx([30.0, 50.0])
    assert [v.value for v in dense[5:]] == pytest.approx([20.0, 40.0])
    assert [v.best for v in bm25] == [False, False, False, False, True, False, False]
    assert [v.best for v in dense] == [False, False, True, True, False, False, False]
    assert any("outdated, related" in n for n in t.notes)


def test_leaderboard_table_renders_in_every_format(board):
    t = deflection_table(board, "garage", Options())
    md = squeeze(markdown(t))
    assert "| Retriever | queries yes | queries no | AUROC yes vs no top-1 |" in md
    assert "| BM25 | 40 | 10 | 0.612 | 0.600 | **0.580** | 30.00 | 50.00 |" in md
    assert "| DENSE | 40 | 10 | **0.800** | **0.750** | - | 20.00 | 40.00 |" in md
    tex = latex(t)
    assert r"\label{tab:deflection-garage}" in tex
    assert r"DENSE & 40 & 10 & \textbf{0.800} & \textbf{0.750} & - & 20.00 & 40.00 \\" in tex
    rows = csv_text(t).splitlines()
    assert rows[0].startswith("retriever,queries yes,queries no,AUROC yes vs no top-1")
    assert rows[1] == "BM25,40,10,0.612,0.600,0.580,30.0,50.0"
    page = table_html(t)
    assert "deflection on the retrieval side" in page and "0.612" in page
    # the AUROCs are written as text (3 decimals): bold and marks survive in HTML too
    assert '<td class="num"><b>0.800</b></td>' in page and "<b>0.580</b>" in page


def test_stale_cells_are_never_best_and_no_share_columns_without_labels(board):
    board.cells["garage"]["dense"].stale = True
    board.cells["garage"]["bm25"].doc["protocols"]["deflection"].pop("distractors")
    board.cells["garage"]["dense"].doc["protocols"]["deflection"].pop("distractors")
    t = deflection_table(board, "garage", Options())
    assert t.columns == ["yes", "no", "top-1", "top-5 mean", "top-10 mean"]
    bm25, dense = (vals for label, vals in t.rows)
    assert [v.best for v in bm25[2:]] == [True, True, True]
    assert not any(v.best for v in dense) and dense[2].stale
    assert any("†" in n for n in t.notes)
    assert '<td class="num">0.800†</td>' in table_html(t)
    board.cells["garage"]["old"] = _entry("garage", "old", None)  # from before the block
    t = deflection_table(board, "garage", Options())
    assert [label for label, _ in t.rows] == ["BM25", "DENSE"]
    assert any(n.startswith("not shown: OLD (no deflection block") for n in t.notes)


def test_build_registers_the_table(tmp_path, board, monkeypatch):
    from types import SimpleNamespace

    from harness.report.leaderboard import publish

    monkeypatch.setattr("harness.report.leaderboard.collect.collect", lambda _: board)
    args = SimpleNamespace(
        k=10,
        alpha=0.05,
        tolerance=0.5,
        permutations=10,
        results=str(tmp_path),
        corpus=None,
        no_significance=True,
        table="deflection",
    )
    assert "deflection" in publish.TABLES
    _, _, tables, _ = publish.build(args)
    assert [t.key for t in tables] == ["deflection_garage"]
