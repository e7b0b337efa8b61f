"""Semantic strata from an entity -> cluster assignment (docs/stratification.md): each query's
primary cluster, relevance dispersion Δ, semantic alignment J, tertile cuts, and the benchmark's
coverage of the corpus (MSC, SCC, ZQC).

Everything here takes clusters as plain integers, so it is independent of how entities were
extracted and clustered. Choices the definitions leave open are written next to the code and in
docs/stratification.md.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

NA = "n/a"
TERTILES = ("low", "mid", "high")


def dispersion(mentions: Iterable[int]) -> float:
    """Δ = 1 - Σ_c p_c², p_c = share of the gold chunks' entity mentions in cluster c.

    `mentions` holds one cluster id per entity mention (an entity in two gold chunks counts
    twice). NaN when there are no mentions (undefined: the `n/a` stratum)."""
    counts = Counter(mentions)
    total = sum(counts.values())
    if total == 0:
        return math.nan
    return 1.0 - sum((n / total) ** 2 for n in counts.values())


def alignment(query_clusters: Collection[int], gold_clusters: Collection[int]) -> float:
    """J = |C(q) ∩ C(D(q))| / |C(q) ∪ C(D(q))|.

    NaN when either side is empty: with no query entity mapped, or no entity in the gold
    chunks, alignment is undefined rather than 0 (choice; the `n/a` stratum)."""
    q, g = set(query_clusters), set(gold_clusters)
    if not q or not g:
        return math.nan
    return len(q & g) / len(q | g)


def primary_cluster(mentions: Iterable[int]) -> int | None:
    """The cluster holding most of the gold chunks' entity mentions; ties: smallest id."""
    counts = Counter(mentions)
    if not counts:
        return None
    best = max(counts.values())
    return min(c for c, n in counts.items() if n == best)


@dataclass(frozen=True)
class Tertiles:
    """Cut points at the 1/3 and 2/3 quantiles of a signal over the benchmark's queries."""

    low_max: float
    mid_max: float

    @classmethod
    def fit(cls, values: Sequence[float]) -> Tertiles | None:
        """Quantiles by linear interpolation (numpy's default) over the defined values;
        None when no value is defined."""
        v = np.asarray([x for x in values if not math.isnan(x)], dtype=np.float64)
        if not len(v):
            return None
        q1, q2 = np.quantile(v, [1 / 3, 2 / 3])
        return cls(float(q1), float(q2))

    def label(self, value: float) -> str:
        """`low` if value <= the 1/3 cut, `mid` if <= the 2/3 cut, else `high`; NaN -> `n/a`.

        Closed on the right (choice): with many equal values (Δ = 0 is common) the ties all
        land in the lower stratum instead of being split arbitrarily."""
        if math.isnan(value):
            return NA
        if value <= self.low_max:
            return "low"
        return "mid" if value <= self.mid_max else "high"


@dataclass(frozen=True)
class CorpusCoverage:
    """How well the queries cover the corpus's clusters
    (docs/stratification.md#coverage-diagnostics)."""

    msc: float  # share of clusters touched by at least one query
    scc: float  # share of chunks in at least one cluster touched by more than `scc_min` queries
    zero_query: dict[int, int]  # untouched cluster -> its size in chunks
    queries_per_cluster: dict[int, int]
    chunks_per_cluster: dict[int, int]


def corpus_coverage(
    chunk_clusters: Mapping[str, Collection[int]],
    query_clusters: Sequence[Collection[int]],
    n_clusters: int,
    *,
    scc_min: int = 5,
    counted: Collection[int] | None = None,
) -> CorpusCoverage:
    """MSC, SCC and ZQC from C(d) per chunk and the clusters each query's entities map to.

    A cluster is touched by a query when one of the query's entities maps to it; a chunk
    belongs to every cluster of its entities. `counted`: the clusters the figures count
    (default: all), e.g. without one-entity clusters; SCC stays a share of every chunk."""
    touched = Counter(c for cs in query_clusters for c in set(cs))
    sizes = Counter(c for cs in chunk_clusters.values() for c in set(cs))
    clusters = range(n_clusters) if counted is None else sorted(counted)
    busy = {c for c in clusters if touched.get(c, 0) > scc_min}
    n_chunks = len(chunk_clusters)
    covered = sum(1 for cs in chunk_clusters.values() if busy & set(cs))
    return CorpusCoverage(
        msc=sum(1 for c in clusters if touched.get(c, 0) > 0) / len(clusters)
        if len(clusters)
        else math.nan,
        scc=covered / n_chunks if n_chunks else math.nan,
        zero_query={c: sizes.get(c, 0) for c in clusters if touched.get(c, 0) == 0},
        queries_per_cluster={c: touched.get(c, 0) for c in clusters},
        chunks_per_cluster={c: sizes.get(c, 0) for c in clusters},
    )


def cluster_mass(chunk_clusters: Mapping[str, Sequence[int]]) -> tuple[dict[int, float], int]:
    """Each cluster's share of the corpus: the share of chunks whose primary cluster it is.
    A chunk's primary cluster is, as for a query, the cluster holding most of its entities
    (one per entity; ties: smallest id). Chunks without an entity have none and are left
    out of the shares; returns (cluster -> share, chunks without a cluster)."""
    clusters = (primary_cluster(mentions) for mentions in chunk_clusters.values())
    primary = Counter(c for c in clusters if c is not None)
    total = sum(primary.values())
    return {c: n / total for c, n in sorted(primary.items())}, len(chunk_clusters) - total
