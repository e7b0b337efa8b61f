"""BM25 on RedQA General-Wiki reproduces the RARE authors' published row (within 0.3 points)."""

import csv

from harness.cell.execute import run_cell
from tests.conftest import ROOT

TOLERANCE = 0.3  # percentage points


def _published(corpus: str, retriever: str, source: str) -> dict[str, float]:
    with open(ROOT / "harness" / "data" / "reference" / "rare.csv", newline="") as f:
        return {
            row["metric"]: float(row["value"])
            for row in csv.DictReader(f)
            if (row["corpus"], row["retriever"], row["source"]) == (corpus, retriever, source)
        }


def test_bm25_general_wiki_matches_published(general_wiki, tmp_path):
    expected = _published("general-wiki", "bm25", "rare-authors-repo")
    assert set(expected) == {"coverage@10", "perfrecall@10", "group_ndcg@10", "group_mrr@10"}
    cfg = {
        "retriever": {
            "name": "bm25",
            "type": "bm25",
            "k1": 1.5,
            "b": 0.75,
            "epsilon": 0.25,
            "tokenizer": "whitespace",
            "stopwords": False,
        },
        "corpus": {
            "name": "general-wiki",
            "format": "redqa",
            "path": str(general_wiki),
            "git_blob_sha1": "f512990911287d032ccb49bf848d2738021cf91d",
        },
        "metrics": {"names": ["coverage", "perfrecall", "group_ndcg", "group_mrr"], "k": [10]},
        "retrieval": {"depth": 10},
        "results": {"dir": str(tmp_path), "write": False},
    }
    result = run_cell(cfg)
    overall = result.aggregated["overall"]
    assert overall["n"] == 688
    assert {h: s["n"] for h, s in result.aggregated["hop"].items()} == {
        "1": 214,
        "2": 175,
        "3": 159,
        "4": 140,
    }
    for metric, published in expected.items():
        ours = 100 * overall["mean"][metric]
        assert abs(ours - published) <= TOLERANCE, f"{metric}: {ours:.2f} vs {published}"
