"""The reproduction report reads each cell's tie range: a published number outside the
tolerance but inside the range (widened by the tolerance and the published rounding) is
OK (ties), not a FAIL; the range is shown in its own column in every format."""

from pathlib import Path

import pytest

from harness.report.leaderboard.collect import Board, Reference
from harness.report.leaderboard.html import table_html
from harness.report.leaderboard.render import csv_text, latex, markdown
from harness.report.leaderboard.tables import Options, reproduction, tie_range
from tests.helpers.cells import cell
from tests.helpers.markdown import squeeze

# General-Wiki BM25: the canonical means and the tie ranges metrics.json records for them
MEAN = {
    "coverage@10": 0.6465600775193798,
    "perfrecall@10": 0.4433139534883721,
    "group_ndcg@10": 0.6182924563206226,
    "group_mrr@10": 0.48637704005438835,
}
TIES = {
    "coverage@10": [0.6458333333333334, 0.6465600775193798],
    "perfrecall@10": [0.4418604651162791, 0.4433139534883721],
    "group_ndcg@10": [0.6180350432546898, 0.6182924563206226],
    "group_mrr@10": [0.48630436563307496, 0.48637704005438835],
}
PUBLISHED = {
    "coverage@10": 64.58,
    "perfrecall@10": 44.19,
    "group_ndcg@10": 61.80,
    "group_mrr@10": 48.63,
}


def _board(ties=TIES, stale=False, blob=None) -> Board:
    overall = {"n": 688, "mean": dict(MEAN)}
    if ties is not None:
        overall["ties"] = ties
    doc = {"results": {"overall": overall}, "metrics": list(MEAN)}
    if blob is not None:  # the git blob id of the file the cell read
        doc["benchmark"] = {"checksum": "s", "n_queries": 688, "metadata": {"git_blob_sha1": blob}}
    entry = cell("general-wiki", "bm25", doc, "s", stale=stale)
    b = Board(Path("/x"))
    b.cells = {"general-wiki": {"bm25": entry}}
    b.references = [
        Reference("rare-authors-repo", "general-wiki", "bm25", "BM25", "m", metric, value)
        for metric, value in PUBLISHED.items()
    ]
    return b


def _rows(table):
    return {vals[1].text: vals for _, vals in table.rows}


def test_tolerance_zero_fails_without_ties_and_passes_within_them():
    strict = Options(tolerance=0.0)
    t, fails = reproduction(_board(), ["general-wiki"], strict)
    assert t.columns[-2:] == ["Status", "Tie range"]
    rows = _rows(t)
    assert {m: v[6].text for m, v in rows.items()} == dict.fromkeys(PUBLISHED, "OK (ties)")
    assert fails == 0
    assert rows["coverage@10"][7].text == "64.58–64.66"
    assert rows["group_ndcg@10"][7].text == "61.80–61.83"
    assert any(n.startswith("Tie range:") for n in t.notes)
    # the same cell without tie ranges (written before them): four FAILs, range not recorded
    old, fails = reproduction(_board(ties=None), ["general-wiki"], strict)
    assert fails == 4
    assert {v[6].text for v in _rows(old).values()} == {"FAIL"}
    assert {v[7].text for v in _rows(old).values()} == {"not recorded"}
    assert any(n.startswith("not recorded") for n in old.notes)


def test_a_cell_of_another_file_is_other_data_not_a_failure():
    """A file named general-wiki that is not the pinned one (a subset, another version): its
    differences are "other data", not FAILs, with a note; the pinned file's cell still fails."""
    pinned = "f512990911287d032ccb49bf848d2738021cf91d"  # conf/corpus/general-wiki.yaml
    strict = Options(tolerance=0.0)
    t, fails = reproduction(_board(ties=None, blob="0" * 40), ["general-wiki"], strict)
    assert {v[6].text for v in _rows(t).values()} == {"other data"} and fails == 0
    said = "other data: the general-wiki cells were scored on a file (git blob 000000000000) that"
    assert any(n.startswith(said) for n in t.notes)
    t, fails = reproduction(_board(ties=None, blob=pinned), ["general-wiki"], strict)
    assert {v[6].text for v in _rows(t).values()} == {"FAIL"} and fails == 4


def test_a_number_outside_the_widened_range_still_fails():
    b = _board()
    b.references[0] = Reference(
        "rare-authors-repo", "general-wiki", "bm25", "BM25", "m", "coverage@10", 64.50
    )
    t, fails = reproduction(b, ["general-wiki"], Options(tolerance=0.05))
    # 64.50 lies 0.083 below the range's low end 64.583; 0.05 + 0.005 does not reach it
    assert _rows(t)["coverage@10"][6].text == "FAIL" and fails == 1
    t, fails = reproduction(b, ["general-wiki"], Options(tolerance=0.08))
    assert _rows(t)["coverage@10"][6].text == "OK (ties)" and fails == 0


def test_within_tolerance_stays_ok_and_stale_cells_never_pass_by_ties():
    t, fails = reproduction(_board(), ["general-wiki"], Options(tolerance=0.5))
    assert {v[6].text for v in _rows(t).values()} == {"OK"} and fails == 0
    t, fails = reproduction(_board(stale=True), ["general-wiki"], Options(tolerance=0.0))
    assert {v[6].text for v in _rows(t).values()} == {"FAIL"} and fails == 4


def test_no_dependence_shows_a_dash_and_bad_ranges_are_ignored():
    flat = {m: [v, v] for m, v in MEAN.items()}
    t, _ = reproduction(_board(ties=flat), ["general-wiki"], Options())
    assert {v[7].text for v in _rows(t).values()} == {"-"}
    assert not any(n.startswith("Tie range:") for n in t.notes)
    broken = _board(ties={"coverage@10": ["a", 1], "group_ndcg@10": [0.1], "group_mrr@10": None})
    entry = broken.cells["general-wiki"]["bm25"]
    assert tie_range(entry, "coverage@10") is None
    assert tie_range(entry, "group_ndcg@10") is None
    assert tie_range(entry, "group_mrr@10") is None
    assert tie_range(_board().cells["general-wiki"]["bm25"], "group_mrr@10") == pytest.approx(
        (48.630436563307496, 48.637704005438835)
    )


def test_renderers_show_the_tie_column_and_status():
    t, _ = reproduction(_board(), ["general-wiki"], Options(tolerance=0.0))
    md = squeeze(markdown(t))
    assert "| Δ | Status | Tie range |" in md
    assert "| +0.08 | OK (ties) | 64.58–64.66 |" in md
    tex = latex(t)
    assert r"$\Delta$ & Status & Tie range \\" in tex
    assert r"OK (ties) & 64.58--64.66 \\" in tex
    assert "OK (ties),64.58–64.66" in csv_text(t)
    page = table_html(t)
    assert '<td class="ok">OK (ties)</td>' in page and "64.58–64.66" in page
