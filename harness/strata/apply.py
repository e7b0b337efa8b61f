"""What a run derives from its strata: each query's cluster, Δ and J
labels; the Δ×J grid; σ_overall, σ_within and VRR per stratification; the four aggregates
across clusters; and the terminal summary of all that."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harness.core.errors import HarnessError
from harness.core.types import Benchmark
from harness.strata.semantic import NA, TERTILES
from metrics.strata_stats import cluster_aggregates, sigma_overall, sigma_within, vrr

SIGNALS = ("dispersion", "alignment")


def labels(bench: Benchmark, doc: Mapping[str, Any]) -> dict[str, list[str]]:
    """cluster / dispersion / alignment label of every query, in benchmark order."""
    queries = doc["queries"]
    missing = [q.query_id for q in bench.queries if q.query_id not in queries]
    if missing:
        raise HarnessError(
            f"the strata file has no entry for query '{missing[0]}' ({len(missing)} missing); "
            f"rebuild it with python -m harness.stratify corpus={bench.name} --force"
        )
    rows = [queries[q.query_id] for q in bench.queries]
    return {
        "cluster": [NA if r["primary"] is None else str(r["primary"]) for r in rows],
        "dispersion": [r["dispersion_stratum"] for r in rows],
        "alignment": [r["alignment_stratum"] for r in rows],
    }


def variance(
    values: Mapping[str, np.ndarray], strata: Mapping[str, Sequence[str]]
) -> dict[str, Any]:
    """Per metric: σ_overall, and σ_within and VRR of each stratification (an `n/a` label is a
    stratum of its own)."""
    out = {}
    for name, v in values.items():
        by = {
            strat: {"sigma_within": sigma_within(v, labs), "vrr": vrr(v, labs)}
            for strat, labs in strata.items()
        }
        out[name] = {"sigma_overall": sigma_overall(v), "by": by}
    return out


def grid(
    values: Mapping[str, np.ndarray], dispersion: Sequence[str], alignment: Sequence[str]
) -> dict[str, Any]:
    """The 3×3 Δ tertile × J tertile grid: query counts, and the mean of each metric (None
    where a cell has no query). Queries with an undefined Δ or J are counted apart."""
    d, j = np.asarray(dispersion, dtype=object), np.asarray(alignment, dtype=object)
    counts = {dl: {jl: int(((d == dl) & (j == jl)).sum()) for jl in TERTILES} for dl in TERTILES}
    means: dict[str, Any] = {}
    for name, v in values.items():
        means[name] = {}
        for dl in TERTILES:
            means[name][dl] = {}
            for jl in TERTILES:
                cell = v[(d == dl) & (j == jl)]
                cell = cell[~np.isnan(cell)]
                means[name][dl][jl] = float(cell.mean()) if len(cell) else None
    return {"n": counts, "n_undefined": int(((d == NA) | (j == NA)).sum()), "mean": means}


def aggregates(
    values: Mapping[str, np.ndarray], clusters: Sequence[str], min_queries: int
) -> dict[str, Any]:
    """overall / macro / median cluster / worst cluster of every metric."""
    labs = [None if c == NA else c for c in clusters]
    out = {}
    for name, v in values.items():
        a = cluster_aggregates(v, labs, min_queries=min_queries)
        out[name] = {
            "overall": a.overall,
            "macro": a.macro,
            "median": a.median,
            "worst": a.worst,
            "worst_cluster": a.worst_cluster,
        }
    return out


def strata_name(path: Path) -> str:
    """How metrics.json names its strata file: `<corpus>/<file>` under strata.dir, so a cell
    does not depend on where the folders were (same inputs, same bytes on any machine)."""
    return f"{path.parent.name}/{path.name}"


def section(
    values: Mapping[str, np.ndarray],
    strata: Mapping[str, Sequence[str]],
    doc: Mapping[str, Any],
    path: Path,
    min_queries: int,
) -> dict[str, Any]:
    """The `semantic` block of metrics.json."""
    used = {c for c in strata["cluster"] if c != NA}
    clusters = {
        str(c["id"]): {k: c[k] for k in ("label", "n_entities", "n_chunks")}
        for c in doc["clusters"]
        if str(c["id"]) in used
    }
    return {
        "strata_file": strata_name(path),
        "params": doc["params"],
        "tertiles": doc["tertiles"],
        "min_queries": min_queries,
        "coverage": {k: doc["summary"][k] for k in ("n_clusters", "msc", "scc", "zqc")},
        "clusters": clusters,
        "grid": grid(values, strata["dispersion"], strata["alignment"]),
        "aggregates": aggregates(values, strata["cluster"], min_queries),
    }
