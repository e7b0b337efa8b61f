"""Score a run against a benchmark's gold, per query, and aggregate overall and per stratum."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from harness.strata import label_order
from harness.types import Benchmark, Run
from metrics.registry import Metric


def per_query(benchmark: Benchmark, run: Run, metrics: Sequence[Metric]) -> dict[str, np.ndarray]:
    """Metric name -> values in benchmark query order.

    A query the run has no ranking for scores as an empty list (0, as `trec_eval -c`);
    a query without gold is NaN for every metric that needs gold.
    """
    out = {m.name: np.empty(len(benchmark.queries)) for m in metrics}
    for i, q in enumerate(benchmark.queries):
        ranked = run[q.query_id].ids
        for m in metrics:
            out[m.name][i] = m(q, ranked)
    return out


def summarize(values: Mapping[str, np.ndarray], mask: np.ndarray | None = None) -> dict[str, Any]:
    """n queries, mean per metric over defined values, and how many were NaN (excluded)."""
    n = len(next(iter(values.values()))) if mask is None else int(mask.sum())
    mean: dict[str, float | None] = {}
    excluded: dict[str, int] = {}
    for name, vals in values.items():
        v = vals if mask is None else vals[mask]
        defined = v[~np.isnan(v)]
        excluded[name] = int(len(v) - len(defined))
        mean[name] = math.fsum(defined.tolist()) / len(defined) if len(defined) else None
    return {"n": n, "mean": mean, "excluded": excluded}


def aggregate(
    values: Mapping[str, np.ndarray], strata: Mapping[str, Sequence[str]]
) -> dict[str, Any]:
    """Overall summary plus one summary per label of every stratification."""
    out: dict[str, Any] = {"overall": summarize(values)}
    for strat, labels in strata.items():
        arr = np.asarray(labels, dtype=object)
        out[strat] = {lab: summarize(values, arr == lab) for lab in label_order(list(labels))}
    return out
