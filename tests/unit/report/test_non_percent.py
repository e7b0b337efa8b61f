"""A metric that is not a share (answer_rank, a mean rank) is shown as it is, a share in
percent, by every renderer: terminal table and ties line, semantic lines, compare report and
gate, leaderboard tables (Markdown, reproduction), the HTML page's data and script, to_latex."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from harness.report import compare as cmp
from harness.report.leaderboard.collect import Board, Reference
from harness.report.leaderboard.html import _SCRIPT, _data, page
from harness.report.leaderboard.render import markdown
from harness.report.leaderboard.tables import Options, Table, _value, reproduction
from harness.report.semantic import _aggregate_lines
from harness.report.terminal import table, ties_line
from tests.helpers.cells import cell
from tests.helpers.markdown import squeeze

RANK, SHARE = "answer_rank", "coverage@10"
MEAN = {SHARE: 0.5, RANK: 11.916666666666666}  # the demo's answer_rank mean: 11.92


def test_terminal_table_and_ties_line():
    overall = {
        "n": 48,
        "mean": dict(MEAN),
        "excluded": {SHARE: 0, RANK: 0},
        "tie_queries": {SHARE: 2, RANK: 3},
        "ties": {SHARE: [0.45, 0.5625], RANK: [11.5, 12.25]},
    }
    lines = table({"overall": overall}, [SHARE, RANK]).splitlines()
    assert lines[0].split() == ["stratum", "n", SHARE, RANK]
    assert lines[2].split() == ["overall", "48", "50.00", "11.92"]
    assert ties_line(overall, [SHARE, RANK]) == (
        "ties: 3 queries' values depend on tied scores; coverage@10 45.00–56.25, "
        "answer_rank 11.50–12.25 (metrics.json: ties)"
    )


def test_semantic_aggregates_line():
    agg = {"overall": 0.5, "macro": 0.25, "median": 0.375, "worst": 0.0, "worst_cluster": "3"}
    ranks = {"overall": 11.9, "macro": 12.5, "median": 10.0, "worst": 30.25}
    semantic = {"min_queries": 5, "aggregates": {SHARE: agg, RANK: ranks | {"worst_cluster": "7"}}}
    rows = [line.split() for line in _aggregate_lines(semantic, [SHARE, RANK])[-2:]]
    assert rows == [
        [SHARE, "50.00", "25.00", "37.50", "0.00", "3"],
        [RANK, "11.90", "12.50", "10.00", "30.25", "7"],
    ]


def _cell(name: str, ranks, shares):
    ids = tuple(f"q{i:02d}" for i in range(len(ranks)))
    values = {SHARE: np.asarray(shares, dtype=float), RANK: np.asarray(ranks, dtype=float)}
    mean = {m: float(v.mean()) for m, v in values.items()}
    doc = {"results": {"overall": {"n": len(ids), "mean": mean}}}
    return cell("demo", name, doc, path=name, query_ids=ids, values=values)


@pytest.mark.parametrize(
    ("worse_by", "verdict"), [(2.0, "**REGRESSION**"), (0.5, "worse, within 1.00")]
)
def test_compare_report_and_gate_read_ranks(worse_by, verdict):
    # the candidate ranks the answer `worse_by` ranks lower on every query and hits 10 points
    # more coverage; the gate's max drop (1.0) is in ranks for answer_rank
    ranks = np.arange(1, 41, dtype=float)  # mean 20.5
    cells = [_cell("base", ranks, [0.5] * 40), _cell("cand", ranks + worse_by, [0.6] * 40)]
    opts = cmp.Options(None, 1.0, 0.05, 30, 999, 200, 0)
    metrics, rows = cmp.compare_cells(cells, opts)
    text = squeeze(cmp.render(cells, metrics, rows, opts))
    row = {r.metric: r for r in rows}
    assert row[RANK].verdict == verdict and row[SHARE].verdict == "better"
    share_line, rank_line = [ln for ln in text.splitlines() if ln.startswith("| overall |")]
    assert share_line.startswith("| overall | 40 | 50.00 | 60.00 | +10.00 | [+10.00, +10.00] |")
    late = f"{20.5 + worse_by:.2f}"
    assert rank_line.startswith(f"| overall | 40 | 20.50 | {late} | +{worse_by:.2f} | ")
    assert rank_line.endswith(f"| {verdict} |")
    assert "(answer_rank: not a share; values and Δ as they are)" in text
    if verdict == "**REGRESSION**":
        assert f"answer_rank overall +{worse_by:.2f} (Holm p" in text
    else:
        assert "**Result: PASS.** No gated metric dropped by more than 1.00 points " in text
        assert "(answer_rank: 1.00 in its own units)" in text


def _entry(mean=MEAN, ci=None):
    overall = {"n": 48, "mean": dict(mean), "ci": ci or {}}
    doc = {"results": {"overall": overall}, "metrics": list(mean)}
    return cell("demo", "bm25", doc)


def test_leaderboard_value_and_markdown():
    e = _entry(ci={SHARE: [0.375, 0.625], RANK: [9.5, 14.25]})
    t = Table("t", "t", "Retriever", [SHARE, RANK], [("bm25", [_value(e, SHARE), _value(e, RANK)])])
    assert [v.value for v in t.rows[0][1]] == pytest.approx([50.0, 11.916666666666666])
    assert t.rows[0][1][1].ci == pytest.approx((9.5, 14.25))
    assert (
        squeeze(markdown(t, ci=True)).splitlines()[4]
        == "| bm25 | 50.00 [37.5, 62.5] | 11.92 [9.5, 14.2] |"
    )


def test_reproduction_of_a_rank_compares_ranks():
    b = Board(Path("/x"))
    b.cells = {"demo": {"bm25": _entry()}}
    b.references = [
        Reference("paper", "demo", "bm25", "BM25", "m", SHARE, 50.0),
        Reference("paper", "demo", "bm25", "BM25", "m", RANK, 12.0),
    ]
    t, fails = reproduction(b, ["demo"], Options(tolerance=0.5))
    got = {vals[1].text: vals for _, vals in t.rows}
    assert got[RANK][4].value == pytest.approx(11.916666666666666)
    assert (got[RANK][5].text, got[RANK][6].text) == ("-0.08", "OK")
    assert (got[SHARE][5].text, got[SHARE][6].text) == ("+0.00", "OK")
    assert fails == 0


def test_html_data_carries_the_flag_and_the_script_reads_it():
    b = Board(Path("/x"))
    b.cells = {"demo": {"bm25": _entry()}}
    data = _data(b, ["demo"])
    assert data["percent"] == {SHARE: True, RANK: False}
    assert data["higher"] == {SHARE: True, RANK: False}
    assert "(answer_rank: as they are, not in %)" in page(b, ["demo"], [], [])
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the page's script is not run")
    # the page's own helpers, run on its data
    helpers = [
        re.search(r"^  function get\(.*?$", _SCRIPT, re.M | re.S).group(0),
        re.search(r"^  function shown\(.*?^  }$", _SCRIPT, re.M | re.S).group(0),
    ]
    calls = "[shown('answer_rank', 11.916666, 2), shown('coverage@10', 0.5, 2), "
    calls += "shown('answer_rank', 9.5, 1), shown('coverage@10', 0.375, 1), shown('x', null, 2)]"
    js = f"const data = {json.dumps(data)};\n" + "\n".join(helpers)
    js += f"\nconsole.log(JSON.stringify({calls}));"
    out = subprocess.run([node, "-e", js], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == ["11.92", "50.00", "9.5", "37.5", "-"]


def test_to_latex_scales_only_shares():
    import harness

    ev = harness.evaluate("demo", "bm25", ["coverage", "answer_rank"], 10, bootstrap=0)
    means = ev.per_query[[SHARE, RANK]].mean()  # the overall means, from the per-query values
    assert 11 < means[RANK] < 13  # a mean rank, not a share
    row = next(line for line in ev.to_latex().splitlines() if line.startswith("overall &"))
    assert row == f"overall & 48 & {100 * means[SHARE]:.2f} & {means[RANK]:.2f} \\\\"


def test_terminal_table_counts_the_unlabelled_rows_instead_of_printing_them():
    def summary(n, share):
        return {"n": n, "mean": {SHARE: share, RANK: 3.0}, "excluded": {SHARE: 0, RANK: 0}}

    agg = {
        "overall": summary(48, 0.5),
        "dispersion": {"low": summary(47, 0.5), "n/a": summary(1, 1.0)},
        "alignment": {"mid": summary(48, 0.5)},
    }
    short = table(agg, [SHARE, RANK]).splitlines()
    assert [line.split()[0] for line in short[2:5]] == [
        "overall",
        "dispersion=low",
        "alignment=mid",
    ]
    assert short[-1] == (
        "(n/a, queries a stratification cannot label: dispersion: 1 query; their rows are in "
        "metrics.json, report=full prints them)"
    )
    full = table(agg, [SHARE, RANK], undefined=True)
    assert "dispersion=n/a" in full and "cannot label" not in full
    # the counts are printed whole: NumRet's total over queries
    counts = {"overall": {"n": 2, "mean": {"NumRet": 200.0}, "excluded": {"NumRet": 0}}}
    assert table(counts, ["NumRet"]).splitlines()[2].split() == ["overall", "2", "200"]


def test_semantic_tables_show_the_metrics_at_the_largest_cutoff_not_a_recall_level():
    from harness.report.semantic import headline

    assert headline(["IPrec@0.5", "P@5", "AP", "P@10", "nDCG@10"]) == ["P@10", "nDCG@10"]
    assert headline(["IPrec@0.5", "AP"]) == ["IPrec@0.5", "AP"]
