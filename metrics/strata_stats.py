"""Statistics of a metric across strata (docs/stratification.md#variance-explained-vrr):
σ_overall, pooled σ_within, the variance ratio reduction (VRR) of a stratification, aggregates
across clusters, bootstrap win rates.

Per-query values that are NaN (a query the metric is undefined for) are left out, as in
the means everywhere else. Standard deviations are population ones (ddof = 0), so that
σ_within² + the between-strata variance = σ_overall² and VRR is the share of variance the
stratification explains.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

AGGREGATES = ("overall", "macro", "median", "worst")


def _defined(values: Sequence[float], labels: Sequence[Hashable]):
    v = np.asarray(values, dtype=np.float64)
    keep = ~np.isnan(v)
    return v[keep], [lab for lab, k in zip(labels, keep) if k]


def sigma_overall(values: Sequence[float]) -> float:
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    return float(v.std()) if len(v) else math.nan


def sigma_within(values: Sequence[float], labels: Sequence[Hashable]) -> float:
    """sqrt(Σ_k n_k σ_k² / n): the pooled standard deviation inside the strata."""
    v, labs = _defined(values, labels)
    if not len(v):
        return math.nan
    total = 0.0
    for lab in sorted(set(labs), key=str):  # a fixed order: float sums must not vary
        part = v[[x == lab for x in labs]]
        total += len(part) * float(part.var())
    return math.sqrt(total / len(v))


def vrr(values: Sequence[float], labels: Sequence[Hashable]) -> float:
    """1 - σ_within² / σ_overall²; NaN when the metric does not vary at all."""
    overall = sigma_overall(values)
    if not overall > 0:
        return math.nan
    return 1.0 - sigma_within(values, labels) ** 2 / overall**2


@dataclass(frozen=True)
class ClusterAggregates:
    overall: float  # query-weighted mean over every query with a defined value
    macro: float  # mean of the cluster means, each cluster weighted equally
    median: float  # median of the cluster means
    worst: float  # lowest cluster mean among clusters with at least min_queries queries
    worst_cluster: Hashable | None


def _codes(clusters: Sequence[Hashable | None]) -> tuple[np.ndarray, list[Hashable]]:
    """Integer code per query (-1: no cluster) and the cluster labels, sorted by str()."""
    names = sorted({c for c in clusters if c is not None}, key=str)
    pos = {c: i for i, c in enumerate(names)}
    return np.asarray([-1 if c is None else pos[c] for c in clusters], dtype=np.int64), names


def _coded_aggregates(
    v: np.ndarray, codes: np.ndarray, n_codes: int, min_queries: int
) -> tuple[float, float, float, float, int]:
    """overall, macro, median, worst and the worst cluster's code (-1: none), NaNs left out."""
    keep = ~np.isnan(v)
    v, codes = v[keep], codes[keep]
    if not len(v):
        return math.nan, math.nan, math.nan, math.nan, -1
    has = codes >= 0
    sums = np.bincount(codes[has], weights=v[has], minlength=n_codes)
    counts = np.bincount(codes[has], minlength=n_codes)
    present = counts > 0
    means = np.divide(sums, counts, out=np.full(n_codes, np.nan), where=present)
    eligible = np.flatnonzero(counts >= min_queries)
    worst = int(eligible[np.argmin(means[eligible])]) if len(eligible) else -1
    return (
        float(v.mean()),
        float(means[present].mean()) if present.any() else math.nan,
        float(np.median(means[present])) if present.any() else math.nan,
        float(means[worst]) if worst >= 0 else math.nan,
        worst,
    )


def cluster_aggregates(
    values: Sequence[float], clusters: Sequence[Hashable | None], *, min_queries: int = 5
) -> ClusterAggregates:
    """The four aggregates of docs/stratification.md#aggregates-across-clusters. Queries
    without a cluster (None) count in `overall` only. Macro and median run over every
    cluster with a query; `worst` only over clusters with at least `min_queries` queries
    (NaN when none has that many), as defined there; a tie for worst goes to the cluster
    whose label sorts first."""
    codes, names = _codes(clusters)
    v = np.asarray(values, dtype=np.float64)
    overall, macro, median, worst, at = _coded_aggregates(v, codes, len(names), min_queries)
    return ClusterAggregates(overall, macro, median, worst, names[at] if at >= 0 else None)


def win_rates(
    a: Sequence[float],
    b: Sequence[float],
    clusters: Sequence[Hashable | None],
    *,
    resamples: int = 1000,
    seed: int = 0,
    min_queries: int = 5,
) -> dict[str, tuple[float, int]]:
    """Bootstrap win rate of A over B for each aggregate: resample queries with replacement
    (paired: the same queries for A and B), compute the aggregate for both, and count A > B
    as 1 and a tie as 1/2. Resamples where an aggregate is undefined for A or B are left out;
    returns aggregate -> (win rate, resamples counted)."""
    a_arr, b_arr = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a_arr.shape != b_arr.shape or len(a_arr) != len(clusters):
        raise ValueError("win rates need A, B and the clusters for the same queries")
    codes, names = _codes(clusters)
    rng = np.random.default_rng(seed)
    wins = np.zeros(len(AGGREGATES))
    counted = np.zeros(len(AGGREGATES), dtype=np.int64)
    n = len(a_arr)
    for _ in range(resamples):
        idx = rng.integers(0, n, size=n)
        x = np.asarray(_coded_aggregates(a_arr[idx], codes[idx], len(names), min_queries)[:4])
        y = np.asarray(_coded_aggregates(b_arr[idx], codes[idx], len(names), min_queries)[:4])
        ok = ~(np.isnan(x) | np.isnan(y))
        counted += ok
        wins += np.where(ok, np.where(x > y, 1.0, np.where(x == y, 0.5, 0.0)), 0.0)
    return {
        k: (float(wins[i] / counted[i]) if counted[i] else math.nan, int(counted[i]))
        for i, k in enumerate(AGGREGATES)
    }
