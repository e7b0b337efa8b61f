"""Hand-computed values for each trec_eval metric on one small graded example."""

import math

import numpy as np
import pytest

from harness.core.run import Ranking
from metrics.standard import evaluate, flat_codes, prepare

# qrels: a=3, b=1, c=2, z=1 (never retrieved), w=0 (judged non-relevant)
QRELS = {"a": 3, "b": 1, "c": 2, "z": 1, "w": 0}
RANKED = ("a", "x", "b", "y", "c")


def _one(family, k=None, level=1, ranked=RANKED, qrels=QRELS):
    return float(evaluate([ranked], [qrels], [(family, k)], level=level)[(family, k)][0])


def test_ids_are_coded_among_judged_ids():
    flat, offsets = flat_codes([RANKED, ("c",), ()], prepare([QRELS, QRELS, {}]))
    code = prepare([QRELS]).code
    assert offsets.tolist() == [0, 5, 6, 6]
    assert flat.tolist() == [code["a"], -1, code["b"], -1, code["c"], code["c"]]


def test_past_the_end_counts_as_not_relevant():
    vals = evaluate([("c",)], [QRELS], [("P", 6), ("recall", 6), ("ndcg", 2)])
    assert vals[("P", 6)].tolist() == [1 / 6]
    assert vals[("recall", 6)].tolist() == [1 / 4]
    assert vals[("ndcg", 2)].tolist() == [2 / (3 + 2 / math.log2(3))]


def test_corpus_codes_match_like_ids():
    vocab = {c: i for i, c in enumerate(["w", "x", "y", "a", "b", "c", "q"])}
    coded = Ranking(RANKED, (5.0, 4.0, 3.0, 2.0, 1.0), np.array([vocab[c] for c in RANKED]))
    judged = prepare([QRELS, {"q": 1}], vocab)  # z is judged but not in the corpus
    flat, _ = flat_codes([coded, ("q", "z")], judged)
    # ids are corpus positions; z, judged but not in the corpus, gets a code past them all
    assert flat.tolist() == [3, 1, 4, 2, 5, 6, 7]
    got = evaluate([coded, ("q", "z")], judged, [("recall", 2), ("P", 5)])
    assert got[("recall", 2)].tolist() == [1 / 4, 1.0]  # z is judged for query 1 only
    wanted = [("ndcg", 3), ("recall", 5), ("map", None)]
    a = evaluate([coded], judged_one := prepare([QRELS], vocab), wanted)
    b = evaluate([RANKED], [QRELS], wanted)
    assert judged_one.corpus_coded
    assert {k: v.tolist() for k, v in a.items()} == {k: v.tolist() for k, v in b.items()}


@pytest.mark.parametrize(
    "family,k,level,want",
    [
        ("P", 1, 1, 1.0),
        ("P", 3, 1, 2 / 3),
        ("P", 10, 1, 3 / 10),  # divides by K even past the end of the list
        ("recall", 3, 1, 2 / 4),
        ("recall", 5, 1, 3 / 4),
        ("success", 1, 1, 1.0),
        ("recip_rank", 5, 1, 1.0),
        ("map", 3, 1, (1 + 2 / 3) / 4),  # divides by all 4 relevant, not min(K, R)
        ("map", None, 1, (1 + 2 / 3 + 3 / 5) / 4),
        ("Rprec", None, 1, 2 / 4),  # top R=4: a, x, b, y
        # DCG@3 = 3/log2(2) + 1/log2(4); ideal grades 3, 2, 1 (z counts though not retrieved)
        ("ndcg", 3, 1, (3 + 0.5) / (3 + 2 / math.log2(3) + 0.5)),
        ("recall", 5, 2, 1.0),  # level 2: only a and c are relevant
        ("P", 3, 2, 1 / 3),
        ("map", None, 2, (1 + 2 / 5) / 2),
        ("Rprec", None, 2, 1 / 2),
        ("ndcg", 3, 2, (3 + 0.5) / (3 + 2 / math.log2(3) + 0.5)),  # gains ignore the level
    ],
)
def test_hand_computed(family, k, level, want):
    assert _one(family, k, level) == pytest.approx(want, abs=1e-12)


def test_first_relevant_late():
    ranked = ("x", "y", "b")
    assert _one("recip_rank", 3, ranked=ranked) == pytest.approx(1 / 3)
    assert _one("recip_rank", 2, ranked=ranked) == 0.0
    assert _one("success", 2, ranked=ranked) == 0.0
    assert _one("success", 3, ranked=ranked) == 1.0


def test_rprec_when_fewer_retrieved_than_relevant():
    assert _one("Rprec", ranked=("a",)) == pytest.approx(1 / 4)


def test_negative_grade_earns_no_gain():
    qrels = {"n": -2, "a": 1}
    assert _one("ndcg", 2, ranked=("n", "a"), qrels=qrels) == pytest.approx(1 / math.log2(3))


@pytest.mark.parametrize(
    "family,k",
    [
        ("P", 5),
        ("recall", 5),
        ("map", None),
        ("ndcg", 5),
        ("recip_rank", 5),
        ("success", 5),
        ("Rprec", None),
    ],
)
def test_only_zero_judgments_is_nan(family, k):
    assert math.isnan(_one(family, k, qrels={"a": 0, "b": 0}))


def test_level_leaves_ndcg_defined_when_binary_metrics_are_not():
    qrels = {"a": 1}
    assert math.isnan(_one("recall", 5, level=2, ranked=("a",), qrels=qrels))
    assert _one("ndcg", 5, level=2, ranked=("a",), qrels=qrels) == 1.0


def test_level_below_one_rejected():
    with pytest.raises(ValueError, match="relevance level"):
        _one("P", 1, level=0)


def test_a_cutoff_past_every_list_costs_nothing_and_keeps_its_meaning():
    """K = 10^12 (a typo, or 'everything'): the scans stop at the longest list or judgment
    list, P@K still divides by K, RR@K is RR, and the group metrics equal their value at any
    K past the lists."""
    from metrics import group

    rankings = [["a", "x", "b"], ["y"], []]
    judgments = [{"a": 1, "b": 2}, {"z": 1}, {"c": 1}]
    huge, deep = 10**12, 50
    wanted = [
        (f, k)
        for f in ("P", "recall", "map", "ndcg", "recip_rank", "success")
        for k in (huge, deep)
    ]
    out = evaluate(rankings, judgments, wanted)
    for family in ("recall", "map", "ndcg", "recip_rank", "success"):
        assert out[(family, huge)].tolist() == out[(family, deep)].tolist(), family
    assert out[("P", huge)].tolist() == [2 / huge, 0.0, 0.0]
    assert out[("recip_rank", huge)].tolist() == [1.0, 0.0, 0.0]
    groups = [[frozenset({"a"}), frozenset({"b", "q"})], [frozenset({"z"})], []]
    keys = [
        (f, k) for f in ("coverage", "perfrecall", "group_ndcg", "group_mrr") for k in (huge, deep)
    ]
    values = group.evaluate(groups, rankings, keys)
    for f in ("coverage", "perfrecall", "group_ndcg", "group_mrr"):
        assert values[(f, huge)][:2] == values[(f, deep)][:2], f
