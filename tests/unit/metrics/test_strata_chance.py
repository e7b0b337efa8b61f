"""VRR against chance, the gain of a signal beyond hop, and the population-weighted estimate
(metrics/strata_stats.py), against hand-computed values and known expectations."""

import math

import numpy as np
import pytest

from metrics.strata_stats import (
    SMALL,
    pool_small,
    population_estimate,
    vrr,
    vrr_gain,
    vrr_test,
)


def _vrr_by_hand(values, labels):
    v = np.asarray(values, float)
    total = ((v - v.mean()) ** 2).sum()
    within = sum(((v[labels == k] - v[labels == k].mean()) ** 2).sum() for k in set(labels))
    return 1 - within / total


def test_pool_small_renames_strata_under_the_minimum():
    labels = ["a", "a", "a", "b", "c", "c", "n/a"]
    assert pool_small(labels, 2) == ["a", "a", "a", SMALL, "c", "c", SMALL]
    assert pool_small(labels, 1) == labels


def test_observed_vrr_is_the_plain_vrr():
    rng = np.random.default_rng(3)
    v = rng.random(200)
    labels = rng.integers(0, 7, 200)
    test = vrr_test(v, labels, permutations=50, seed=0)
    assert test.observed == pytest.approx(vrr(v, labels), abs=1e-12)
    assert test.observed == pytest.approx(_vrr_by_hand(v, labels), abs=1e-12)


@pytest.mark.parametrize("k", [2, 20, 100])
def test_chance_level_is_k_minus_1_over_n_minus_1(k):
    # under random reassignment to strata of fixed sizes, E[between SS / total SS] is exactly
    # (K - 1) / (n - 1), whatever the values
    rng = np.random.default_rng(k)
    n = 300
    v = rng.random(n) ** 3
    labels = rng.integers(0, k, n)
    k_used = len(set(labels.tolist()))
    test = vrr_test(v, labels, permutations=4000, seed=1)
    expected = (k_used - 1) / (n - 1)
    assert test.null == pytest.approx(expected, rel=0.05, abs=0.002)
    assert test.adjusted == pytest.approx((test.observed - test.null) / (1 - test.null))


def test_a_stratification_that_explains_everything_has_the_smallest_p():
    labels = np.repeat([0, 1, 2], 30)
    v = labels + np.random.default_rng(0).random(90) * 0.01
    test = vrr_test(v, labels, permutations=999, seed=0)
    assert test.p_value == pytest.approx(1 / 1000)
    assert test.adjusted > 0.99


def test_random_labels_are_not_significant_and_seed_fixes_the_result():
    rng = np.random.default_rng(11)
    v = rng.random(400)
    labels = rng.integers(0, 4, 400)
    a = vrr_test(v, labels, permutations=500, seed=7)
    b = vrr_test(v, labels, permutations=500, seed=7)
    assert a == b
    assert a.p_value > 0.05
    assert abs(a.adjusted) < 0.02


def test_nan_values_are_left_out_and_no_variance_is_none():
    v = np.array([0.0, 1.0, np.nan, 1.0, 0.0, 1.0])
    labels = ["a", "a", "b", "b", "c", "c"]
    keep = ~np.isnan(v)
    test = vrr_test(v, labels, permutations=10, seed=0)
    assert test.observed == pytest.approx(vrr(v[keep], np.array(labels)[keep]))
    assert vrr_test([1.0, 1.0, np.nan], ["a", "b", "b"], permutations=10) is None
    no_perm = vrr_test(v, labels, permutations=0)
    assert no_perm.null is None and no_perm.p_value is None


def test_gain_beyond_hop_by_hand():
    hop = np.array(["1"] * 6 + ["2"] * 6)
    sig = np.array(["low", "low", "low", "high", "high", "high"] * 2)
    v = np.array([1, 1, 0.8, 0.5, 0.4, 0.6, 0.5, 0.7, 0.6, 0.1, 0.0, 0.2])
    base, joint, test = vrr_gain(v, hop, sig, min_queries=3, permutations=200, seed=0)
    assert base == pytest.approx(_vrr_by_hand(v, hop))
    cells = np.array([h + s for h, s in zip(hop, sig)])
    assert joint == pytest.approx(_vrr_by_hand(v, cells))
    assert test.observed == pytest.approx(joint - base)


def test_gain_pools_small_cells_within_their_hop():
    hop = np.array(["1"] * 5 + ["2"] * 5)
    sig = np.array(["low"] * 4 + ["high"] + ["low"] * 3 + ["high"] * 2)
    v = np.arange(10.0) ** 2
    _, joint, _ = vrr_gain(v, hop, sig, min_queries=3, permutations=0)
    # hop 1: low (4) kept, high (1) -> small; hop 2: low (3) kept, high (2) -> small
    cells = np.array(["1low"] * 4 + ["1small"] + ["2low"] * 3 + ["2small"] * 2)
    assert joint == pytest.approx(_vrr_by_hand(v, cells))


def test_a_signal_that_is_hop_over_again_adds_nothing():
    rng = np.random.default_rng(5)
    hop = rng.integers(1, 5, 300)
    sig = np.where(hop <= 2, "low", "high")  # determined by hop
    v = hop + rng.random(300)
    base, joint, test = vrr_gain(v, hop, sig, min_queries=5, permutations=200, seed=0)
    assert test.observed == pytest.approx(0.0, abs=1e-12)
    assert test.p_value == pytest.approx(1.0)


def test_a_signal_that_matters_within_hop_is_found():
    rng = np.random.default_rng(6)
    hop = rng.integers(1, 4, 300)
    sig = rng.integers(0, 3, 300)
    v = hop + 0.8 * sig + rng.random(300)
    _, _, test = vrr_gain(v, hop, sig, min_queries=5, permutations=300, seed=0)
    assert test.p_value < 0.01
    assert test.observed > test.null
    assert 0 < test.adjusted <= 1


def test_population_estimate_by_hand():
    # clusters a (mass 0.5), b (0.3), c (0.2, no query); query means a = 0.5, b = 1.0
    values = [0.0, 1.0, 1.0, 1.0, np.nan, 0.4]
    clusters = ["a", "a", "b", "b", "b", None]
    est = population_estimate(values, clusters, {"a": 0.5, "b": 0.3, "c": 0.2})
    known = 0.5 * 0.5 + 0.3 * 1.0
    assert est["n_queries"] == 4
    assert est["plain"] == pytest.approx(0.75)
    assert est["uncovered"] == pytest.approx(0.2)
    assert est["weighted"] == pytest.approx(known / 0.8)
    assert est["bounds"] == pytest.approx([known, known + 0.2])
    assert est["bias"] == pytest.approx(0.75 - known / 0.8)
    # Σ_k (ŵ_k - w_k) mu_k with the uncovered cluster at 0 and at 1
    w_hat = {"a": 0.5, "b": 0.5}
    at = [
        sum((w_hat.get(k, 0) - w) * mu for k, w, mu in rows)
        for rows in (
            [("a", 0.5, 0.5), ("b", 0.3, 1.0), ("c", 0.2, 1.0)],
            [("a", 0.5, 0.5), ("b", 0.3, 1.0), ("c", 0.2, 0.0)],
        )
    ]
    assert est["bias_bounds"] == pytest.approx(at)


def test_population_estimate_counts_queries_of_clusters_without_mass():
    est = population_estimate([1.0, 0.0], ["a", "z"], {"a": 1.0})
    assert est["queries_in_massless_clusters"] == 1
    assert est["uncovered"] == 0 and est["weighted"] == 1.0
    empty = population_estimate([1.0], [None], {"a": 1.0})
    assert math.isnan(empty["plain"]) and empty["bounds"] is None
