"""Terminal text for what a run reports from its strata: variance explained per
stratification and, with semantic strata, the per-cluster table, the Δ×J grid and the
aggregates across clusters."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from harness.report.terminal import aligned, pct
from harness.strata.semantic import NA, TERTILES


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
