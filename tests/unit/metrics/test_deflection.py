"""Deflection on the retrieval side: AUROC against hand counts and a brute-force pair count,
partial queries left out, empty rankings, distractor shares, and None when all answerable."""

import json
from itertools import product

import numpy as np
import pytest

from harness.core.files import to_json
from harness.core.run import Run
from harness.core.types import Benchmark, Chunk, Query
from metrics.deflection import auroc, deflection, label_key


def _q(qid, answerable="yes", labels=None):
    groups = () if answerable == "no" else (frozenset({"a"}),)
    absent = () if answerable == "yes" else (frozenset({"zz"}),)
    return Query(qid, qid, groups, absent=absent, answerable=answerable, labels=labels)


def _bench(queries):
    corpus = {c: Chunk(c, c) for c in "abcdefgh"}
    return Benchmark("t", corpus, tuple(queries), "sha256:0", "test")


QUERIES = [
    _q("y1"),
    _q("y2"),
    _q("y3", labels={"a": "RELATED"}),  # answerable: never counted for distractors
    _q("p1", "partial"),
    _q("n1", "no", labels={"a": "related information", "f": "IRRELEVANT"}),
    _q("n2", "no", labels={"g": "outdated"}),
    _q("n3", "no"),  # not in the run: an empty ranking, and no labels
]
RUN = Run.from_dict(
    {
        "y1": {"a": 3.0, "b": 1.0, "c": 0.5},  # top1 3, top2 mean 2.0, top5 mean 1.5
        "y2": {"a": 2.0, "d": 2.0},  # 2, 2.0, 2.0
        "y3": {"e": 1.0},  # 1, 1.0, 1.0 (mean of min(K, len) scores)
        "p1": {"a": 10.0},  # would lift every AUROC if it were counted as answerable
        "n1": {"a": 2.0, "f": 0.0},  # 2, 1.0, 1.0
        "n2": {"g": 0.5, "h": 0.5},  # 0.5; tie order: h (rank 1) before g (rank 2)
    }
)
DISTRACTORS = ["RELATED", "Related_Information", "OUTDATED"]


@pytest.fixture(scope="module")
def block():
    return deflection(_bench(QUERIES), RUN, [5, 2, 1], DISTRACTORS)


def test_counts_and_key_order(block):
    assert list(block) == ["n", "top1", "auroc", "distractors"]
    assert block["n"] == {"yes": 3, "partial": 1, "no": 3}
    assert list(block["auroc"]) == ["top1", "top1_mean", "top2_mean", "top5_mean"]


def test_top1_summary_linear_quartiles_and_empty_counted_apart(block):
    yes, no = block["top1"]["yes"], block["top1"]["no"]
    # yes top-1 scores 3, 2, 1: linear quartiles at positions 0.5 and 1.5
    assert yes == {
        "n": 3,
        "empty": 0,
        "mean": 2.0,
        "min": 1.0,
        "q25": 1.5,
        "median": 2.0,
        "q75": 2.5,
        "max": 3.0,
    }
    # no: 2.0 and 0.5 scored, n3 empty; 0.5 + 0.25 * 1.5 = 0.875
    assert no["n"] == 2 and no["empty"] == 1
    assert no["mean"] == pytest.approx(1.25)
    assert (no["q25"], no["median"], no["q75"]) == pytest.approx((0.875, 1.25, 1.625))
    assert block["top1"]["partial"]["max"] == 10.0


def test_auroc_by_hand_with_ties_and_an_empty_ranking(block):
    # top-1: yes [3, 2, 1] vs no [2, 0.5, -inf (n3 empty)]
    # (3,·) 1+1+1; (2,2) 1/2, (2,·) 1+1; (1,2) 0, (1,·) 1+1  -> 7.5 / 9
    assert block["auroc"]["top1"] == pytest.approx(7.5 / 9)
    assert block["auroc"]["top1_mean"] == block["auroc"]["top1"]
    # top-2 mean: yes [2, 2, 1] vs no [1, 0.5, -inf]: only (1,1) is a tie -> 8.5 / 9
    assert block["auroc"]["top2_mean"] == pytest.approx(8.5 / 9)
    # top-5 mean: yes [1.5, 2, 1] vs no [1, 0.5, -inf]: (1,1) tie -> 8.5 / 9
    assert block["auroc"]["top5_mean"] == pytest.approx(8.5 / 9)


def test_partial_queries_are_left_out_of_the_auroc(block):
    # Without p1 in the benchmark at all the AUROC is the same; counting it as answerable
    # (top-1 10 beats every negative) would change it.
    no_partial = deflection(_bench([q for q in QUERIES if q.query_id != "p1"]), RUN, [1], [])
    assert no_partial["auroc"]["top1"] == block["auroc"]["top1"]
    assert no_partial["n"]["partial"] == 0 and no_partial["top1"]["partial"]["mean"] is None
    assert auroc([3, 2, 1, 10], [2, 0.5, -np.inf]) != block["auroc"]["top1"]


def test_distractor_shares(block):
    d = block["distractors"]
    assert d["labels"] == ["outdated", "related", "related-information"]
    # n1: 'related information' at rank 1; n2: 'outdated' g at rank 2; n3 has no labels
    assert d["top1"] == {"share": 0.5, "queries": 1, "n": 2}
    assert d["top2"] == {"share": 1.0, "queries": 2, "n": 2}
    assert d["top5"] == {"share": 1.0, "queries": 2, "n": 2}


def test_no_distractor_block_without_labelled_unanswerable_queries_or_names():
    unlabelled = [_q("y1", labels={"a": "RELATED"}), _q("n1", "no")]
    got = deflection(_bench(unlabelled), RUN, [1], DISTRACTORS)
    assert "distractors" not in got
    assert "distractors" not in deflection(_bench(QUERIES), RUN, [1], [])


def test_none_when_every_query_is_answerable():
    assert deflection(_bench([_q("y1"), _q("y2")]), RUN, [1, 5], DISTRACTORS) is None


def test_auroc_none_when_a_class_is_empty():
    got = deflection(_bench([_q("y1"), _q("p1", "partial")]), RUN, [2], DISTRACTORS)
    assert got["auroc"] == {"top1": None, "top2_mean": None}
    assert got["n"] == {"yes": 1, "partial": 1, "no": 0}


def test_auroc_matches_a_brute_force_pair_count():
    rng = np.random.default_rng(7)
    for n_pos, n_neg in [(1, 1), (3, 5), (40, 25)]:
        pos = rng.integers(0, 6, n_pos).astype(float).tolist()  # few values: many ties
        neg = rng.integers(0, 6, n_neg).astype(float).tolist()
        pairs = [1.0 if p > n else 0.5 if p == n else 0.0 for p, n in product(pos, neg)]
        assert auroc(pos, neg) == pytest.approx(sum(pairs) / len(pairs), abs=1e-12)
    assert auroc([], [1.0]) is None and auroc([1.0], []) is None
    assert auroc([1.0, 1.0], [1.0]) == 0.5


def test_json_ready_and_deterministic(block):
    text = to_json(block)
    assert text == to_json(deflection(_bench(QUERIES), RUN, [1, 2, 5], DISTRACTORS))
    assert json.loads(text)["top1"]["no"]["empty"] == 1
    assert all(type(v) is float for v in block["auroc"].values())


def test_label_key_and_bad_cutoffs():
    assert label_key(" Related_Information ") == label_key("related information")
    with pytest.raises(ValueError, match="positive integers"):
        deflection(_bench(QUERIES), RUN, [0], [])
