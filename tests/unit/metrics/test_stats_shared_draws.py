"""compare_many shares its random draws among tests over as many queries; each result must be
the one a test made alone (checked against a plain one-test-at-a-time reference written
here), and the t-test without scipy.stats must agree with scipy.stats.ttest_rel."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from metrics import stats


def _reference(a, b, *, permutations, samples, confidence, seed, block):
    """One paired comparison, each draw made for it alone: the bootstrap CI of mean(b - a)
    and the sign-flip p, in blocks of `block` elements as the library draws them."""
    keep = ~(np.isnan(a) | np.isnan(b))
    d = b[keep] - a[keep]
    n = len(d)
    if n == 0:
        return None, math.nan
    rng = np.random.default_rng(seed)
    rows = max(1, block // n)
    means = []
    for start in range(0, samples, rows):
        idx = rng.integers(0, n, size=(min(rows, samples - start), n))
        means += [sum(d[i]) / n for i in idx]  # a plain sum: compared with a tolerance
    tail = (1 - confidence) / 2
    ci = tuple(np.quantile(means, [tail, 1 - tail]))
    if not np.any(d):
        return ci, 1.0
    rng = np.random.default_rng(seed)
    observed = abs(d.mean())
    hits = done = 0
    while done < permutations:
        m = min(rows, permutations - done)
        signs = rng.integers(0, 2, size=(m, n), dtype=np.int8) * 2 - 1
        for row in signs:
            flipped = abs(sum(s * x for s, x in zip(row.tolist(), d.tolist()))) / n
            hits += flipped >= observed - 1e-12 * max(1.0, observed)
        done += m
    return ci, (hits + 1) / (permutations + 1)


def _pairs(rng):
    """Tests over a few query sets: several share a length, some have NaNs, ties, no change."""
    out = []
    for n in (40, 40, 40, 13, 13, 7):
        a = rng.integers(0, 4, n) / 4  # few distinct values: flips tie with the observed mean
        b = np.where(rng.random(n) < 0.4, rng.integers(0, 4, n) / 4, a)
        out.append((a, b))
    a = rng.random(40)
    out.append((a, a.copy()))  # no difference at all
    a, b = rng.random(46), rng.random(46)
    a[:6] = np.nan  # 40 defined pairs: shares the draws of the 40-query tests
    out.append((a, b))
    out.append((np.full(3, np.nan), np.ones(3)))  # no defined pair
    return out


def test_compare_many_equals_each_test_alone(monkeypatch):
    monkeypatch.setattr(stats, "_BLOCK", 300)  # several blocks per test
    monkeypatch.setattr(stats, "_CACHED", 50)  # and several slices of each block
    pairs = _pairs(np.random.default_rng(5))
    opts = dict(permutations=499, samples=300, confidence=0.9, seed=7)
    got = stats.compare_many(pairs, **opts)
    assert len(got) == len(pairs)
    for (a, b), r in zip(pairs, got):
        ci, p = _reference(a, b, **opts, block=300)
        if ci is None:
            assert r.n == 0 and math.isnan(r.p_randomization) and math.isnan(r.ci[0])
            continue
        assert r.p_randomization == p
        assert r.ci == pytest.approx(ci, abs=1e-12)
        keep = ~(np.isnan(a) | np.isnan(b))
        assert r.n == keep.sum() and r.delta == pytest.approx(np.mean(b[keep] - a[keep]))
        assert r == stats.compare(a, b, **opts)  # one at a time: the very same numbers


def test_randomization_test_and_bootstrap_alone_match_the_reference():
    rng = np.random.default_rng(11)
    a = rng.integers(0, 3, 25) / 3
    b = np.where(rng.random(25) < 0.5, rng.integers(0, 3, 25) / 3, a)
    ci, p = _reference(a, b, permutations=999, samples=400, confidence=0.95, seed=2, block=10**9)
    assert stats.randomization_test(a, b, permutations=999, seed=2) == p
    got = stats.bootstrap_ci(b - a, samples=400, seed=2)
    assert got == pytest.approx(ci, abs=1e-12)


def test_bootstrap_slices_change_no_bit(monkeypatch):
    v = np.random.default_rng(4).random(37) ** 3
    whole = stats.bootstrap_means(v, samples=500, seed=1)
    monkeypatch.setattr(stats, "_CACHED", 100)  # two resamples of 37 at a time
    assert np.array_equal(stats.bootstrap_means(v, samples=500, seed=1), whole)


def test_paired_ttest_agrees_with_scipy_stats():
    rng = np.random.default_rng(3)
    for n in (2, 3, 10, 200, 2000):
        for _ in range(20):
            a = rng.random(n)
            b = a + rng.normal(0, rng.random(), n) * (rng.random(n) < 0.5)
            if np.ptp(b - a) <= 1e-12:
                continue
            want = scipy_stats.ttest_rel(b, a).pvalue
            # scipy 1.17 computes it in the same steps: equal to the last bit there
            assert stats.paired_ttest(a, b) == pytest.approx(want, rel=1e-12, abs=1e-300)
    assert stats.paired_ttest(np.ones(5), np.ones(5)) == 1.0  # no variance: as before
    assert stats.paired_ttest(np.zeros(5), np.ones(5)) == 0.0
    assert math.isnan(stats.paired_ttest(np.zeros(1), np.ones(1)))
