"""Entity graph and Leiden clusters (docs/stratification.md#entity-graph-and-clusters), from
entity embeddings.

Each entity is joined to its k nearest neighbours (FAISS inner product over L2-normalised
embeddings, i.e. cosine) whose similarity is at least τ; the graph is undirected, an edge
weighted by its cosine. Leiden (leidenalg, RBConfiguration partition, resolution γ, fixed
seed) partitions it. Cluster ids are renumbered by size, largest first (ties: smallest
member), so they do not depend on leidenalg's internal numbering.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.core.errors import HarnessError


@dataclass(frozen=True)
class EntityGraph:
    n: int
    edges: np.ndarray  # (E, 2) int64, i < j, sorted
    weights: np.ndarray  # (E,) float64 cosine


def knn_graph(emb: np.ndarray, *, k: int = 50, tau: float = 0.5) -> EntityGraph:
    """Undirected kNN graph over rows of `emb` (normalised here), edges with cosine >= tau.

    An edge found from both ends is kept once; self matches are dropped."""
    import faiss

    x = np.ascontiguousarray(emb, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    x = x / np.where(norms == 0, 1, norms)
    n = len(x)
    if n == 0:
        return EntityGraph(0, np.zeros((0, 2), np.int64), np.zeros(0))
    index = faiss.IndexFlatIP(x.shape[1])
    index.add(x)
    sims, nbrs = index.search(x, min(n, k + 1))  # +1: each entity finds itself
    rows = np.repeat(np.arange(n), nbrs.shape[1])
    cols, w = nbrs.ravel(), sims.ravel().astype(np.float64)
    keep = (cols >= 0) & (cols != rows) & (w >= tau)
    a, b, w = rows[keep], cols[keep], w[keep]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    pairs, first = np.unique(np.stack([lo, hi], axis=1), axis=0, return_index=True)
    return EntityGraph(n, pairs.astype(np.int64), w[first])


def leiden(graph: EntityGraph, *, resolution: float = 1.0, seed: int = 0) -> np.ndarray:
    """Cluster id per entity; ids 0.. by cluster size, largest first."""
    try:
        import igraph as ig
        import leidenalg
    except ImportError:
        raise HarnessError(
            "clustering needs leidenalg and igraph; run: pip install leidenalg igraph"
        ) from None
    g = ig.Graph(n=graph.n, edges=graph.edges.tolist())
    g.es["weight"] = graph.weights.tolist()
    part = leidenalg.find_partition(
        g,
        leidenalg.RBConfigurationVertexPartition,
        weights="weight",
        resolution_parameter=resolution,
        seed=seed,
    )
    raw = np.asarray(part.membership, dtype=np.int64)
    # renumber: largest cluster first, ties by smallest member
    _, first, inverse, size = np.unique(
        raw, return_index=True, return_inverse=True, return_counts=True
    )
    rank = np.empty(len(size), np.int64)
    rank[np.lexsort((first, -size))] = np.arange(len(size))
    return rank[inverse]
