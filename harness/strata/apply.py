"""What a run derives from its strata: each query's cluster, Δ and J
labels; the Δ×J grid; σ_overall, σ_within and VRR per stratification; the four aggregates
across clusters; and the terminal summary of all that."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from harness.core.errors import HarnessError
from harness.core.labels import label_order
from harness.core.types import Benchmark
from harness.strata.semantic import NA, TERTILES, cluster_mass, corpus_coverage
from metrics.registry import aggregate_of
from metrics.stats import aggregate
from metrics.strata_stats import (
    SMALL,
    Shuffles,
    StrataSpec,
    cluster_aggregates,
    label_codes,
    pool_small,
    population_estimate,
    sigma_overall,
    sigma_within,
    vrr,
    vrr_gain,
    vrr_test,
)

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
    values: Mapping[str, np.ndarray],
    strata: Mapping[str, Sequence[str]],
    *,
    min_queries: int = 5,
    permutations: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Per metric: σ_overall; per stratification σ_within, VRR and VRR against chance (its
    mean over random partitions of the same sizes, the chance-corrected VRR, the permutation
    p-value), strata of fewer than `min_queries` queries pooled into one `small` stratum (an
    `n/a` label is a stratum like any other); and with hop and Δ or J strata, what Δ and J
    explain beyond hop (docs/stratification.md#variance-explained-vrr)."""
    out = {}
    draws: dict[tuple, Shuffles] = {}  # one draw per set of defined queries, shared

    def shuffles(keep: np.ndarray, groups=None) -> Shuffles | None:
        if permutations < 1 or keep.sum() < 2:
            return None
        key = (keep.tobytes(), None if groups is None else groups.tobytes())
        if key not in draws:
            draws[key] = Shuffles(int(keep.sum()), permutations, seed, groups)
        return draws[key]

    for name, v in values.items():
        keep = ~np.isnan(v)
        defined = v[keep]
        plain = shuffles(keep)
        by = {}
        for strat, labs in strata.items():
            pooled = pool_small([lab for lab, k in zip(labs, keep) if k], min_queries)
            by[strat] = _vrr_entry(defined, pooled, permutations, seed, plain)
        entry: dict[str, Any] = {"sigma_overall": sigma_overall(v), "by": by}
        if "hop" in strata and any(s in strata for s in SIGNALS):
            hop = pool_small([lab for lab, k in zip(strata["hop"], keep) if k], min_queries)
            within = shuffles(keep, label_codes(hop))
            entry["beyond_hop"] = {
                s: _gain_entry(
                    vrr_gain(
                        defined,
                        hop,
                        [x for x, k in zip(strata[s], keep) if k],
                        min_queries=min_queries,
                        permutations=permutations,
                        seed=seed,
                        shuffles=within,
                    )  # fmt: skip
                )
                for s in SIGNALS
                if s in strata
            }
        out[name] = entry
    return out


def _vrr_entry(v: np.ndarray, pooled: list, permutations, seed, draw) -> dict[str, Any]:
    small = [lab for lab in pooled if lab == SMALL]
    test = vrr_test(v, pooled, permutations=permutations, seed=seed, shuffles=draw)
    return {
        "sigma_within": sigma_within(v, pooled),
        "vrr": vrr(v, pooled),
        "vrr_null": None if test is None else test.null,
        "vrr_adjusted": None if test is None else test.adjusted,
        "p_value": None if test is None else test.p_value,
        "n_strata": len(set(pooled)),
        "pooled_queries": len(small),
    }


def _gain_entry(got) -> dict[str, Any]:
    """vrr_gain's answer (None: undefined) as metrics.json's beyond_hop entry."""
    keys = ("vrr_hop", "vrr_joint", "gain", "gain_null", "gain_adjusted", "p_value")
    if got is None:
        return dict.fromkeys(keys)
    base, joint, test = got
    return dict(zip(keys, (base, joint, test.observed, test.null, test.adjusted, test.p_value)))


def _crosstab(
    values: Mapping[str, np.ndarray],
    rows: np.ndarray,
    row_labels: Sequence[str],
    cols: np.ndarray,
    col_labels: Sequence[str],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Query counts and the mean of each metric (None where a cell has no query with a
    value) in every rows × cols cell."""
    counts = {
        r: {c: int(((rows == r) & (cols == c)).sum()) for c in col_labels} for r in row_labels
    }
    means: dict[str, Any] = {}
    for name, v in values.items():
        means[name] = {}
        kind = aggregate_of(name)  # a count's cell holds its total, as every summary does
        for r in row_labels:
            means[name][r] = {}
            for c in col_labels:
                cell = v[(rows == r) & (cols == c)]
                means[name][r][c] = aggregate(cell[~np.isnan(cell)], kind)
    return counts, means


def grid(
    values: Mapping[str, np.ndarray], dispersion: Sequence[str], alignment: Sequence[str]
) -> dict[str, Any]:
    """The 3×3 Δ tertile × J tertile grid: query counts, and the mean of each metric (None
    where a cell has no query). Queries with an undefined Δ or J are counted apart."""
    d, j = np.asarray(dispersion, dtype=object), np.asarray(alignment, dtype=object)
    counts, means = _crosstab(values, d, TERTILES, j, TERTILES)
    return {"n": counts, "n_undefined": int(((d == NA) | (j == NA)).sum()), "mean": means}


def aggregates(
    values: Mapping[str, np.ndarray], clusters: Sequence[str], min_queries: int
) -> dict[str, Any]:
    """overall / macro / median cluster / worst cluster of every metric."""
    labs = [None if c == NA else c for c in clusters]
    return {
        name: asdict(cluster_aggregates(v, labs, min_queries=min_queries))
        for name, v in values.items()
    }


def strata_name(path: Path) -> str:
    """How metrics.json names its strata file: `<corpus>/<file>` under strata.dir, so a cell
    does not depend on where the folders were (same inputs, same bytes on any machine)."""
    return f"{path.parent.name}/{path.name}"


def coverage_figures(
    doc: Mapping[str, Any], min_entities: int, chunk_clusters: Mapping | None = None
) -> dict[str, Any]:
    """MSC, SCC, ZQC and the cluster count without clusters of fewer than `min_entities`
    entities (one-entity clusters are names with no neighbour at τ; they dominate the raw
    counts), and under `all` the figures over every cluster, as the strata file has them."""
    summary = doc["summary"]
    raw = {k: summary[k] for k in ("n_clusters", "msc", "scc", "zqc")}
    counted = {int(c["id"]) for c in doc["clusters"] if c["n_entities"] >= min_entities}
    cov = corpus_coverage(
        _chunk_clusters(doc) if chunk_clusters is None else chunk_clusters,
        [q["clusters"] for q in doc["queries"].values()],
        summary["n_clusters"],
        scc_min=doc["params"]["scc_min"],
        counted=counted,
    )
    return {
        "min_cluster_entities": min_entities,
        "n_clusters": len(counted),
        "msc": cov.msc,
        "scc": cov.scc,
        "zqc": len(cov.zero_query),
        "all": raw,
    }


def _chunk_clusters(doc: Mapping[str, Any]) -> dict[str, list[int]]:
    """Chunk id -> the cluster of each of its entities (one per entity)."""
    cluster_of = [int(e[2]) for e in doc["entities"]]
    return {cid: [cluster_of[e] for e in ents] for cid, ents in doc["chunks"].items()}


def population(
    values: Mapping[str, np.ndarray],
    clusters: Sequence[str],
    doc: Mapping[str, Any],
    chunk_clusters: Mapping | None = None,
) -> dict[str, Any]:
    """The population-weighted estimate of every metric over the clusters, each weighted by
    its share of the corpus's chunks (docs/stratification.md#population-weighted-estimate)."""
    mass, without = cluster_mass(_chunk_clusters(doc) if chunk_clusters is None else chunk_clusters)
    shares = {str(c): w for c, w in mass.items()}
    labs = [None if c == NA else c for c in clusters]
    return {
        "n_clusters_with_mass": len(shares),
        "n_chunks_without_cluster": without,
        "estimate": {name: population_estimate(v, labs, shares) for name, v in values.items()},
    }


def hop_grids(
    values: Mapping[str, np.ndarray], strata: Mapping[str, Sequence[str]]
) -> dict[str, Any]:
    """hop × Δ tertile and hop × J tertile: query counts and the mean of every metric (None
    where a cell has no query with a value), so Δ and J can be read within each hop."""
    hop = np.asarray(strata["hop"], dtype=object)
    hops = label_order(list(strata["hop"]))
    out: dict[str, Any] = {}
    for signal in SIGNALS:
        if signal not in strata:
            continue
        sig = np.asarray(strata[signal], dtype=object)
        cols = [t for t in (*TERTILES, NA) if t != NA or (sig == NA).any()]
        counts, means = _crosstab(values, hop, hops, sig, cols)
        out[signal] = {"n": counts, "mean": means}
    return out


def section(
    values: Mapping[str, np.ndarray],
    strata: Mapping[str, Sequence[str]],
    doc: Mapping[str, Any],
    path: Path,
    spec: StrataSpec,
) -> dict[str, Any]:
    """The `semantic` block of metrics.json."""
    used = {c for c in strata["cluster"] if c != NA}
    chunk_clusters = _chunk_clusters(doc)  # read once for coverage and population
    clusters = {
        str(c["id"]): {k: c[k] for k in ("label", "n_entities", "n_chunks")}
        for c in doc["clusters"]
        if str(c["id"]) in used
    }
    return {
        "strata_file": strata_name(path),
        "params": doc["params"],
        "tertiles": doc["tertiles"],
        "min_queries": spec.min_queries,
        "coverage": coverage_figures(doc, spec.min_cluster_entities, chunk_clusters),
        "clusters": clusters,
        "grid": grid(values, strata["dispersion"], strata["alignment"]),
        "hop_grid": hop_grids(values, strata) if "hop" in strata else {},
        "aggregates": aggregates(values, strata["cluster"], spec.min_queries),
        "population": population(values, strata["cluster"], doc, chunk_clusters),
    }
