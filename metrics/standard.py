"""Standard metrics for graded qrels with trec_eval semantics, computed for all queries at once.

Names follow trec_eval's measures: ndcg_cut@K, recall@K, P@K, map_cut@K, map, recip_rank@K,
success@K, Rprec. Every metric reads a grade matrix: row i holds the qrels grade of each
chunk in query i's canonical ranking (0 for unjudged chunks and past the end of the list),
built by matching integer keys, never by per-chunk string lookups where rankings carry codes.
A query with no relevant chunk (grade >= level) is NaN for the binary metrics; one with no
positive grade is NaN for nDCG.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat

import numpy as np

from harness.types import Ranking


@dataclass(frozen=True)
class Judged:
    """Judgments encoded once: sorted integer keys (query row * stride + chunk code) with
    their grades. Codes are corpus positions when built with the benchmark's vocab, so
    rankings carrying codes match without string lookups; `code` maps judged ids to codes."""

    n_queries: int
    keys: np.ndarray  # int64, sorted
    grades: np.ndarray  # int64, aligned with keys
    rows: np.ndarray  # int64 query row of each key
    stride: int
    code: dict[str, int]
    corpus_coded: bool


def prepare(
    judgments: Sequence[Mapping[str, int]], vocab: Mapping[str, int] | None = None
) -> Judged:
    """Encode per-query judgments; with `vocab` (chunk id -> corpus position) as codes."""
    code: dict[str, int] = {}
    fresh = len(vocab) if vocab is not None else 0
    rows, codes, grades = [], [], []
    for i, j in enumerate(judgments):
        for doc, grade in j.items():
            c = code.get(doc)
            if c is None:
                c = vocab.get(doc) if vocab is not None else None
                if c is None:  # judged but not in the corpus: a code no ranking can hold
                    c, fresh = fresh, fresh + 1
                code[doc] = c
            rows.append(i)
            codes.append(c)
            grades.append(grade)
    stride = fresh + 1
    r = np.asarray(rows, dtype=np.int64)
    keys = r * stride + np.asarray(codes, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    return Judged(
        n_queries=len(judgments),
        keys=keys[order],
        grades=np.asarray(grades, dtype=np.int64)[order],
        rows=r[order],
        stride=stride,
        code=code,
        corpus_coded=vocab is not None,
    )


def grade_matrix(rankings: Sequence[Ranking | Sequence[str]], judged: Judged, width: int):
    """Grades of the top `width` chunks of each ranking, as an int32 matrix padded with 0."""
    parts = []
    for r in rankings:
        codes = getattr(r, "codes", None)
        if codes is not None and judged.corpus_coded:
            parts.append(codes[:width])
        else:  # ids only: look each up among the judged ids (unjudged -> -1)
            ids = r.ids if isinstance(r, Ranking) else r
            parts.append(np.fromiter(map(judged.code.get, ids[:width], repeat(-1)), np.int64))
    lengths = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
    filled = np.arange(width) < lengths[:, None]
    codes = np.full((len(parts), width), -1, dtype=np.int64)
    if parts:
        codes[filled] = np.concatenate(parts)
    grades = np.zeros(codes.shape, dtype=np.int32)
    if len(judged.keys) == 0:
        return grades
    # Keys in place (the matrices are large): padding's -1 becomes the previous row's code
    # stride - 1, which no chunk holds, so it never matches.
    keys = codes
    keys += np.arange(len(parts), dtype=np.int64)[:, None] * judged.stride
    pos = np.searchsorted(judged.keys, keys)
    np.minimum(pos, len(judged.keys) - 1, out=pos)
    hit = judged.keys[pos] == keys
    grades[hit] = judged.grades[pos[hit]]
    return grades


def evaluate(
    rankings: Sequence[Ranking | Sequence[str]],
    judgments: Judged | Sequence[Mapping[str, int]],
    wanted: Sequence[tuple[str, int | None]],
    *,
    level: int = 1,
) -> dict[tuple[str, int | None], np.ndarray]:
    """(family, K) -> per-query values, for canonical rankings (Ranking objects or id
    sequences) and their queries' judgments (raw, or encoded once by `prepare`)."""
    if level < 1:
        raise ValueError(f"relevance level must be >= 1, got {level}")
    judged = judgments if isinstance(judgments, Judged) else prepare(judgments)
    n = len(rankings)
    if judged.n_queries != n:
        raise ValueError(f"{n} rankings but judgments for {judged.n_queries} queries")
    ks = [k for _, k in wanted if k is not None]
    longest = max((len(r.ids if isinstance(r, Ranking) else r) for r in rankings), default=0)
    width = max([1, longest, *ks])
    grades = grade_matrix(rankings, judged, width)
    rel = grades >= level
    cum_rel = np.cumsum(rel, axis=1, dtype=np.int32)
    num_rel = np.bincount(judged.rows[judged.grades >= level], minlength=n)
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
                if "first" not in cache:
                    first = np.argmax(rel, axis=1)
                    cache["first"] = np.where(rel[np.arange(n), first], first, width)
                first = cache["first"]
                hit = first < k
                v = np.where(hit, 1.0 / (first + 1), 0.0) * no_rel
            elif family in ("map_cut", "map"):
                if "ap" not in cache:  # precision at each relevant rank, 0 elsewhere
                    cache["ap"] = np.where(rel, cum_rel / ranks, 0.0)
                v = cache["ap"][:, : width if k is None else k].sum(axis=1) / num_rel
            elif family == "Rprec":
                at = np.clip(num_rel, 1, width) - 1
                v = cum_rel[np.arange(n), at] / num_rel
            elif family == "ndcg_cut":
                if "dcg" not in cache:  # discounted gain at each rank; summed up to each K
                    cache["dcg"] = np.maximum(grades, 0) / np.log2(ranks + 1)
                    cache["idcg"] = _ideal_dcg(judged, max(ks))
                v = cache["dcg"][:, :k].sum(axis=1) / cache["idcg"][:, col]
            else:
                raise ValueError(f"unknown standard metric family '{family}'")
            out[(family, k)] = np.asarray(v, dtype=np.float64)
    return out


def _ideal_dcg(judged: Judged, depth: int) -> np.ndarray:
    """Cumulative DCG of each query's ideal ranking (all positive grades, best first) to depth.

    0 where a query has no positive grade, so nDCG there is 0/0 = NaN."""
    pos = judged.grades > 0
    rows, grades = judged.rows[pos], judged.grades[pos]
    order = np.lexsort((-grades, rows))  # by query, best grade first
    rows, grades = rows[order], grades[order]
    starts = np.searchsorted(rows, rows, side="left")
    rank = np.arange(len(rows)) - starts
    keep = rank < depth
    ideal = np.zeros((judged.n_queries, depth), dtype=np.float64)
    ideal[rows[keep], rank[keep]] = grades[keep]
    discount = 1.0 / np.log2(np.arange(2, depth + 2, dtype=np.float64))
    return np.cumsum(ideal * discount, axis=1)
