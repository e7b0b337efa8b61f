"""Statistics of a metric across strata (SPEC 5.4): σ_overall, pooled σ_within, the variance
ratio reduction (VRR) of a stratification, aggregates across clusters, bootstrap win rates.

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
    for lab in set(labs):
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


def cluster_aggregates(
    values: Sequence[float], clusters: Sequence[Hashable | None], *, min_queries: int = 5
) -> ClusterAggregates:
    """The four aggregates of SPEC 5.4. Queries without a cluster (None) count in `overall`
    only. Macro and median run over every cluster with a query; `worst` only over clusters
    with at least `min_queries` queries (NaN when none has that many), as the SPEC says."""
    v, labs = _defined(values, clusters)
    means: dict[Hashable, tuple[float, int]] = {}
    for lab in sorted({x for x in labs if x is not None}, key=str):
        part = v[[x == lab for x in labs]]
        means[lab] = (float(part.mean()), len(part))
    cluster_means = [m for m, _ in means.values()]
    eligible = {lab: m for lab, (m, n) in means.items() if n >= min_queries}
    worst_lab = min(eligible, key=lambda lab: (eligible[lab], str(lab))) if eligible else None
    return ClusterAggregates(
        overall=float(v.mean()) if len(v) else math.nan,
        macro=float(np.mean(cluster_means)) if cluster_means else math.nan,
        median=float(np.median(cluster_means)) if cluster_means else math.nan,
        worst=eligible[worst_lab] if worst_lab is not None else math.nan,
        worst_cluster=worst_lab,
    )


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
    rng = np.random.default_rng(seed)
    wins = dict.fromkeys(AGGREGATES, 0.0)
    counted = dict.fromkeys(AGGREGATES, 0)
    n = len(a_arr)
    for _ in range(resamples):
        idx = rng.integers(0, n, size=n)
        labs = [clusters[i] for i in idx]
        agg_a = cluster_aggregates(a_arr[idx], labs, min_queries=min_queries)
        agg_b = cluster_aggregates(b_arr[idx], labs, min_queries=min_queries)
        for name in AGGREGATES:
            x, y = getattr(agg_a, name), getattr(agg_b, name)
            if math.isnan(x) or math.isnan(y):
                continue
            counted[name] += 1
            wins[name] += 1.0 if x > y else 0.5 if x == y else 0.0
    return {k: (wins[k] / counted[k] if counted[k] else math.nan, counted[k]) for k in AGGREGATES}
