"""The protocols leaderboard table (answer_recall@K, outdated@K, Coverage / PerfRecall on the
answerable strata, answer_rank) built from hand-written metrics.json documents, in every
format."""

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from harness.report.leaderboard.collect import Board
from harness.report.leaderboard.html import table_html
from harness.report.leaderboard.protocol_metrics import protocols_table
from harness.report.leaderboard.render import csv_text, latex, markdown
from harness.report.leaderboard.tables import Options, Significance
from tests.helpers.cells import cell
from tests.helpers.markdown import squeeze


def _doc(answer, outdated, rank, yes, partial, ks=(5, 10)):
    """A metrics.json document: `answer` / `outdated` map K to the overall mean, `yes` /
    `partial` map K to (coverage, perfrecall) on that answerable label (None: no label)."""
    overall = {f"answer_recall@{k}": v for k, v in answer.items()}
    overall |= {f"outdated@{k}": v for k, v in outdated.items()}
    if rank is not None:
        overall["answer_rank"] = rank
    by = {}
    for label, got, n in (("yes", yes, 4), ("partial", partial, 2)):
        if got is not None:
            mean = {f"coverage@{k}": c for k, (c, _) in got.items()}
            mean |= {f"perfrecall@{k}": p for k, (_, p) in got.items()}
            by[label] = {"n": n, "mean": mean}
    if by:
        by["no"] = {"n": 1, "mean": {f"coverage@{k}": None for k in ks}}
    names = sorted(overall) + sorted({m for s in by.values() for m in s["mean"]})
    doc = {"metrics": names, "results": {"overall": {"n": 7, "mean": overall}}}
    if by:
        doc["results"]["answerable"] = by
    return doc


def _entry(corpus, retriever, doc, stale=False):
    doc = {**doc, "display_name": retriever.upper()}
    return cell(corpus, retriever, doc, stale=stale)


@pytest.fixture
def board():
    b = Board(Path("/nowhere"))
    bm25 = _doc(
        {5: 0.5, 10: 0.6},
        {5: 0.2, 10: 0.1},
        3.5,
        yes={5: (0.5, 0.25), 10: (0.75, 0.5)},
        partial={5: (0.25, 0.0), 10: (0.5, 0.5)},
    )
    dense = _doc(
        {5: 0.7, 10: 0.8},
        {5: 0.3, 10: 0.05},
        2.25,
        yes={5: (0.625, 0.5), 10: (0.875, 0.75)},
        partial={5: (0.25, 0.0), 10: (0.25, 0.0)},
    )
    plain = {"metrics": ["coverage@10"], "results": {"overall": {"n": 7, "mean": {}}}}
    b.cells = {
        "garage": {
            "bm25": _entry("garage", "bm25", bm25),
            "dense": _entry("garage", "dense", dense),
            "old": _entry("garage", "old", plain),  # scored before metrics=protocols
        },
        "finance": {"bm25": _entry("finance", "bm25", plain)},
    }
    return b


def test_rows_columns_values_and_best_marks(board):
    assert protocols_table(board, "finance", Options()) is None
    t = protocols_table(board, "garage", Options())
    assert t.key == "protocols_garage"
    one_k = ["answer_recall", "outdated", "Cov yes", "Perf yes", "Cov partial", "Perf partial"]
    assert t.groups == [("@5", 6), ("@10", 6), ("whole list", 1)]
    assert t.columns == [*one_k, *one_k, "answer_rank"]
    assert [label for label, _ in t.rows] == ["BM25", "DENSE"]  # weakest answer_recall@10 first
    bm25, dense = (vals for _, vals in t.rows)
    # shares in percent, answer_rank as it is
    assert [v.value for v in bm25] == pytest.approx(
        [50, 20, 50, 25, 25, 0, 60, 10, 75, 50, 50, 50, 3.5]
    )
    assert [v.value for v in dense] == pytest.approx(
        [70, 30, 62.5, 50, 25, 0, 80, 5, 87.5, 75, 25, 0, 2.25]
    )
    # higher wins except outdated@K and answer_rank; ties bold both
    assert [v.best for v in bm25] == [0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0]
    assert [v.best for v in dense] == [1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1]
    assert not any(v.mark for _, vals in t.rows for v in vals)  # no significance asked
    notes = "\n".join(t.notes)
    assert "normalised" in notes and "word boundaries" in notes
    assert "outdated: share of the top K" in notes and "lower is better" in notes
    assert "not a percentage" in notes
    assert "queries by answerable: yes 4, partial 2, no 1" in notes
    assert "over the answerable (yes) or partially answerable (partial) queries alone" in notes
    assert any(n.startswith("not shown: OLD (no answer, freshness") for n in t.notes)


def test_renders_in_every_format(board):
    t = protocols_table(board, "garage", Options())
    md = squeeze(markdown(t))
    assert md.startswith("### garage: answers, freshness and answerability")
    assert (
        "| Retriever | @5 answer_recall | @5 outdated | @5 Cov yes | @5 Perf yes | @5 Cov partial "
        "| @5 Perf partial | @10 answer_recall | @10 outdated | @10 Cov yes | @10 Perf yes "
        "| @10 Cov partial | @10 Perf partial | whole list answer_rank |"
    ) in md
    assert (
        "| DENSE | **70.00** | 30.00 | **62.50** | **50.00** | **25.00** | **0.00** | **80.00** "
        "| **5.00** | **87.50** | **75.00** | 25.00 | 0.00 | **2.25** |"
    ) in md
    tex = latex(t)
    assert r"\label{tab:protocols-garage}" in tex
    assert (
        r"\multicolumn{6}{c}{@5} & \multicolumn{6}{c}{@10} & \multicolumn{1}{c}{whole list}" in tex
    )
    assert r"BM25 & 50.00 & \textbf{20.00} & 50.00" in tex and r"& 3.50 \\" in tex
    rows = csv_text(t).splitlines()
    assert rows[0].startswith("retriever,@5 answer_recall,@5 outdated,@5 Cov yes")
    assert rows[0].endswith(",whole list answer_rank")
    assert rows[1] == "BM25,50.0,20.0,50.0,25.0,25.0,0.0,60.0,10.0,75.0,50.0,50.0,50.0,3.5"
    page = table_html(t)
    assert "answers, freshness and answerability" in page and "<b>2.25</b>" in page


def test_stale_cells_are_never_best(board):
    board.cells["garage"]["dense"].stale = True
    t = protocols_table(board, "garage", Options())
    bm25, dense = (vals for _, vals in t.rows)
    assert all(v.best for v in bm25) and not any(v.best for v in dense)
    assert all(v.stale for v in dense) and "†" in squeeze(markdown(t))
    assert any(n.startswith("†:") for n in t.notes)


def test_columns_without_values_are_left_out_and_ks_are_the_shared_ones(board):
    for name in ("bm25", "dense"):  # no dates, no labels: outdated undefined everywhere
        mean = board.cells["garage"][name].doc["results"]["overall"]["mean"]
        for k in (5, 10):
            mean[f"outdated@{k}"] = None
        board.cells["garage"][name].doc["results"]["answerable"].pop("partial")
    # a third cell scored at K = 10 only: @5 is not shared
    board.cells["garage"]["e5"] = _entry(
        "garage",
        "e5",
        _doc({10: 0.9}, {}, None, yes={10: (0.5, 0.5)}, partial=None, ks=(10,)),
    )
    t = protocols_table(board, "garage", Options())
    assert t.groups == [("@10", 3), ("whole list", 1)]
    assert t.columns == ["answer_recall", "Cov yes", "Perf yes", "answer_rank"]
    assert [label for label, _ in t.rows] == ["BM25", "DENSE", "E5"]
    e5 = t.rows[2][1]
    assert [v.value for v in e5[:3]] == pytest.approx([90, 50, 50]) and e5[3].value is None
    assert [v.best for v in e5] == [True, False, False, False]
    assert "not shown: @5 (not in every cell; leaderboard.csv has every value)" in t.notes
    assert any(n.startswith("-: no value") for n in t.notes)
    assert not any(n.startswith(("outdated:", "Cov / Perf yes, partial")) for n in t.notes)
    assert any(
        n.startswith(
            "Cov / Perf yes: Coverage@K and PerfRecall@K over the answerable (yes) queries"
        )
        for n in t.notes
    )


def test_answerable_strata_alone_make_a_table():
    b = Board(Path("/nowhere"))
    doc = _doc({}, {}, None, yes={10: (0.5, 0.25)}, partial={10: (0.25, 0.0)}, ks=(10,))
    b.cells = {"c": {"bm25": _entry("c", "bm25", doc)}}
    t = protocols_table(b, "c", Options())
    assert t.columns == ["Cov yes", "Perf yes", "Cov partial", "Perf partial"]
    assert [v.value for v in t.rows[0][1]] == pytest.approx([50, 25, 25, 0])


def _with_values(e, qids, labels, values):
    """`e` with per-query values (as read from its per_query.csv)."""
    return cell(
        e.corpus,
        e.retriever,
        e.doc,
        query_ids=qids,
        strata={"answerable": tuple(labels)},
        values={m: np.array(v, dtype=float) for m, v in values.items()},
    )


def test_significance_is_tested_within_the_answerable_stratum():
    """12 answerable queries on which A covers everything and B nothing, 12 partial ones the
    other way round: over all 24 the two tie (p = 1), within each label the loser's p is at
    most 2 / 2^12 under exact flips, well below 0.05, so only a test that pairs the label's
    queries alone marks it. answer_rank: B finds the answer at 1, A at 4 on every query, so A
    is the worse one (lower is better)."""
    qids = [f"q{i:02d}" for i in range(24)]
    labels = ["yes"] * 12 + ["partial"] * 12
    b = Board(Path("/nowhere"))
    cells = {}
    for name, yes, rank in (("a", 1.0, 4.0), ("b", 0.0, 1.0)):
        cov = [yes] * 12 + [1.0 - yes] * 12
        doc = _doc({}, {}, rank, yes={10: (yes, 0.0)}, partial={10: (1.0 - yes, 0.0)}, ks=(10,))
        e = _with_values(
            _entry("c", name, doc),
            qids,
            labels,
            {"coverage@10": cov, "perfrecall@10": [0.0] * 24, "answer_rank": [rank] * 24},
        )
        cells[name] = e
    b.cells = {"c": cells}
    opts = Options(permutations=2000)
    t = protocols_table(b, "c", opts, Significance(b, opts))
    assert t.columns == ["Cov yes", "Perf yes", "Cov partial", "Perf partial", "answer_rank"]
    rows = dict(t.rows)
    a, bb = rows["A"], rows["B"]
    assert [v.best for v in a] == [True, True, False, True, False]
    assert [v.best for v in bb] == [False, True, True, True, True]
    assert [v.mark for v in a] == [False, False, True, False, True]
    assert [v.mark for v in bb] == [True, False, False, False, False]
    assert "| A | **100.00** | **0.00** | 0.00* | **0.00** | 4.00* |" in squeeze(markdown(t))
    assert any(n.startswith("*: significantly below") for n in t.notes)


def test_build_registers_the_table(tmp_path, board, monkeypatch):
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
        table="protocols",
    )
    assert "protocols" in publish.TABLES
    _, _, tables, _ = publish.build(args)
    assert [t.key for t in tables] == ["protocols_garage"]
