"""Per-query scoring and aggregation: NaN exclusion, missing queries, strata."""

import math

import numpy as np
import pytest

from harness.core.labels import label_order
from harness.core.run import Ranking, Run
from harness.core.types import Benchmark, Chunk, Query
from harness.strata.hop import hop_label, stratify
from metrics.evaluate import aggregate, per_query
from metrics.registry import metrics_for


def _bench():
    corpus = {c: Chunk(c, c) for c in "abcd"}
    queries = (
        Query("q1", "x", (frozenset("a"),)),
        Query("q2", "x", (frozenset("a"), frozenset("b"))),
        Query("q3", "x", ()),  # no gold
        Query("q4", "x", (frozenset("c"),)),  # not in the run
    )
    return Benchmark("t", corpus, queries, "sha256:0", "mem")


def test_per_query_and_aggregate():
    bench = _bench()
    run = Run.from_scores("r", {"q1": [("a", 1)], "q2": [("b", 2), ("d", 1)], "q3": [("a", 1)]}, 10)
    values = per_query(bench, run, metrics_for(["coverage"], [1], depth=10))
    cov = values["coverage@1"]
    assert cov[0] == 1.0 and cov[1] == 0.5 and math.isnan(cov[2]) and cov[3] == 0.0
    agg = aggregate(values, stratify(bench))
    assert agg["overall"]["n"] == 4
    assert agg["overall"]["excluded"]["coverage@1"] == 1
    assert agg["overall"]["mean"]["coverage@1"] == pytest.approx(1.5 / 3)
    assert list(agg["hop"]) == ["0", "1", "2"]
    assert agg["hop"]["1"]["n"] == 2 and agg["hop"]["1"]["mean"]["coverage@1"] == 0.5
    assert agg["hop"]["0"]["mean"]["coverage@1"] is None


def test_hop_labels():
    q = Query("q", "x", tuple(frozenset({str(i)}) for i in range(6)))
    assert hop_label(q) == "5+"
    assert label_order(["5+", "10", "2", "n/a"]) == ["2", "5+", "10", "n/a"]


def test_summary_mean_is_exact_over_defined_values():
    values = {"m": np.array([0.1] * 10 + [np.nan])}
    agg = aggregate(values, {})
    assert agg["overall"]["mean"]["m"] == 0.1 * 10 / 10


def test_codes_in_another_corpus_order_are_refused():
    corpus = {c: Chunk(c, c) for c in ("a", "b", "c")}
    bench = Benchmark("t", corpus, (Query("q", "x", (frozenset({"a"}),)),), "sha", "src")
    run = Run("r", {"q": Ranking(("a", "b"), (2.0, 1.0), np.array([1, 0]))}, depth=10)
    with pytest.raises(ValueError, match="do not follow the corpus order"):
        per_query(bench, run, metrics_for(["recall"], [1], depth=10))
    good = Run("r", {"q": Ranking(("a", "b"), (2.0, 1.0), np.array([0, 1]))}, depth=10)
    assert per_query(bench, good, metrics_for(["recall"], [1], depth=10))["R@1"][0] == 1.0


def test_a_judged_query_without_a_relevant_chunk_is_left_out_or_scores_zero():
    """no_relevant: "skip" leaves it out of the standard metrics' means (NaN), "zero" counts
    it 0 as trec_eval and ir_measures do; a query nobody judged stays NaN either way, and the
    group metrics do not change."""
    corpus = {c: Chunk(c, c) for c in "abcd"}
    queries = (
        Query("q1", "x", (frozenset("a"),), qrels={"a": 1, "b": 0}),
        Query("q2", "x", (), qrels={"b": 0, "c": -1}),  # judged, nothing relevant
        Query("q3", "x", ()),  # judged by nobody
        Query("q4", "x", (frozenset("d"),), qrels={"d": 1}),  # relevant at 1, not at 2
    )
    bench = Benchmark("t", corpus, queries, "sha256:0", "mem")
    run = Run.from_scores("r", {q.query_id: [("a", 2), ("b", 1)] for q in queries}, 10)
    metrics = metrics_for(["P@2", "nDCG@2", "AP", "coverage@2"], [2], depth=10, level=1)
    metrics += metrics_for(["P(rel=2)@2"], [2], depth=10)
    skip = per_query(bench, run, metrics)
    zero = per_query(bench, run, metrics, no_relevant="zero")
    assert np.isnan(skip["P@2"][[1, 2]]).all() and zero["P@2"][1] == 0.0
    assert np.isnan(zero["P@2"][2]) and np.isnan(zero["nDCG@2"][2]) and np.isnan(zero["AP"][2])
    assert zero["nDCG@2"][1] == 0.0 and zero["AP"][1] == 0.0
    assert np.isnan(skip["P(rel=2)@2"]).sum() == 4
    assert zero["P(rel=2)@2"].tolist()[:2] == [0.0, 0.0] and zero["P(rel=2)@2"][3] == 0.0
    for name in ("P@2", "nDCG@2", "AP"):  # a query with a relevant chunk: the same value
        assert zero[name][0] == skip[name][0] and zero[name][3] == skip[name][3]
    assert np.array_equal(zero["coverage@2"], skip["coverage@2"], equal_nan=True)
