"""Paired significance tests and bootstrap intervals over per-query metric values
(docs/metrics.md#confidence-intervals-and-paired-statistics).

All functions take per-query arrays aligned by query; NaN entries (queries without gold)
are dropped pairwise. Every random draw comes from a generator seeded by the caller, so a
rerun gives the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_BLOCK = 4_000_000  # elements per block of resamples: bounds memory for large query sets


@dataclass(frozen=True)
class Paired:
    """A paired comparison of candidate b against baseline a on the same queries."""

    n: int  # queries where both values are defined
    mean_a: float
    mean_b: float
    delta: float  # mean(b - a)
    ci: tuple[float, float]  # bootstrap CI of delta
    p_randomization: float
    p_ttest: float


def _pairs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"paired arrays differ in length: {a.shape} vs {b.shape}")
    keep = ~(np.isnan(a) | np.isnan(b))
    return a[keep], b[keep]


def randomization_test(
    a: np.ndarray, b: np.ndarray, *, permutations: int = 10_000, seed: int = 0
) -> float:
    """Two-sided Fisher randomization test of mean(b - a) = 0 by paired sign flips.

    p = (1 + #{flips with |mean| >= |observed|}) / (1 + permutations); 1.0 when no pair."""
    a, b = _pairs(a, b)
    d = b - a
    if len(d) == 0 or not np.any(d):
        return 1.0
    observed = abs(d.mean())
    rng = np.random.default_rng(seed)
    hits = 0
    rows = max(1, _BLOCK // len(d))
    done = 0
    while done < permutations:
        m = min(rows, permutations - done)
        signs = rng.integers(0, 2, size=(m, len(d)), dtype=np.int8) * 2 - 1
        means = np.abs(signs @ d) / len(d)
        # a small tolerance so flips equal to the observed mean up to rounding count as ties
        hits += int(np.count_nonzero(means >= observed - 1e-12 * max(1.0, observed)))
        done += m
    return (hits + 1) / (permutations + 1)


def bootstrap_means(values: np.ndarray, *, samples: int, seed: int) -> np.ndarray:
    """Means of `samples` resamples (with replacement) of the defined values."""
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    if len(v) == 0:
        return np.empty(0)
    rng = np.random.default_rng(seed)
    out = np.empty(samples)
    rows = max(1, _BLOCK // len(v))
    for start in range(0, samples, rows):
        m = min(rows, samples - start)
        idx = rng.integers(0, len(v), size=(m, len(v)))
        out[start : start + m] = v[idx].mean(axis=1)
    return out


def bootstrap_ci(
    values: np.ndarray, *, samples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean of the defined values; None when none is."""
    means = bootstrap_means(values, samples=samples, seed=seed)
    if len(means) == 0:
        return None
    tail = (1.0 - confidence) / 2
    lo, hi = np.quantile(means, [tail, 1.0 - tail])
    return float(lo), float(hi)


def paired_ttest(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided paired t-test p-value; 1.0 when all differences are equal to zero,
    0.0 when they are all equal and non-zero (no variance), NaN with fewer than 2 pairs."""
    a, b = _pairs(a, b)
    d = b - a
    if len(d) < 2:
        return math.nan
    if np.ptp(d) <= 1e-12:  # no variance (up to rounding): the t statistic is 0/0 or x/0
        return 1.0 if abs(d[0]) <= 1e-12 else 0.0
    from scipy import stats

    return float(stats.ttest_rel(b, a).pvalue)


def compare(
    a: np.ndarray,
    b: np.ndarray,
    *,
    permutations: int = 10_000,
    samples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Paired:
    """All paired statistics of b against a: means, delta, its bootstrap CI, p-values."""
    pa, pb = _pairs(a, b)
    n = len(pa)
    if n == 0:
        nan = math.nan
        return Paired(0, nan, nan, nan, (nan, nan), nan, nan)
    ci = bootstrap_ci(pb - pa, samples=samples, confidence=confidence, seed=seed)
    return Paired(
        n=n,
        mean_a=float(pa.mean()),
        mean_b=float(pb.mean()),
        delta=float((pb - pa).mean()),
        ci=ci if ci is not None else (math.nan, math.nan),
        p_randomization=randomization_test(pa, pb, permutations=permutations, seed=seed),
        p_ttest=paired_ttest(pa, pb),
    )


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values (step-down, monotone, capped at 1), in input order.

    NaN p-values are left NaN and do not count towards the number of tests."""
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(len(p), np.nan)
    valid = np.flatnonzero(~np.isnan(p))
    m = len(valid)
    order = valid[np.argsort(p[valid], kind="stable")]
    running = 0.0
    for i, idx in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[idx]))
        out[idx] = running
    return out.tolist()
