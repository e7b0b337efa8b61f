"""Coverage diagnostics of a benchmark from its strata (docs/stratification.md#coverage-
diagnostics): MSC, SCC, ZQC, the largest zero-query clusters, and the clusters × (chunks,
queries) table, as Markdown and JSON."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.core import tables
from harness.core.files import to_json, write_text_atomic
from harness.strata.apply import coverage_figures

CLUSTER_ALIGN = ["right", "left", "right", "right", "right", "right"]


def summary(doc: Mapping[str, Any], min_entities: int = 2) -> str:
    """A few lines: what was built and the headline coverage numbers (clusters of at least
    `min_entities` entities, and over every cluster)."""
    s, p = doc["summary"], doc["params"]
    c = coverage_figures(doc, min_entities)
    cuts = doc["tertiles"]

    def cut(name: str) -> str:
        c = cuts.get(name)
        return "undefined" if c is None else f"{c[0]:.3f} / {c[1]:.3f}"

    return "\n".join(
        [
            f"{s['n_entities']:,} entities ({s['n_mentions']:,} chunk mentions) from extractor "
            f"'{p['extractor']['name']}', embedded with '{p['embedder']['name']}'; "
            f"{s['n_edges']:,} edges (k={p['k']}, tau={p['tau']:g}); "
            f"{s['n_clusters']:,} Leiden clusters (resolution {p['resolution']:g}, "
            f"seed {p['seed']})",
            f"clusters with >= {min_entities} entities: {c['n_clusters']:,} · MSC "
            f"{100 * c['msc']:.1f}% of them touched by a query · SCC {100 * c['scc']:.1f}% of "
            f"chunks in one touched by more than {p['scc_min']} queries · ZQC {c['zqc']:,} "
            f"untouched",
            f"every cluster: MSC {100 * s['msc']:.1f}% · SCC {100 * s['scc']:.1f}% · ZQC "
            f"{s['zqc']:,}",
            f"tertile cuts: dispersion Δ {cut('dispersion')}, alignment J {cut('alignment')}",
        ]
    )


def diagnostics(doc: Mapping[str, Any], *, top: int = 10, min_entities: int = 2) -> dict[str, Any]:
    """The --report content as plain data; MSC, SCC and ZQC over clusters of at least
    `min_entities` entities, and under `all` over every cluster."""
    s = doc["summary"]
    clusters = doc["clusters"]
    zero = [c for c in clusters if c["n_queries"] == 0 and c["n_entities"] >= min_entities]
    zero.sort(key=lambda c: (-c["n_chunks"], c["id"]))
    return {
        "corpus": doc["corpus"],
        "checksum": doc["checksum"],
        "params": doc["params"],
        **coverage_figures(doc, min_entities),
        "zero_query_chunks": s["zero_query_chunks"],
        "largest_zero_query_clusters": zero[:top],
        "strata_counts": _strata_counts(doc),
        "clusters": clusters,
    }


def _strata_counts(doc: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for signal in ("dispersion", "alignment"):
        counts = Counter(q[f"{signal}_stratum"] for q in doc["queries"].values())
        out[signal] = {k: counts[k] for k in ("low", "mid", "high", "n/a") if k in counts}
    return out


def markdown(doc: Mapping[str, Any], *, max_rows: int | None = None, min_entities: int = 2) -> str:
    """The report as Markdown; `max_rows` cuts the clusters table (None: every cluster)."""
    d = diagnostics(doc, min_entities=min_entities)
    p = d["params"]
    a = d["all"]
    lines = [
        f"# Strata coverage report: {d['corpus']}",
        "",
        f"Corpus checksum `{d['checksum']}`. Extractor `{p['extractor']['name']}`, embedder "
        f"`{p['embedder']['name']}`, k = {p['k']}, τ = {p['tau']:g}, γ = {p['resolution']:g}, "
        f"seed {p['seed']}.",
        "",
        f"Clusters of fewer than {min_entities} entities (names with no neighbour at τ) are "
        f"left out of the first column (`strata.min_cluster_entities`); the second counts "
        f"every cluster.",
        "",
        *tables.markdown(
            ["diagnostic", f"clusters with ≥ {min_entities} entities", "every cluster", "meaning"],
            [
                ["clusters", f"{d['n_clusters']:,}", f"{a['n_clusters']:,}"]
                + ["Leiden communities of the entity graph"],
                ["MSC", f"{100 * d['msc']:.1f}%", f"{100 * a['msc']:.1f}%"]
                + ["clusters touched by at least one query"],
                ["SCC", f"{100 * d['scc']:.1f}%", f"{100 * a['scc']:.1f}%"]
                + [f"chunks in a cluster touched by more than {p['scc_min']} queries"],
                ["ZQC", f"{d['zqc']:,}", f"{a['zqc']:,}"]
                + [
                    f"clusters no query touches ({d['zero_query_chunks']:,} chunk memberships "
                    "over every cluster)"
                ],
            ],
            align=["left", "right", "right", "left"],
        ),
        "",
        "Queries per stratum: "
        + "; ".join(
            f"{name} " + ", ".join(f"{k} {v}" for k, v in counts.items())
            for name, counts in d["strata_counts"].items()
        )
        + ".",
        "",
        "## Largest zero-query clusters",
        "",
    ]
    lines += tables.markdown(
        ["cluster", "label", "entities", "chunks"],
        [
            [str(c["id"]), c["label"], str(c["n_entities"]), str(c["n_chunks"])]
            for c in d["largest_zero_query_clusters"]
        ],
        align=CLUSTER_ALIGN[:4],
    )
    rows = d["clusters"] if max_rows is None else d["clusters"][:max_rows]
    lines += [
        "",
        "## Clusters",
        "",
        "Ordered by size (entities). `queries`: queries with an entity in the cluster; "
        "`primary`: queries whose gold evidence mostly lies in it.",
        "",
    ]
    body = [
        [str(c["id"]), c["label"], *(str(c[k]) for k in ("n_entities", "n_chunks"))]
        + [str(c["n_queries"]), str(c["n_primary"])]
        for c in rows
    ]
    if len(rows) < len(d["clusters"]):
        more = f"{len(d['clusters']) - len(rows):,} more clusters in the report file"
        body.append(["…", more, "", "", "", ""])
    header = ["cluster", "label", "entities", "chunks", "queries", "primary"]
    lines += tables.markdown(header, body, align=CLUSTER_ALIGN)
    return "\n".join(lines) + "\n"


def write(doc: Mapping[str, Any], strata_path: Path, min_entities: int = 2) -> tuple[Path, Path]:
    """<strata file stem>.report.md and .report.json next to the strata file."""
    md = strata_path.with_suffix(".report.md")
    js = strata_path.with_suffix(".report.json")
    write_text_atomic(md, markdown(doc, min_entities=min_entities))
    write_text_atomic(js, to_json(diagnostics(doc, min_entities=min_entities)))
    return md, js
