"""The reproduction report compares a published number with the RARE authors'-setup cell
(`<name>-rare`) when it was run, else with the cell of the config the row names, labelled."""

from pathlib import Path

import pytest

from harness.report.leaderboard.collect import (
    AUTHORS,
    MODEL_CARD,
    SHIPPED,
    Board,
    Reference,
    has_authors_config,
)
from harness.report.leaderboard.render import markdown
from harness.report.leaderboard.tables import Options, reproduction
from tests.helpers.cells import cell
from tests.helpers.markdown import squeeze


def _entry(corpus, retriever, cov, display=None):
    doc = {
        "results": {"overall": {"n": 10, "mean": {"coverage@10": cov}}},
        "metrics": ["coverage@10"],
        "display_name": display,
    }
    return cell(corpus, retriever, doc)


def _ref(retriever, value, label):
    return Reference("rare-paper-table3", "finance", retriever, label, "m", "coverage@10", value)


@pytest.fixture
def board():
    b = Board(Path("/nowhere"))
    b.cells = {
        "finance": {
            # both configs of Qwen3-8B: the authors' setup matches, the model card would not
            "qwen3-8b": _entry("finance", "qwen3-8b", 0.60, "Qwen3-8B"),
            "qwen3-8b-rare": _entry("finance", "qwen3-8b-rare", 0.7290, "Qwen3-8B (RARE setup)"),
            # only the model card of BGE-M3, 2 points off
            "bge-m3": _entry("finance", "bge-m3", 0.6643, "BGE-M3"),
            # BM25 has one config, the authors' setup
            "bm25": _entry("finance", "bm25", 0.50, "BM25"),
        }
    }
    b.references = [
        _ref("qwen3-8b", 72.92, "Qwen3-8B"),
        _ref("bge-m3", 64.43, "BGE-M3"),
        _ref("bm25", 59.87, "BM25"),  # 9.87 points off: a FAIL that counts
        _ref("e5-large", 62.83, "E5-Large"),  # not run at all
    ]
    return b


def test_configs_with_an_authors_setup_are_known():
    assert has_authors_config("qwen3-8b") and has_authors_config("embeddinggemma-300m")
    assert not has_authors_config("bm25") and not has_authors_config("openai-large")
    assert not has_authors_config("qwen3-8b-rare")


def test_the_authors_cell_is_preferred(board):
    m = board.reproducing("finance", "qwen3-8b")
    assert (m.entry.retriever, m.config, m.label) == (
        "qwen3-8b-rare",
        AUTHORS,
        "Qwen3-8B (RARE setup)",
    )
    m = board.reproducing("finance", "bge-m3")
    assert (m.entry.retriever, m.config, m.label, m.counts) == (
        "bge-m3",
        MODEL_CARD,
        "BGE-M3 (model card)",
        False,
    )
    m = board.reproducing("finance", "bm25")
    assert (m.entry.retriever, m.config, m.counts) == ("bm25", SHIPPED, True)
    assert board.reproducing("finance", "e5-large") is None
    assert board.reproducing("legal", "bm25") is None


def test_reproduction_rows_say_which_config_they_compare(board):
    t, fails = reproduction(board, ["finance"], Options(tolerance=0.5))
    rows = {label: (vals[4].value, vals[5].text, vals[6].text) for label, vals in t.rows}
    assert rows["Qwen3-8B (RARE setup)"][0] == pytest.approx(72.90)
    assert rows["Qwen3-8B (RARE setup)"][1:] == ("-0.02", "OK")
    # a model-card cell is shown, labelled, and its miss is not a failed reproduction
    assert rows["BGE-M3 (model card)"][1:] == ("+2.00", "differs")
    assert rows["BM25"][2] == "FAIL"
    assert "Qwen3-8B" not in rows  # the model-card Qwen3-8B cell is not compared
    assert fails == 1  # BM25 only
    notes = "\n".join(t.notes)
    assert "compared: the authors' setup, bm25, qwen3-8b-rare" in notes
    assert "(model card): bge-m3 ran the model-card config" in notes
    assert "e5-large on finance" in notes  # not run
    md = squeeze(markdown(t))
    assert "| Qwen3-8B (RARE setup) | finance | coverage@10 |" in md


def test_a_missing_metric_names_the_authors_config_to_rescore(board):
    board.references.append(
        Reference(
            "rare-authors-repo", "finance", "qwen3-8b", "Qwen3-8B", "m", "group_ndcg@10", 60.35
        )
    )
    t, fails = reproduction(board, ["finance"], Options())
    assert fails == 1
    assert any("retriever=qwen3-8b-rare metrics.names=[group_ndcg@10]" in n for n in t.notes)


def test_long_csv_gives_the_authors_setup_cell_its_published_number(board):
    import csv
    import io

    from harness.report.leaderboard.publish import long_csv

    rows = list(csv.DictReader(io.StringIO(long_csv(board, ["finance"]))))
    published = {r["retriever"]: r["published"] for r in rows if r["stratification"] == "overall"}
    assert published["qwen3-8b-rare"] == "0.7292" and published["qwen3-8b"] == "0.7292"
    assert published["bm25"] == "0.5987"
