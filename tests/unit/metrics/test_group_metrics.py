"""Group (RARE) metrics against hand-computed values."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.run import Run
from metrics.group import evaluate as group_evaluate
from tests.helpers import group_reference as reference


def _one(family):
    """The library's value of `family` for one query (metrics.group.evaluate)."""
    return lambda groups, ranked, k: group_evaluate([groups], [ranked], [(family, k)])[(family, k)][
        0
    ]


coverage, perfrecall, ndcg, mrr = map(_one, ("coverage", "perfrecall", "group_ndcg", "group_mrr"))

# b is shared by G1 and G3.
GROUPS = (frozenset({"a", "b"}), frozenset({"c"}), frozenset({"b", "d"}))
RANKED = ["x", "b", "c", "y", "d"]
L2, L3, L4, L6 = (1 / math.log2(n) for n in (2, 3, 4, 6))  # 1/log2(j+1) for j = 1, 2, 3, 5
IDCG3 = L2 + L3 + L4


@pytest.mark.parametrize("k, expected", [(1, 0.0), (2, 2 / 3), (3, 1.0), (10, 1.0)])
def test_coverage(k, expected):
    assert coverage(GROUPS, RANKED, k) == pytest.approx(expected)


@pytest.mark.parametrize("k, expected", [(2, 0.0), (3, 1.0)])
def test_perfrecall(k, expected):
    assert perfrecall(GROUPS, RANKED, k) == expected


def test_ndcg_shared_chunk_marks_first_unmatched_group_only():
    # b (rank 2) matches G1 only; d (rank 5) later matches G3.
    assert ndcg(GROUPS, RANKED, 5) == pytest.approx((L3 + L4 + L6) / IDCG3)
    assert ndcg(GROUPS, RANKED, 3) == pytest.approx((L3 + L4) / IDCG3)


def test_ndcg_ideal_is_cut_at_k():
    # one hit at rank 1 with k=2: IDCG has min(m, k) = 2 terms.
    assert ndcg(GROUPS, ["a"], 2) == pytest.approx(L2 / (L2 + L3))


def test_mrr():
    assert mrr(GROUPS, RANKED, 5) == pytest.approx((1 / 2 + 1 / 3 + 1 / 2) / 3)
    assert mrr(GROUPS, RANKED, 2) == pytest.approx((1 / 2 + 0 + 1 / 2) / 3)


def test_duplicate_retrieved_ids_earn_once():
    ranked = ["b", "b", "c"]
    assert ndcg(GROUPS, ranked, 3) == pytest.approx((L2 + L4) / IDCG3)
    assert mrr(GROUPS, ranked, 3) == pytest.approx((1 + 1 / 3 + 1) / 3)
    assert coverage(GROUPS, ranked, 2) == pytest.approx(2 / 3)


def test_fewer_results_than_k():
    assert coverage(GROUPS, ["c"], 10) == pytest.approx(1 / 3)
    assert perfrecall(GROUPS, ["c"], 10) == 0.0
    assert ndcg(GROUPS, ["c"], 10) == pytest.approx(L2 / IDCG3)
    assert mrr(GROUPS, ["c"], 10) == pytest.approx(1 / 3)
    assert coverage(GROUPS, [], 10) == 0.0


def test_ties_follow_canonical_order():
    run = Run.from_scores("r", {"q": [("a", 1.0), ("c", 1.0), ("b", 2.0)]}, depth=10)
    ranked = run["q"].ids
    assert ranked == ("b", "c", "a")  # score desc, then id desc
    groups = (frozenset({"a"}),)
    assert coverage(groups, ranked, 2) == 0.0
    assert mrr(groups, ranked, 10) == pytest.approx(1 / 3)


@pytest.mark.parametrize("fn", [coverage, perfrecall, ndcg, mrr])
def test_no_gold_is_nan(fn):
    assert math.isnan(fn((), ["a", "b"], 10))


@settings(max_examples=300, deadline=None)
@given(
    groups=st.lists(st.frozensets(st.sampled_from("abcdefgh"), min_size=1, max_size=3), max_size=4),
    ranked=st.lists(st.sampled_from("abcdefghij"), max_size=12),
    ks=st.lists(st.integers(1, 14), min_size=1, max_size=3, unique=True),
)
def test_batched_group_metrics_equal_the_per_query_definitions(groups, ranked, ks):
    """Overlapping groups, duplicate ids in the list, K past its end: the one-pass batch
    gives each definition's value."""
    functions = {
        f: getattr(reference, f.removeprefix("group_"))
        for f in ("coverage", "perfrecall", "group_ndcg", "group_mrr")
    }
    wanted = [(f, k) for f in functions for k in ks]
    got = group_evaluate([tuple(groups)], [ranked], wanted)
    for family, k in wanted:
        want = functions[family](tuple(groups), ranked, k)
        assert got[(family, k)][0] == pytest.approx(want, nan_ok=True), (family, k)
