"""Leaderboard tables on hand-made boards: layout, best marks, reproduction verdicts, renderers."""

import hashlib
from pathlib import Path

import pytest

from harness.report.leaderboard.collect import Board, Reference
from harness.report.leaderboard.render import csv_text, latex, markdown, tex_escape
from harness.report.leaderboard.tables import Options, hops, reproduction, table3
from tests.helpers.cells import cell
from tests.helpers.markdown import squeeze


def _entry(corpus, retriever, cov, perf, hop=None, checksum="sha256:a", stale=False):
    mean = {"coverage@10": cov, "perfrecall@10": perf, "group_ndcg@10": cov, "group_mrr@10": perf}
    doc = {"results": {"overall": {"n": 10, "mean": mean}}, "metrics": list(mean)}
    if hop:
        doc["results"]["hop"] = {
            h: {"n": n, "mean": {m: v for m in mean}} for h, (n, v) in hop.items()
        }
    return cell(corpus, retriever, doc, checksum, stale=stale)


def _ref(corpus, retriever, metric, value, source="rare-paper-table3", label="BM25"):
    return Reference(source, corpus, retriever, label, "m", metric, value)


@pytest.fixture
def board():
    b = Board(Path("/nowhere"))
    b.cells = {
        "finance": {
            "bm25": _entry(
                "finance",
                "bm25",
                0.5987,
                0.3612,
                hop={"1": (3, 0.9), "2": (4, 0.5), "10": (3, 0.1)},
            ),
            "dense": _entry(
                "finance", "dense", 0.70, 0.30, hop={"1": (3, 0.8), "2": (4, 0.6), "10": (3, 0.2)}
            ),
        },
        "legal": {"bm25": _entry("legal", "bm25", 0.40, 0.20)},
    }
    b.references = [
        _ref("finance", "bm25", "coverage@10", 59.87),
        _ref("finance", "bm25", "perfrecall@10", 36.12),
        _ref("legal", "bm25", "coverage@10", 49.08),  # reproduced 40.00: a FAIL
        _ref("patent", "bm25", "coverage@10", 76.35),  # not run
    ]
    b.diagnostics = {"finance": {"similarity": 0.351, "embedder": "minilm", "redundancy": 0.632}}
    return b


def test_table3_layout_best_and_published_rows(board):
    t = table3(board, ["finance", "legal"], Options(), sig=None)
    assert t.groups == [("finance", 2), ("legal", 2)]
    assert t.columns == ["Cov@10", "Perf@10", "Cov@10", "Perf@10"]
    assert t.group_notes[0] == "Sim 35.1% (minilm) · Red 63.2%"
    assert "harness.diagnose" in t.group_notes[1]
    # weakest first by mean Coverage@10: bm25 (0.499) before dense (0.70)
    assert [label for label, _ in t.rows] == ["BM25", "dense"]
    bm25, dense = (vals for _, vals in t.rows)
    assert [v.value for v in bm25] == pytest.approx([59.87, 36.12, 40.0, 20.0])
    assert [v.best for v in bm25] == [False, True, True, True]
    assert [v.best for v in dense] == [True, False, False, False]
    assert dense[2].value is None  # no legal cell for dense
    assert [label for label, _ in t.published] == ["BM25 (published)"]
    assert [v.value for v in t.published[0][1]] == [59.87, 36.12, 49.08, None]


def test_hop_table_groups_carry_query_counts_in_numeric_order(board):
    t = hops(board, "finance", Options(), sig=None)
    assert [g for g, _ in t.groups] == [
        "overall (n=10)",
        "1-hop (n=3)",
        "2-hop (n=4)",
        "10-hop (n=3)",
    ]
    assert t.columns[:4] == ["Cov@10", "Perf@10", "NDCG@10", "MRR"]
    labels = [label for label, _ in t.rows]
    bm25 = t.rows[labels.index("BM25")][1]
    assert bm25[4].value == pytest.approx(90.0) and bm25[4].best
    assert bm25[8].value == pytest.approx(50.0) and not bm25[8].best


def test_reproduction_ok_within_tolerance_fail_outside(board):
    t, fails = reproduction(board, ["finance", "legal", "patent"], Options(tolerance=0.5))
    status = {(vals[0].text, vals[1].text): vals[6].text for _, vals in t.rows}
    assert status == {
        ("finance", "coverage@10"): "OK",
        ("finance", "perfrecall@10"): "OK",
        ("legal", "coverage@10"): "FAIL",
    }
    assert fails == 1
    assert any("1 published (corpus, retriever) cells were not run" in n for n in t.notes)
    deltas = [vals[5].text for _, vals in t.rows]
    assert deltas == ["+0.00", "+0.00", "-9.08"]
    _, strict = reproduction(board, ["legal"], Options(tolerance=10))
    assert strict == 0


def test_stale_cells_are_never_best_nor_ok(board):
    board.cells["legal"]["bm25"].stale = True
    board.references[2] = _ref("legal", "bm25", "coverage@10", 40.0)
    t, fails = reproduction(board, ["legal"], Options())
    assert fails == 1 and t.rows[0][1][6].text == "FAIL"
    t3 = table3(board, ["legal"], Options(), sig=None)
    assert not any(v.best for _, vals in t3.rows for v in vals)
    assert any("†" in n for n in t3.notes)


def test_markdown_latex_and_csv(board):
    t = table3(board, ["finance", "legal"], Options(), sig=None)
    md = squeeze(markdown(t))
    assert "| Retriever | finance Cov@10 | finance Perf@10 | legal Cov@10 | legal Perf@10 |" in md
    assert "| BM25 | 59.87 | **36.12** | **40.00** | **20.00** |" in md
    tex = latex(t)
    assert r"\toprule" in tex and r"\bottomrule" in tex and r"\cmidrule(lr){2-3}" in tex
    assert r"\multicolumn{2}{c}{finance}" in tex
    assert r"BM25 & 59.87 & \textbf{36.12}" in tex
    assert r"Sim 35.1\% (minilm)" in tex
    body = tex.split(r"\midrule")[1].strip().splitlines()
    assert all(line.endswith(r"\\") for line in body)  # every row ends with \\
    rows = csv_text(t).splitlines()
    assert rows[0] == "retriever,finance Cov@10,finance Perf@10,legal Cov@10,legal Perf@10"
    assert rows[1].startswith("BM25,59.87,36.12,40.0,20.0")


def test_tex_escape_specials():
    assert tex_escape("a_b & 50% #1 {x}") == r"a\_b \& 50\% \#1 \{x\}"


def test_hop_latex_is_split_wide_and_never_shrunk(board):
    t = hops(board, "finance", Options(), sig=None)
    tex = latex(t)
    assert tex.count(r"\begin{table*}") == 2 and r"\resizebox" not in tex
    first, second = tex.split(r"\end{table*}")[:2]
    assert "Coverage and PerfRecall" in first and "NDCG and MRR" in second
    # headers drop the @10 of the caption, which keeps the columns narrow
    assert "Cov & Perf & Cov" in first and "NDCG" not in first and "@10 (" in first
    assert "NDCG & MRR & NDCG" in second
    assert r"\tiny" not in tex  # nothing below 7 pt
    # with intervals: one table per metric, the intervals on a line of their own
    with_ci = latex(t, ci=False)
    assert with_ci.count(r"\begin{table*}") == 2  # no intervals in the cells: unchanged


def test_narrow_table_stays_in_one_column(board):
    t = table3(board, ["finance"], Options(), sig=None)
    tex = latex(t)
    assert r"\begin{table}" in tex and "table*" not in tex


def test_intervals_with_ci_and_missing_values_explained(board):
    e = board.cells["finance"]["bm25"]
    e.doc["results"]["overall"]["ci"] = {"coverage@10": [0.5, 0.7], "perfrecall@10": [0.3, 0.4]}
    t = table3(board, ["finance", "legal"], Options(), sig=None)
    assert any(n.startswith("-: no value") for n in t.notes)  # dense has no legal cell
    md = squeeze(markdown(t, ci=True))
    assert "| BM25 | 59.87 [50.0, 70.0] | **36.12** [30.0, 40.0] |" in md
    assert "95 % bootstrap interval" in md
    assert "[50.0, 70.0]" not in markdown(t)  # only when asked for
    tex = latex(t, ci=True)
    assert r"{\scriptsize 50.0--70.0}" in tex
    board.cells["finance"]["bm25"].doc["results"]["hop"]["1"]["ci"] = {"coverage@10": [0.8, 1.0]}
    split = latex(hops(board, "finance", Options(), sig=None), ci=True)
    assert split.count(r"\begin{table*}") == 4 and ": Cov}" in split and ": MRR}" in split
    assert r"{\scriptsize 80.0--100.0}" in split


def test_reproduction_without_the_metric_is_not_computed_not_fail(board):
    board.references.append(_ref("finance", "bm25", "map", 20.0))
    t, fails = reproduction(board, ["finance"], Options())
    status = {vals[1].text: vals[6].text for _, vals in t.rows}
    assert status["map"] == "not computed" and fails == 0
    assert any("metrics.names=[map]" in n for n in t.notes)


def test_rows_are_ranked_over_the_corpora_every_row_has():
    b = Board(Path("/nowhere"))
    b.cells = {
        "finance": {
            "bm25": _entry("finance", "bm25", 0.60, 0.3),
            "dense": _entry("finance", "dense", 0.55, 0.3),
        },
        "legal": {"bm25": _entry("legal", "bm25", 0.40, 0.2)},
    }
    t = table3(b, ["finance", "legal"], Options(), sig=None)
    # over both corpora bm25 (mean 0.50) would rank below dense (0.55); on finance, which both
    # have, dense (0.55) is the weaker
    assert [label for label, _ in t.rows] == ["dense", "bm25"]
    assert "Rows: weakest first by mean Cov@10 over finance" in t.notes


def test_the_packaged_demo_is_left_out_unless_named():
    from harness.report.leaderboard.publish import _corpora

    b = Board(Path("/nowhere"))
    b.cells = {c: {"bm25": _entry(c, "bm25", 0.5, 0.3)} for c in ("demo", "finance")}
    assert _corpora(b, None) == ["finance"]
    assert _corpora(b, ["demo", "finance"]) == ["demo", "finance"]
    b.cells = {"demo": {"bm25": _entry("demo", "bm25", 0.5, 0.3)}}
    assert _corpora(b, None) == ["demo"]  # all there is


def test_coverage_plot_puts_every_retriever_at_its_corpus_similarity(board, tmp_path, monkeypatch):
    """One Similarity per corpus: markers are not spread sideways as if each retriever had
    its own; a corpus without Similarity is named for that, not for Coverage."""
    from harness.report.leaderboard import plots

    drawn = {}

    def keep(fig, out, stem):
        drawn["fig"] = fig
        return []

    monkeypatch.setattr(plots, "_save", keep)
    plots.coverage_vs_similarity(board, ["finance", "legal"], tmp_path)
    ax = drawn["fig"].axes[0]
    xs = {float(x) for line in ax.get_lines() if line.get_linestyle() == "None"
          for x in line.get_xdata()}  # fmt: skip
    assert len(xs) == 1 and xs.pop() == pytest.approx(35.1)
    assert "no Similarity for legal" in ax.get_title() and "Coverage" not in ax.get_title()[40:]


def _rag_cell(retriever, e2e, model):
    mean = {"e2e@5": e2e, "closed_book": 0.2, "rag_gain@5": e2e - 0.2, "perfrecall@5": 0.3}
    doc = {"results": {"overall": {"n": 10, "mean": mean}}, "metrics": list(mean)}
    doc["config"] = {"rag": {"generator": {"backend": "openai", "model": model}}}
    return cell("finance", retriever, doc)


def test_rag_columns_mark_no_best_across_cells_scored_with_other_rag_settings():
    from harness.report.leaderboard.rag import RARE, shaped_table

    b = Board(Path("/nowhere"))
    b.cells = {
        "finance": {"bm25": _rag_cell("bm25", 0.4, "m1"), "dense": _rag_cell("dense", 0.6, "m1")}
    }
    same = shaped_table(b, "finance", RARE, sig=None)
    assert [v.best for v in dict(same.rows)["dense"]][:1] == [True]
    assert "do not compare" not in " ".join(same.notes)

    b.cells["finance"]["dense"] = _rag_cell("dense", 0.6, "m2")  # another generator
    other = shaped_table(b, "finance", RARE, sig=None)
    assert not any(v.best or v.mark for _, vals in other.rows for v in vals)
    assert any('rag.generator.model: "m1" vs "m2"' in n and "no best is marked" in n
               for n in other.notes)  # fmt: skip


def test_a_table_without_rows_is_its_title_and_notes(board):
    board.references = []
    t, fails = reproduction(board, ["finance"], Options())
    md = markdown(t)
    assert fails == 0 and not t.rows and "|" not in md
    assert md.startswith("### ") and "no published number has a reproduced cell here" in md
    from harness.report.leaderboard.html import table_html

    page = table_html(t)
    assert "<table" not in page and "no published number has a reproduced cell here" in page


def test_a_query_field_gets_the_hop_tables_shape():
    from harness.report.leaderboard.tables import fields

    def entry(retriever, cov):
        mean = {"coverage@10": cov, "perfrecall@10": cov, "group_ndcg@10": cov, "group_mrr@10": cov}
        doc = {"results": {"overall": {"n": 4, "mean": mean}}, "metrics": list(mean)}
        doc["results"]["topic"] = {
            "tax, law": {"n": 3, "mean": {m: cov / 2 for m in mean}},
            "sport": {"n": 1, "mean": {m: cov for m in mean}},
        }
        doc["results"]["time of/day"] = {"am": {"n": 4, "mean": mean}}
        doc["config"] = {"strata": {"fields": ["topic", "absent", "time of/day"]}}
        return cell("finance", retriever, doc)

    b = Board(Path("/nowhere"))
    b.cells = {"finance": {"bm25": entry("bm25", 0.4), "dense": entry("dense", 0.6)}}
    t, odd = fields(b, "finance", Options(), sig=None)
    assert t.key == "by_topic_finance" and "by topic" in t.title
    # a name no file may hold: its plain characters and a hash (two such names never clash)
    digest = hashlib.sha256(b"time of/day").hexdigest()[:8]
    assert odd.key == f"by_time_of_day-{digest}_finance" and "by time of/day" in odd.title
    assert [g for g, _ in t.groups] == ["overall (n=4)", "sport (n=1)", "tax, law (n=3)"]
    dense = dict(t.rows)["dense"]
    assert [v.value for v in dense][:5] == [60.0, 60.0, 60.0, 60.0, 60.0] and dense[0].best
    assert "| tax, law (n=3) Cov@10 |" in squeeze(markdown(t))


def test_a_beir_shaped_corpus_breaks_down_by_relevant_documents():
    mean = {"coverage@10": 0.5, "perfrecall@10": 0.4, "group_ndcg@10": 0.3, "group_mrr@10": 0.2}
    doc = {"results": {"overall": {"n": 5, "mean": mean}}, "metrics": list(mean)}
    doc["results"]["relevant"] = {"1": {"n": 3, "mean": mean}, "2": {"n": 2, "mean": mean}}
    b = Board(Path("/nowhere"))
    b.cells = {"scifact": {"bm25": cell("scifact", "bm25", doc)}}
    t = hops(b, "scifact", Options(), sig=None)
    assert t.key == "hops_scifact" and "by relevant documents per query" in t.title
    assert [g for g, _ in t.groups] == ["overall (n=5)", "1 relevant (n=3)", "2 relevant (n=2)"]


def test_the_perfrecall_plot_draws_a_beir_shaped_corpus_by_relevant_documents(
    board, tmp_path, monkeypatch
):
    """A BEIR-shaped corpus has no hop strata: its panel counts relevant documents, as its
    hop table does, instead of being left out as if PerfRecall were not computed."""
    from harness.report.leaderboard import plots

    mean = {"perfrecall@10": 0.4}
    doc = {"results": {"overall": {"n": 5, "mean": mean}}, "metrics": list(mean)}
    doc["results"]["relevant"] = {"1": {"n": 3, "mean": {"perfrecall@10": 0.6}},
                                  "2": {"n": 2, "mean": {"perfrecall@10": 0.1}}}  # fmt: skip
    board.cells["scifact"] = {"bm25": cell("scifact", "bm25", doc)}
    drawn = {}

    def keep(fig, out, stem):
        drawn["fig"] = fig
        return []

    monkeypatch.setattr(plots, "_save", keep)
    plots.perfrecall_by_hop(board, ["finance", "legal", "scifact"], tmp_path)
    fig = drawn["fig"]
    panels = {ax.get_title(): ax for ax in fig.axes if ax.get_title()}
    assert set(panels) == {"finance", "scifact"}
    assert panels["finance"].get_xlabel() == "hop depth (gold groups per query)"
    beir = panels["scifact"]
    assert beir.get_xlabel() == "relevant documents per query"
    assert [t.get_text() for t in beir.get_xticklabels()] == ["1", "2"]
    ys = [y for line in beir.get_lines() for y in line.get_ydata() if y == y]
    assert sorted(set(ys)) == pytest.approx([10.0, 60.0])  # the marker and its caps
    assert "scifact: by relevant documents" in fig._suptitle.get_text()
    assert "not computed for legal" in fig._suptitle.get_text()
