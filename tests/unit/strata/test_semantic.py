"""Δ, J, primary clusters, tertiles, MSC/SCC/ZQC, σ_within, VRR, cluster aggregates and win
rates on a hand-built tiny entity-cluster assignment, against values worked out by hand."""

import math

import pytest

from harness.strata.semantic import (
    Tertiles,
    alignment,
    cluster_mass,
    corpus_coverage,
    dispersion,
    primary_cluster,
)
from metrics.strata_stats import (
    cluster_aggregates,
    sigma_overall,
    sigma_within,
    vrr,
    win_rates,
)

# Entity mentions per chunk, as cluster ids (5 clusters, 0-4). d5 has no entity.
CHUNKS = {"d1": [0, 0, 1], "d2": [1], "d3": [2, 2], "d4": [3], "d5": [], "d6": [4]}
# query -> (gold chunks, clusters its own entities map to)
QUERIES = {
    "qa": (["d1", "d2"], {0}),
    "qb": (["d3"], {2, 3}),
    "qc": (["d1", "d3"], set()),
    "qd": (["d5"], {1}),
}


def _mentions(q):
    return [c for d in QUERIES[q][0] for c in CHUNKS[d]]


def test_dispersion_by_hand():
    assert dispersion(_mentions("qa")) == pytest.approx(0.5)  # 2 of 4 in cluster 0, 2 in 1
    assert dispersion(_mentions("qb")) == 0.0  # all evidence in one cluster
    assert dispersion(_mentions("qc")) == pytest.approx(1 - (0.4**2 + 0.2**2 + 0.4**2))  # 0.64
    assert math.isnan(dispersion(_mentions("qd")))  # gold chunk without entities


def test_alignment_by_hand():
    gold = {q: {c for d in g for c in CHUNKS[d]} for q, (g, _) in QUERIES.items()}
    assert alignment(QUERIES["qa"][1], gold["qa"]) == 0.5  # {0} vs {0, 1}
    assert alignment(QUERIES["qb"][1], gold["qb"]) == 0.5  # {2, 3} vs {2}
    assert math.isnan(alignment(QUERIES["qc"][1], gold["qc"]))  # no query entity
    assert math.isnan(alignment(QUERIES["qd"][1], gold["qd"]))  # no gold entity


def test_primary_cluster_ties_go_to_the_smallest_id():
    assert primary_cluster(_mentions("qa")) == 0  # 0 and 1 tie at 2 mentions
    assert primary_cluster(_mentions("qb")) == 2
    assert primary_cluster(_mentions("qc")) == 0  # 0 and 2 tie at 2
    assert primary_cluster(_mentions("qd")) is None


def test_tertiles_by_hand():
    deltas = [dispersion(_mentions(q)) for q in QUERIES]  # 0.5, 0, 0.64, nan
    t = Tertiles.fit(deltas)
    # sorted 0, 0.5, 0.64: the 1/3 quantile sits 2/3 of the way from 0 to 0.5, the 2/3
    # quantile 1/3 of the way from 0.5 to 0.64
    assert t.low_max == pytest.approx(1 / 3)
    assert t.mid_max == pytest.approx(0.5 + 0.14 / 3)
    assert [t.label(d) for d in deltas] == ["mid", "low", "high", "n/a"]
    assert t.label(1 / 3) == "low"  # closed on the right
    assert Tertiles.fit([math.nan]) is None


def test_corpus_coverage_by_hand():
    touched = [cs for _, cs in QUERIES.values()]
    chunk_clusters = {d: set(cs) for d, cs in CHUNKS.items()}
    cov = corpus_coverage(chunk_clusters, touched, 5, scc_min=0)
    assert cov.msc == 4 / 5  # cluster 4 is touched by no query
    assert cov.zero_query == {4: 1}  # ... and holds one chunk (d6)
    assert cov.scc == 4 / 6  # d1-d4 sit in touched clusters; d5 (no entity) and d6 do not
    assert cov.queries_per_cluster == {0: 1, 1: 1, 2: 1, 3: 1, 4: 0}
    assert cov.chunks_per_cluster == {0: 1, 1: 2, 2: 1, 3: 1, 4: 1}
    assert corpus_coverage(chunk_clusters, touched, 5).scc == 0.0  # no cluster has > 5 queries


def test_sigma_within_and_vrr_by_hand():
    values = [1.0, 0.0, 1.0, 0.5, math.nan]
    labels = ["x", "x", "y", "y", "y"]
    # defined values 1, 0, 1, .5: mean .625, variance .6875 / 4
    assert sigma_overall(values) == pytest.approx(math.sqrt(0.6875 / 4))
    # x: var .25 (n 2), y: var .0625 (n 2) -> (2 * .25 + 2 * .0625) / 4
    assert sigma_within(values, labels) == pytest.approx(math.sqrt(0.625 / 4))
    assert vrr(values, labels) == pytest.approx(1 - 0.625 / 0.6875)  # 1/11
    assert vrr(values, ["all"] * 5) == pytest.approx(0.0)  # one stratum explains nothing
    assert vrr(values, ["a", "b", "c", "d", "e"]) == pytest.approx(1.0)  # one query each
    assert math.isnan(vrr([0.3, 0.3], ["a", "b"]))


def test_cluster_aggregates_by_hand():
    values = [1.0, 0.0, 1.0, 0.5, 0.2, math.nan]
    clusters = ["A", "A", "B", "B", None, "B"]
    agg = cluster_aggregates(values, clusters, min_queries=2)
    assert agg.overall == pytest.approx(2.7 / 5)  # every defined value, clustered or not
    assert agg.macro == pytest.approx((0.5 + 0.75) / 2) and agg.median == agg.macro
    assert (agg.worst, agg.worst_cluster) == (0.5, "A")
    assert math.isnan(cluster_aggregates(values, clusters, min_queries=3).worst)


def test_win_rates():
    clusters = [0, 0, 0, 1, 1, 1, 2, 2, 2, 2]
    b = [0.1, 0.4, 0.3, 0.2, 0.5, 0.6, 0.1, 0.0, 0.9, 0.3]
    better = [x + 0.1 for x in b]
    rates = win_rates(better, b, clusters, resamples=200, seed=1, min_queries=1)
    assert {k: r for k, (r, _) in rates.items()} == dict.fromkeys(rates, 1.0)
    same = win_rates(b, b, clusters, resamples=50, min_queries=1)
    assert all(r == 0.5 and n == 50 for r, n in same.values())  # ties count half
    again = win_rates(better, b, clusters, resamples=200, seed=1, min_queries=1)
    assert again == rates  # fixed seed


def test_coverage_counts_only_the_clusters_asked_for():
    touched = [cs for _, cs in QUERIES.values()]
    chunk_clusters = {d: set(cs) for d, cs in CHUNKS.items()}
    # leave cluster 3 (touched by qb, holds d4) and cluster 4 (untouched, holds d6) out
    cov = corpus_coverage(chunk_clusters, touched, 5, scc_min=0, counted={0, 1, 2})
    assert cov.msc == 1.0
    assert cov.zero_query == {}
    assert cov.scc == 3 / 6  # d1-d3 sit in a counted touched cluster; SCC is still of 6 chunks


def test_cluster_mass_is_the_share_of_chunks_whose_primary_cluster_it_is():
    mass, without = cluster_mass(CHUNKS)
    # d1 -> 0 (two mentions of 0), d2 -> 1, d3 -> 2, d4 -> 3, d6 -> 4; d5 has no entity
    assert without == 1
    assert mass == {0: 0.2, 1: 0.2, 2: 0.2, 3: 0.2, 4: 0.2}
    tie, _ = cluster_mass({"x": [3, 1], "y": [1]})
    assert tie == {1: 1.0}  # x's tie goes to the smaller id
