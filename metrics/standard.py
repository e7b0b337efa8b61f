"""Standard metrics for graded qrels with trec_eval semantics, computed for all queries at once.

Names follow trec_eval's measures: ndcg_cut@K, recall@K, P@K, map_cut@K, map, recip_rank@K,
success@K, Rprec. Every function reads a grade matrix: row i holds the qrels grade of each
chunk in query i's canonical ranking (0 for unjudged chunks and past the end of the list).
A query with no relevant chunk (grade >= level) is NaN for the binary metrics; one with no
positive grade is NaN for nDCG.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain, repeat

import numpy as np

FAMILIES = ("ndcg_cut", "recall", "P", "map_cut", "map", "recip_rank", "success", "Rprec")
UNCUT = frozenset({"map", "Rprec"})  # read the whole ranked list; no K


def grade_matrix(
    rankings: Sequence[Sequence[str]], judgments: Sequence[Mapping[str, int]], width: int
) -> np.ndarray:
    """Grades of the top `width` chunks of each ranking, as an int32 matrix padded with 0."""
    cut = [r[:width] for r in rankings]
    lengths = np.fromiter(map(len, cut), dtype=np.int64, count=len(cut))
    flat = np.fromiter(
        # map(get, ids, repeat(0)) looks every chunk up at C speed: the hot loop of the module.
        chain.from_iterable(map(j.get, ids, repeat(0)) for ids, j in zip(cut, judgments)),
        dtype=np.int32,
        count=int(lengths.sum()),
    )
    grades = np.zeros((len(cut), width), dtype=np.int32)
    grades[np.arange(width) < lengths[:, None]] = flat
    return grades


def evaluate(
    rankings: Sequence[Sequence[str]],
    judgments: Sequence[Mapping[str, int]],
    wanted: Sequence[tuple[str, int | None]],
    *,
    level: int = 1,
) -> dict[tuple[str, int | None], np.ndarray]:
    """(family, K) -> per-query values, for canonical rankings and their queries' judgments."""
    if level < 1:
        raise ValueError(f"relevance level must be >= 1, got {level}")
    n = len(rankings)
    ks = [k for _, k in wanted if k is not None]
    longest = max(map(len, rankings), default=0)
    width = max([1, longest, *ks])
    grades = grade_matrix(rankings, judgments, width)
    rel = grades >= level
    cum_rel = np.cumsum(rel, axis=1, dtype=np.int64)
    num_rel = np.fromiter(
        (sum(1 for g in j.values() if g >= level) for j in judgments), dtype=np.int64, count=n
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        no_rel = np.where(num_rel > 0, 1.0, np.nan)
        ranks = np.arange(1, width + 1, dtype=np.float64)
        out: dict[tuple[str, int | None], np.ndarray] = {}
        cache: dict[str, np.ndarray] = {}
        for family, k in wanted:
            col = None if k is None else k - 1
            if family == "recall":
                v = cum_rel[:, col] / num_rel
            elif family == "P":
                v = cum_rel[:, col] / k * no_rel
            elif family == "success":
                v = (cum_rel[:, col] > 0) * no_rel
            elif family == "recip_rank":
                first = np.argmax(rel, axis=1)
                hit = rel[np.arange(n), first] & (first < k)
                v = np.where(hit, 1.0 / (first + 1), 0.0) * no_rel
            elif family in ("map_cut", "map"):
                if "ap" not in cache:
                    cache["ap"] = np.cumsum(np.where(rel, cum_rel / ranks, 0.0), axis=1)
                v = cache["ap"][:, width - 1 if col is None else col] / num_rel
            elif family == "Rprec":
                at = np.clip(num_rel, 1, width) - 1
                v = cum_rel[np.arange(n), at] / num_rel
            elif family == "ndcg_cut":
                if "dcg" not in cache:
                    gain = np.maximum(grades, 0).astype(np.float64)
                    cache["dcg"] = np.cumsum(gain / np.log2(ranks + 1), axis=1)
                    cache["idcg"] = _ideal_dcg(judgments, max(ks))
                v = cache["dcg"][:, col] / cache["idcg"][:, col]
            else:
                raise ValueError(f"unknown standard metric family '{family}'")
            out[(family, k)] = np.asarray(v, dtype=np.float64)
    return out


def _ideal_dcg(judgments: Sequence[Mapping[str, int]], depth: int) -> np.ndarray:
    """Cumulative DCG of each query's ideal ranking (all positive grades, best first) to depth.

    0 where a query has no positive grade, so nDCG there is 0/0 = NaN."""
    ideal = np.zeros((len(judgments), depth), dtype=np.float64)
    for i, j in enumerate(judgments):
        best = sorted((g for g in j.values() if g > 0), reverse=True)[:depth]
        ideal[i, : len(best)] = best
    discount = 1.0 / np.log2(np.arange(2, depth + 2, dtype=np.float64))
    return np.cumsum(ideal * discount, axis=1)
