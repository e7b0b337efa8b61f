"""Terminal text for what a run reports from its strata: variance explained per
stratification and, with semantic strata, the per-cluster table, the Δ×J grid and the
aggregates across clusters."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.core.tables import text
from harness.report.protocols import num
from harness.report.terminal import display
from harness.strata.semantic import NA, TERTILES
from metrics.registry import parse_metric


def headline(metric_names: Sequence[str]) -> list[str]:
    """The metrics shown in the terminal's semantic tables: those at the largest cutoff
    (all of them when no name has a cutoff; IPrec@0.5's is a recall level, not a cutoff)."""
    ks = {n: k for n in metric_names if (k := parse_metric(n).k) is not None}
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
    out += _variance_lines(variance_block, shown)
    if semantic is not None:
        out += _beyond_hop_lines(variance_block, shown)
        out += _hop_grid_lines(semantic, shown)
        out += _coverage_lines(semantic)
        out += _population_lines(semantic, shown)
    return "\n".join(out)


def _p(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _variance_lines(variance_block: Mapping[str, Any], shown: Sequence[str]) -> list[str]:
    """VRR per stratification and metric, beside its chance level and p-value."""
    strats = list(next(iter(variance_block.values()))["by"]) if variance_block else []
    if not strats:
        return []
    first = variance_block[shown[0]]["by"][strats[0]]
    lines = [
        "",
        "Variance explained by each stratification (VRR = 1 - σ_within² / σ_overall²;",
        "strata with fewer than min_queries queries pooled into one 'small' stratum)",
    ]
    if first.get("vrr_null") is not None:
        lines.append("chance: mean VRR over random partitions into strata of the same sizes;")
        lines.append("adjusted = (VRR - chance) / (1 - chance); p: permutation p-value")
    header = ["stratification", "strata", "metric", "σ_overall", "VRR", "chance", "adjusted", "p"]
    body = []
    for strat in strats:
        for m in shown:
            e = variance_block[m]["by"][strat]
            strata = str(e.get("n_strata", "-"))
            if e.get("pooled_queries"):
                strata += f" ({e['pooled_queries']} q pooled)"
            body.append(
                [strat, strata, m, num(variance_block[m]["sigma_overall"]), num(e["vrr"])]
                + [num(e.get("vrr_null")), num(e.get("vrr_adjusted")), _p(e.get("p_value"))]
            )
    return lines + text(header, body, left=3)


def _beyond_hop_lines(variance_block: Mapping[str, Any], shown: Sequence[str]) -> list[str]:
    """What Δ and J explain once hop is known."""
    if not variance_block or "beyond_hop" not in variance_block[shown[0]]:
        return []
    lines = [
        "",
        "Beyond hop: VRR of the hop × tertile cells minus VRR of hop; chance: tertiles",
        "shuffled within each hop; adjusted: share of what hop leaves explained beyond chance",
    ]
    header = ["signal", "metric", "VRR hop", "VRR hop×signal", "gain", "chance", "adjusted", "p"]
    body = []
    for signal in variance_block[shown[0]]["beyond_hop"]:
        for m in shown:
            e = variance_block[m]["beyond_hop"][signal]
            name = {"dispersion": "Δ", "alignment": "J"}.get(signal, signal)
            body.append(
                [name, m, num(e["vrr_hop"]), num(e["vrr_joint"]), num(e["gain"])]
                + [num(e["gain_null"]), num(e["gain_adjusted"]), _p(e["p_value"])]
            )
    return lines + text(header, body, left=2)


def _hop_grid_lines(semantic: Mapping[str, Any], shown: Sequence[str]) -> list[str]:
    grids = semantic.get("hop_grid") or {}
    lines: list[str] = []
    for signal, g in grids.items():
        name = {"dispersion": "Δ", "alignment": "J"}.get(signal, signal)
        lines += ["", f"hop × {name} tertile ({signal} within each hop)"]
        header = ["hop", name, "n", *shown]
        body = [
            [h, t, str(n)] + [display(m, g["mean"][m][h][t]) for m in shown]
            for h, row in g["n"].items()
            for t, n in row.items()
            if n
        ]
        lines += text(header, body, left=2)
    return lines


def _population_lines(semantic: Mapping[str, Any], shown: Sequence[str]) -> list[str]:
    pop = semantic.get("population")
    if not pop:
        return []
    lines = [
        "",
        "Population-weighted estimate: each cluster weighted by its share of the corpus's chunks;",
        f"{pop['n_clusters_with_mass']} clusters are some chunk's primary cluster; bounds: the "
        "clusters without a query at 0 and at 1",
    ]
    header = ["metric", "plain", "weighted", "bounds", "uncovered mass", "bias of plain"]
    body = []
    for m in shown:
        e = pop["estimate"][m]
        b = e["bounds"]
        body.append(
            [m, display(m, e["plain"]), display(m, e["weighted"])]
            + ["-" if b is None else f"{display(m, b[0])}–{display(m, b[1])}"]
            + [f"{100 * e['uncovered']:.1f}%", display(m, e["bias"], signed=True)]
        )
    return lines + text(header, body)


def _coverage_lines(semantic: Mapping[str, Any]) -> list[str]:
    c = semantic["coverage"]
    a = c["all"]
    return [
        "",
        f"Corpus coverage, clusters with >= {c['min_cluster_entities']} entities: "
        f"{c['n_clusters']:,} clusters, MSC {100 * c['msc']:.1f}%, SCC {100 * c['scc']:.1f}%, "
        f"ZQC {c['zqc']:,}",
        f"  (every cluster: {a['n_clusters']:,} clusters, MSC {100 * a['msc']:.1f}%, "
        f"SCC {100 * a['scc']:.1f}%, ZQC {a['zqc']:,})",
    ]


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
            [c, label, str(s["n"]), str(info["n_chunks"])]
            + [display(m, s["mean"][m]) for m in shown]
        )
    if NA in by:
        s = by[NA]
        body.append(
            [NA, "(no entity in the gold chunks)", str(s["n"]), "-"]
            + [display(m, s["mean"][m]) for m in shown]
        )
    return lines + text(header, body, left=2)


def _grid_lines(semantic, shown) -> list[str]:
    g = semantic["grid"]
    lines = ["", "Δ × J grid (relevance dispersion × semantic alignment tertiles)"]
    header = ["Δ", "J", "n", *shown]
    body = [
        [dl, jl, str(g["n"][dl][jl])] + [display(m, g["mean"][m][dl][jl]) for m in shown]
        for dl in TERTILES
        for jl in TERTILES
    ]
    lines += text(header, body, left=2)
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
        [m, *(display(m, a[m][key]) for key in ("overall", "macro", "median", "worst"))]
        + [str(a[m]["worst_cluster"]) if a[m]["worst_cluster"] is not None else "-"]
        for m in shown
    ]
    return lines + text(header, body)
