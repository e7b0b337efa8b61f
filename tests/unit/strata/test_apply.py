"""What a run derives from a strata document (harness/strata/apply.py): VRR with its chance
level and pooling, the gain beyond hop, hop × tertile tables, the coverage figures without
one-entity clusters and the population-weighted estimate, on a hand-built document."""

import numpy as np
import pytest

from harness.strata.apply import coverage_figures, hop_grids, population, variance
from metrics.strata_stats import SMALL, vrr

# 4 clusters: 0 (3 entities), 1 (2), 2 (1: a singleton), 3 (1: a singleton, untouched)
ENTITIES = [["a", "A", 0], ["b", "B", 0], ["c", "C", 0], ["d", "D", 1], ["e", "E", 1],
            ["f", "F", 2], ["g", "G", 3]]  # fmt: skip
CHUNKS = {"d1": [0, 1], "d2": [0, 3], "d3": [3, 4, 5], "d4": [5], "d5": [6], "d6": []}
DOC = {
    "summary": {"n_clusters": 4, "msc": 0.75, "scc": 0.8, "zqc": 1},
    "params": {"scc_min": 0},
    "clusters": [
        {"id": 0, "n_entities": 3, "n_queries": 2},
        {"id": 1, "n_entities": 2, "n_queries": 1},
        {"id": 2, "n_entities": 1, "n_queries": 1},
        {"id": 3, "n_entities": 1, "n_queries": 0},
    ],
    "entities": ENTITIES,
    "chunks": CHUNKS,
    "queries": {"q1": {"clusters": [0]}, "q2": {"clusters": [0, 1]}, "q3": {"clusters": [2]}},
}


def test_coverage_without_one_entity_clusters():
    c = coverage_figures(DOC, 2)
    assert c["n_clusters"] == 2 and c["msc"] == 1.0 and c["zqc"] == 0
    # chunks in a touched counted cluster (0 or 1): d1, d2, d3 of 6
    assert c["scc"] == pytest.approx(3 / 6)
    assert c["all"] == {"n_clusters": 4, "msc": 0.75, "scc": 0.8, "zqc": 1}
    every = coverage_figures(DOC, 1)
    assert every["n_clusters"] == 4 and every["msc"] == 0.75 and every["zqc"] == 1


def test_population_weights_clusters_by_their_chunks():
    # primary clusters: d1 -> 0, d2 -> 0 (tie 0/1 -> 0), d3 -> 1 (two of three), d4 -> 2,
    # d5 -> 3; d6 has no entity. Mass: 0 = 2/5, 1 = 1/5, 2 = 1/5, 3 = 1/5
    values = {"m": np.array([1.0, 0.0, 0.5, np.nan])}
    got = population(values, ["0", "0", "2", "1"], DOC)
    assert got["n_clusters_with_mass"] == 4 and got["n_chunks_without_cluster"] == 1
    e = got["estimate"]["m"]
    known = 0.4 * 0.5 + 0.2 * 0.5  # clusters 0 and 2 have a defined value
    assert e["uncovered"] == pytest.approx(0.4)  # clusters 1 (NaN only) and 3
    assert e["weighted"] == pytest.approx(known / 0.6)
    assert e["bounds"] == pytest.approx([known, known + 0.4])
    assert e["plain"] == pytest.approx(0.5)


def test_variance_pools_small_strata_and_tests_against_chance():
    rng = np.random.default_rng(0)
    hop = ["1"] * 40 + ["2"] * 40 + ["3"] * 2
    v = np.array([0.9] * 40 + [0.3] * 40 + [0.5, 0.6]) + rng.random(82) * 0.1
    out = variance({"m": v}, {"hop": hop}, min_queries=5, permutations=200, seed=0)
    e = out["m"]["by"]["hop"]
    pooled = ["1"] * 40 + ["2"] * 40 + [SMALL] * 2
    assert e["vrr"] == pytest.approx(vrr(v, pooled))
    assert e["n_strata"] == 3 and e["pooled_queries"] == 2
    assert e["p_value"] == pytest.approx(1 / 201) and e["vrr_null"] < 0.05
    assert "beyond_hop" not in out["m"]
    none = variance({"m": v}, {"hop": hop}, permutations=0)["m"]["by"]["hop"]
    assert none["vrr_null"] is None and none["p_value"] is None and none["vrr"] == e["vrr"]


def test_beyond_hop_and_hop_grids():
    hop = ["1"] * 30 + ["2"] * 30
    disp = (["low", "high"] * 15) * 2
    v = np.array([0.9 if h == "1" else 0.2 for h in hop]) + np.array(
        [0.05 if d == "low" else 0.0 for d in disp]
    )
    strata = {"hop": hop, "dispersion": disp}
    out = variance({"m": v}, strata, min_queries=5, permutations=100, seed=0)
    g = out["m"]["beyond_hop"]["dispersion"]
    assert g["vrr_hop"] + g["gain"] == pytest.approx(g["vrr_joint"])
    assert g["vrr_joint"] == pytest.approx(1.0)
    assert g["p_value"] < 0.05
    grids = hop_grids({"m": v}, strata)
    assert list(grids) == ["dispersion"]
    assert grids["dispersion"]["n"] == {"1": {"low": 15, "mid": 0, "high": 15},
                                        "2": {"low": 15, "mid": 0, "high": 15}}  # fmt: skip
    assert grids["dispersion"]["mean"]["m"]["2"]["low"] == pytest.approx(0.25)
    assert grids["dispersion"]["mean"]["m"]["1"]["mid"] is None
