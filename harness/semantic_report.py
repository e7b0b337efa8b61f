"""What a run reports from the semantic strata (SPEC 5.3-5.4): each query's cluster, Δ and J
labels; the Δ×J grid; σ_overall, σ_within and VRR per stratification; the four aggregates
across clusters; and the terminal summary of all that."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import HarnessError
from harness.report import aligned, pct
from harness.semantic import NA, TERTILES
from harness.types import Benchmark
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
        "strata_file": str(path),
        "params": doc["params"],
        "tertiles": doc["tertiles"],
        "min_queries": min_queries,
        "coverage": {k: doc["summary"][k] for k in ("n_clusters", "msc", "scc", "zqc")},
        "clusters": clusters,
        "grid": grid(values, strata["dispersion"], strata["alignment"]),
        "aggregates": aggregates(values, strata["cluster"], min_queries),
    }


def headline(metric_names: Sequence[str]) -> list[str]:
    """The metrics shown in the terminal's semantic tables: those at the largest cutoff
    (all of them when no name has a cutoff)."""
    ks = {n: int(n.rsplit("@", 1)[1]) for n in metric_names if "@" in n}
    if not ks:
        return list(metric_names)
    top = max(ks.values())
    return [n for n in metric_names if ks.get(n) == top]


def render(
    aggregated: Mapping[str, Any],
    variance_block: Mapping[str, Any],
    semantic: Mapping[str, Any] | None,
    metric_names: Sequence[str],
) -> str:
    """Terminal text: variance explained per stratification, and with semantic strata the
    per-cluster table, the Δ×J grid and the aggregates across clusters."""
    shown = headline(metric_names)
    out: list[str] = []
    if semantic is not None:
        out += _clusters(aggregated, semantic, shown)
        out += _grid_lines(semantic, shown)
        out += _aggregate_lines(semantic, shown)
    strats = list(next(iter(variance_block.values()))["by"]) if variance_block else []
    if strats:
        out += ["", "Variance explained by each stratification (VRR = 1 - σ_within² / σ_overall²)"]
        header = ["metric", "σ_overall", *(f"VRR {s}" for s in strats)]
        body = [
            [m, _num(variance_block[m]["sigma_overall"])]
            + [_num(variance_block[m]["by"][s]["vrr"]) for s in strats]
            for m in shown
        ]
        out += aligned(header, body)
    return "\n".join(out)


def _num(x: float | None) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def _clusters(aggregated, semantic, shown) -> list[str]:
    by = aggregated.get("cluster", {})
    small = semantic["min_queries"]
    big = [c for c in by if c != NA and by[c]["n"] >= small]
    lines = [
        "",
        f"Per cluster (each query in the cluster holding most of its gold evidence; "
        f"{len(big)} of {len([c for c in by if c != NA])} clusters with >= {small} queries "
        f"shown, every cluster in metrics.json)",
    ]
    header = ["cluster", "label", "n", "chunks", *shown]
    body = []
    for c in big:
        info = semantic["clusters"][c]
        label = info["label"] if len(info["label"]) <= 48 else info["label"][:47] + "…"
        s = by[c]
        body.append(
            [c, label, str(s["n"]), str(info["n_chunks"])] + [pct(s["mean"][m]) for m in shown]
        )
    if NA in by:
        s = by[NA]
        body.append(
            [NA, "(no entity in the gold chunks)", str(s["n"]), "-"]
            + [pct(s["mean"][m]) for m in shown]
        )
    return lines + aligned(header, body, left=2)


def _grid_lines(semantic, shown) -> list[str]:
    g = semantic["grid"]
    lines = ["", "Δ × J grid (relevance dispersion × semantic alignment tertiles)"]
    header = ["Δ", "J", "n", *shown]
    body = [
        [dl, jl, str(g["n"][dl][jl])] + [pct(g["mean"][m][dl][jl]) for m in shown]
        for dl in TERTILES
        for jl in TERTILES
    ]
    lines += aligned(header, body, left=2)
    if g["n_undefined"]:
        n = g["n_undefined"]
        noun = "query" if n == 1 else "queries"
        lines.append(f"({n} {noun} with Δ or J undefined, outside the grid)")
    return lines


def _aggregate_lines(semantic, shown) -> list[str]:
    a = semantic["aggregates"]
    lines = [
        "",
        f"Across clusters (worst among clusters with >= {semantic['min_queries']} queries)",
    ]
    header = ["metric", "overall", "macro", "median", "worst", "worst cluster"]
    body = [
        [m, pct(a[m]["overall"]), pct(a[m]["macro"]), pct(a[m]["median"]), pct(a[m]["worst"])]
        + [str(a[m]["worst_cluster"]) if a[m]["worst_cluster"] is not None else "-"]
        for m in shown
    ]
    return lines + aligned(header, body)
