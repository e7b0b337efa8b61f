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

MIN_GEO_MEAN = 1e-5  # gm_map's floor for a query's AP, as trec_eval's
_BLOCK = 4_000_000  # elements per block of resamples: bounds memory for large query sets
_CACHED = 131_072  # elements (1 MiB of float64) gathered per vector at a time


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
    better: int = 0  # queries where b is above a
    worse: int = 0  # queries where b is below a


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
    return _randomization_ps([b - a], permutations=permutations, seed=seed)[0]


def _randomization_ps(diffs: Sequence[np.ndarray], *, permutations: int, seed: int) -> list[float]:
    """randomization_test's p for each difference vector, all of one length: they share the
    sign flips, which a fresh generator with the same seed would draw alike for each."""
    out = [1.0] * len(diffs)
    live = [k for k, d in enumerate(diffs) if len(d) and np.any(d)]
    if not live:
        return out
    d = np.stack([diffs[k] for k in live], axis=1)  # (n, vectors): one product for all
    n = len(d)
    observed = np.abs(d.mean(axis=0))
    # a small tolerance so flips equal to the observed mean up to rounding count as ties
    # (BLAS sums in an order of its own, which varies with its threads and the matrix shape)
    ties = observed - 1e-12 * np.maximum(1.0, observed)
    hits = np.zeros(len(live), dtype=np.int64)
    rng = np.random.default_rng(seed)
    rows = max(1, _BLOCK // n)
    done = 0
    while done < permutations:
        m = min(rows, permutations - done)
        signs = rng.integers(0, 2, size=(m, n), dtype=np.int8) * 2 - 1
        means = np.abs(signs.astype(np.float64) @ d) / n
        hits += np.count_nonzero(means >= ties, axis=0)
        done += m
    for k, h in zip(live, hits.tolist()):
        out[k] = (h + 1) / (permutations + 1)
    return out


def aggregate(defined: np.ndarray, kind: str = "mean") -> float | None:
    """One number from a metric's defined per-query values: their mean, their total ("sum",
    the counts) or their geometric mean with each floored at MIN_GEO_MEAN ("geomean",
    trec_eval's gm_map); None when there is none."""
    if not len(defined):
        return None
    if kind == "sum":
        return math.fsum(defined.tolist())
    return _finish(math.fsum(_prepared(defined, kind).tolist()) / len(defined), kind, 1)


def _prepared(values: np.ndarray, kind: str) -> np.ndarray:
    """What is averaged: the values, or for a geometric mean their floored logarithms."""
    if kind == "geomean":
        return np.log(np.maximum(values, MIN_GEO_MEAN))
    return values


def _finish(mean: float, kind: str, n: int) -> float:
    """The aggregate from the mean of the prepared values."""
    if kind == "sum":
        return mean * n
    return math.exp(mean) if kind == "geomean" else mean


def bootstrap_means(values: np.ndarray, *, samples: int, seed: int) -> np.ndarray:
    """Means of `samples` resamples (with replacement) of the defined values."""
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    if len(v) == 0:
        return np.empty(0)
    return _bootstrap_many([v], samples=samples, seed=seed)[0]


def _bootstrap_many(values: Sequence[np.ndarray], *, samples: int, seed: int) -> list[np.ndarray]:
    """bootstrap_means of each vector (defined values, all of one length n > 0); they share
    the resample indices, which a fresh generator with the same seed would draw alike."""
    n = len(values[0])
    rng = np.random.default_rng(seed)
    outs = [np.empty(samples) for _ in values]
    rows = max(1, _BLOCK // n)
    step = max(1, _CACHED // n)
    for start in range(0, samples, rows):
        m = min(rows, samples - start)
        idx = rng.integers(0, n, size=(m, n))
        # a few hundred resamples at a time: what every vector gathers stays in the CPU cache
        for lo in range(0, m, step):
            part = idx[lo : lo + step]
            for v, out in zip(values, outs):
                out[start + lo : start + lo + len(part)] = v[part].mean(axis=1)
    return outs


def bootstrap_ci(
    values: np.ndarray,
    *,
    samples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    kind: str = "mean",
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the aggregate (`kind`, see `aggregate`) of the
    defined values; None when none is."""
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    means = bootstrap_means(_prepared(v, kind), samples=samples, seed=seed)
    if len(means) == 0:
        return None
    lo, hi = _interval(means, confidence)  # each aggregate rises with the mean: same order
    return float(_finish(lo, kind, len(v))), float(_finish(hi, kind, len(v)))


def min_resamples(confidence: float) -> int:
    """The fewest resamples whose percentile interval at `confidence` has a resample in each
    tail (40 at 95%); with fewer both ends are the extreme resamples, or one resample."""
    return math.ceil(2 / (1 - confidence) - 1e-9)


def _interval(means: np.ndarray, confidence: float) -> tuple[float, float]:
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
    # scipy.stats.ttest_rel(b, a) step by step, as scipy 1.17 computes it: importing
    # scipy.stats costs 0.7 s (most of a `python -m harness.compare`), scipy.special 0.2 s.
    from scipy.special import stdtr

    n = len(d)
    var = np.mean((d - d.mean()) ** 2) * (n / (n - 1))
    t = d.mean() / np.sqrt(var / n)
    return float(2 * stdtr(n - 1, -abs(t)))


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
    return compare_many(
        [(a, b)], permutations=permutations, samples=samples, confidence=confidence, seed=seed
    )[0]


def compare_many(
    pairs: Sequence[tuple[np.ndarray, np.ndarray]],
    *,
    permutations: int = 10_000,
    samples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    kinds: Sequence[str] | None = None,
) -> list[Paired]:
    """compare(a, b) of every pair, number for number; pairs with as many defined values
    share their random draws (the same seed draws the same for the same length), which are
    most of the cost when many metrics are compared on one set of queries. The one engine
    of every paired comparison (compare, Experiment, the leaderboard's marks); `samples=0`
    skips the bootstrap CI of the delta (NaN), `permutations=0` the randomization test.
    `kinds` gives each pair's aggregate (`aggregate`; all "mean" by default): mean_a,
    mean_b, delta and its CI are then of the totals or geometric means, and the tests are
    of the values the aggregate averages (gm_map's floored log AP)."""
    kinds = list(kinds) if kinds is not None else ["mean"] * len(pairs)
    defined = [_pairs(a, b) for a, b in pairs]
    nan = math.nan
    out = [Paired(0, nan, nan, nan, (nan, nan), nan, nan)] * len(pairs)
    groups: dict[int, list[int]] = {}
    for i, (pa, _) in enumerate(defined):
        if len(pa):
            groups.setdefault(len(pa), []).append(i)
    for n, members in groups.items():
        prepared = [tuple(_prepared(x, kinds[i]) for x in defined[i]) for i in members]
        diffs = [b - a for a, b in prepared]
        if samples:
            # the same seed draws the same resamples for every vector of this length, so the
            # geometric means, bootstrapped apart, share the draws of the others
            plain = [at for at, i in enumerate(members) if kinds[i] != "geomean"]
            boot = dict(zip(plain, _bootstrap_many([diffs[at] for at in plain], samples=samples,
                                                   seed=seed) if plain else []))  # fmt: skip
            cis = []
            for at, i in enumerate(members):
                if kinds[i] == "geomean":  # the difference of two geometric means: joint draws
                    ma, mb = _bootstrap_many(list(prepared[at]), samples=samples, seed=seed)
                    cis.append(_interval(np.exp(mb) - np.exp(ma), confidence))
                else:  # a total's delta is n times the mean delta
                    m = boot[at]
                    cis.append(_interval(m * n if kinds[i] == "sum" else m, confidence))
        else:
            cis = [(nan, nan)] * len(diffs)
        if permutations:
            ps = _randomization_ps(diffs, permutations=permutations, seed=seed)
        else:
            ps = [nan] * len(diffs)
        for i, (qa, qb), d, ci, p in zip(members, prepared, diffs, cis, ps):
            pa, pb = defined[i]
            kind = kinds[i]
            if kind == "mean":
                mean_a, mean_b, delta = float(pa.mean()), float(pb.mean()), float(d.mean())
            else:
                mean_a, mean_b = aggregate(pa, kind), aggregate(pb, kind)
                delta = mean_b - mean_a
            out[i] = Paired(
                n=len(pa),
                mean_a=mean_a,
                mean_b=mean_b,
                delta=delta,
                ci=ci,
                p_randomization=p,
                p_ttest=paired_ttest(qa, qb),
                better=int((d > 0).sum()),
                worse=int((d < 0).sum()),
            )
    return out


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values (step-down, monotone, capped at 1), in input order.

    NaN p-values are left NaN and do not count towards the number of tests."""
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(len(p), np.nan)
    valid = np.flatnonzero(~np.isnan(p))
    m = len(valid)
    order = valid[np.argsort(p[valid], kind="stable")]
    out[order] = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
    return out.tolist()


CORRECTIONS = ("holm", "bonferroni", None)


def adjust(pvalues: Sequence[float], correction: str | None) -> list[float]:
    """p-values corrected for the number of tests: Holm, Bonferroni (capped at 1) or none;
    NaN p-values stay NaN and do not count as tests."""
    if correction == "holm":
        return holm(pvalues)
    p = np.asarray(pvalues, dtype=np.float64)
    if correction == "bonferroni":
        return np.minimum(1.0, p * int((~np.isnan(p)).sum())).tolist()
    return p.tolist()
