"""Paired tests, bootstrap intervals and Holm's correction on small hand-checkable inputs."""

import math
from itertools import product

import numpy as np
import pytest
from scipy import stats as sps

from metrics import stats


def test_randomization_exact_on_tiny_sample():
    # 4 differences: exhaustive enumeration of the 16 sign patterns gives the exact p-value.
    a = np.zeros(4)
    b = np.array([1.0, 2.0, 3.0, 0.5])
    d = b - a
    exact = np.mean([abs(np.dot(s, d)) >= abs(d.sum()) - 1e-12 for s in product([-1, 1], repeat=4)])
    p = stats.randomization_test(a, b, permutations=20_000, seed=1)
    assert exact == 2 / 16
    assert p == pytest.approx(exact, abs=0.01)


def test_randomization_identical_runs_and_seed():
    a = np.random.default_rng(0).random(50)
    assert stats.randomization_test(a, a) == 1.0
    b = a + np.random.default_rng(1).normal(0, 0.1, 50)
    assert stats.randomization_test(a, b, seed=3) == stats.randomization_test(a, b, seed=3)


def test_randomization_large_consistent_gain_hits_floor():
    a = np.zeros(40)
    b = np.full(40, 0.5)
    assert stats.randomization_test(a, b, permutations=999) == pytest.approx(1 / 1000)


def test_nan_pairs_are_dropped():
    a = np.array([0.1, np.nan, 0.3, 0.2])
    b = np.array([0.2, np.nan, 0.5, 0.2])
    r = stats.compare(a, b, permutations=100, samples=100)
    assert r.n == 3
    assert r.delta == pytest.approx((0.1 + 0.2 + 0.0) / 3)


def test_ttest_matches_scipy_and_degenerate_cases():
    rng = np.random.default_rng(2)
    a, b = rng.random(30), rng.random(30)
    assert stats.paired_ttest(a, b) == pytest.approx(sps.ttest_rel(b, a).pvalue)
    assert stats.paired_ttest(a, a) == 1.0
    assert stats.paired_ttest(a, a + 0.1) == 0.0
    assert math.isnan(stats.paired_ttest(a[:1], b[:1]))


def test_bootstrap_ci_brackets_mean_and_narrows_with_n():
    rng = np.random.default_rng(4)
    small, large = rng.random(30), rng.random(3000)
    lo, hi = stats.bootstrap_ci(small, samples=2000)
    assert lo < small.mean() < hi
    lo2, hi2 = stats.bootstrap_ci(large, samples=2000)
    assert (hi2 - lo2) < (hi - lo) / 5
    # the width of a 95% percentile interval is close to 2 * 1.96 standard errors
    se = large.std(ddof=1) / math.sqrt(len(large))
    assert hi2 - lo2 == pytest.approx(2 * 1.96 * se, rel=0.15)


def test_bootstrap_ci_constant_and_empty():
    assert stats.bootstrap_ci(np.full(10, 0.25)) == (0.25, 0.25)
    assert stats.bootstrap_ci(np.array([np.nan, np.nan])) is None


def test_bootstrap_blocks_give_same_distribution_shape():
    v = np.random.default_rng(5).random(10)
    means = stats.bootstrap_means(v, samples=1000, seed=0)
    assert len(means) == 1000 and means.min() >= v.min() and means.max() <= v.max()


def test_holm_hand_computed():
    # sorted: 0.01*4=0.04, 0.02*3=0.06, 0.03*2=0.06 (monotone), 0.5*1=0.5
    assert stats.holm([0.03, 0.01, 0.5, 0.02]) == pytest.approx([0.06, 0.04, 0.5, 0.06])
    assert stats.holm([0.9, 0.8]) == pytest.approx([1.0, 1.0])


def test_holm_ignores_nan():
    out = stats.holm([0.01, float("nan"), 0.04])
    assert out[0] == pytest.approx(0.02) and math.isnan(out[1]) and out[2] == pytest.approx(0.04)


def test_aggregates_total_counts_and_take_gm_map_geometrically():
    v = np.array([0.5, 0.0, 0.2])
    assert stats.aggregate(v) == pytest.approx(0.7 / 3)
    assert stats.aggregate(np.array([3.0, 4.0]), "sum") == 7.0
    # trec_eval's gm_map: AP floored at 1e-5, then the geometric mean
    want = math.exp((math.log(0.5) + math.log(1e-5) + math.log(0.2)) / 3)
    assert stats.aggregate(v, "geomean") == pytest.approx(want, rel=1e-12)
    assert stats.aggregate(np.array([]), "sum") is None
    lo, hi = stats.bootstrap_ci(np.array([1.0, 2.0, 3.0, 4.0]), kind="sum", seed=0)
    assert 4.0 <= lo < 10.0 < hi <= 16.0  # totals of resamples of 4 values from 1..4
    lo, hi = stats.bootstrap_ci(v, kind="geomean", seed=0)
    assert lo <= stats.aggregate(v, "geomean") <= hi


def test_paired_comparison_of_totals_and_geometric_means():
    rng = np.random.default_rng(4)
    a = rng.random(40)
    b = np.clip(a + rng.normal(0.05, 0.1, 40), 0, 1)
    mean, total, geo = stats.compare_many([(a, b)] * 3, kinds=["mean", "sum", "geomean"], seed=2)
    assert total.mean_a == pytest.approx(a.sum()) and total.mean_b == pytest.approx(b.sum())
    assert total.delta == pytest.approx(b.sum() - a.sum())
    assert total.ci == pytest.approx((40 * mean.ci[0], 40 * mean.ci[1]))
    assert total.p_randomization == mean.p_randomization  # the same test: sum = n * mean
    la, lb = np.log(np.maximum(a, 1e-5)), np.log(np.maximum(b, 1e-5))
    assert geo.delta == pytest.approx(math.exp(lb.mean()) - math.exp(la.mean()))
    assert geo.ci[0] <= geo.delta <= geo.ci[1]
    assert geo.p_ttest == pytest.approx(stats.paired_ttest(la, lb))  # on the logs it averages
    assert (geo.better, geo.worse) == (mean.better, mean.worse)


@pytest.mark.parametrize("confidence, least", [(0.95, 40), (0.99, 200), (0.9, 20), (0.5, 4)])
def test_min_resamples_puts_one_resample_in_each_tail(confidence, least):
    assert stats.min_resamples(confidence) == least
    tail = (1 - confidence) / 2
    assert least * tail >= 1 - 1e-9 > (least - 1) * tail


def test_a_metric_constant_up_to_rounding_has_no_vrr():
    from metrics.strata_stats import sigma_overall, vrr, vrr_test

    tenths = [0.1] * 10  # numpy's std is 1.4e-17 here, not 0
    labels = list("aabbccddee")
    assert sigma_overall(tenths) == 0.0 and math.isnan(vrr(tenths, labels))
    assert vrr_test(tenths, labels, permutations=10, seed=0) is None
    assert vrr([0.1, 0.2, 0.3, 0.4], list("aabb")) > 0.5
