"""Standard metrics for graded qrels with trec_eval semantics, computed for all queries at once.

Names follow trec_eval's measures: ndcg_cut@K, recall@K, P@K, map_cut@K, map, recip_rank@K,
success@K, Rprec. Rankings and judgments are matched by integer codes
(corpus positions where rankings carry them, never per-chunk string lookups) in one compiled
pass (metrics._scan) that counts, at each K, what every metric needs; chunks past the end of
a list and unjudged chunks have grade 0. Ids the corpus lacks match by id, as in trec_eval: a
ranked id the corpus lacks (code -1) is unjudged unless the judgments name that very id, and a
judged id the corpus lacks is relevant and counts in R, whether or not any list holds it.
A query with no relevant chunk (grade >= level) is NaN for the binary metrics; one with no
positive grade is NaN for nDCG.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat

import numpy as np

from harness.core.types import Ranking


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


def flat_codes(rankings: Sequence[Ranking | Sequence[str]], judged: Judged):
    """Every ranking's chunk codes end to end, and where each query's list starts (n + 1
    offsets). Rankings without corpus codes, and ids the corpus lacks (code -1), are looked up
    among the judged ids (-1 if not judged)."""
    parts = []
    for r in rankings:
        codes = getattr(r, "codes", None)
        if codes is not None and judged.corpus_coded:
            absent = np.flatnonzero(codes < 0)
            if len(absent):  # rare: a run naming chunks the corpus lacks
                codes = codes.copy()
                codes[absent] = [judged.code.get(r.ids[i], -1) for i in absent]
            parts.append(codes)
        else:
            ids = r.ids if isinstance(r, Ranking) else r
            parts.append(np.fromiter(map(judged.code.get, ids, repeat(-1)), np.int64, len(ids)))
    offsets = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, parts), np.int64, len(parts)), out=offsets[1:])
    flat = np.concatenate(parts).astype(np.int64, copy=False) if parts else offsets[:0]
    return flat, offsets


def evaluate(
    rankings: Sequence[Ranking | Sequence[str]],
    judgments: Judged | Sequence[Mapping[str, int]],
    wanted: Sequence[tuple[str, int | None]],
    *,
    level: int = 1,
) -> dict[tuple[str, int | None], np.ndarray]:
    """(family, K) -> per-query values, for canonical rankings (Ranking objects or id
    sequences) and their queries' judgments (raw, or encoded once by `prepare`)."""
    from metrics._scan import scan  # numba: loaded only when standard metrics are asked for

    if level < 1:
        raise ValueError(f"relevance level must be >= 1, got {level}")
    judged = judgments if isinstance(judgments, Judged) else prepare(judgments)
    n = len(rankings)
    if judged.n_queries != n:
        raise ValueError(f"{n} rankings but judgments for {judged.n_queries} queries")
    flat, offsets = flat_codes(rankings, judged)
    ks = [k for _, k in wanted if k is not None]
    width = max([1, int(np.diff(offsets).max(initial=0)), *ks])
    cuts = sorted({*ks, width})  # width: the uncut metrics read the whole list
    col = {c: i for i, c in enumerate(cuts)}
    jstarts = np.searchsorted(judged.rows, np.arange(n + 1))
    jcodes = judged.keys - judged.rows * judged.stride
    rel_at, ap_at, dcg_at, idcg_at, first, top_r, num_rel = scan(
        flat, offsets, jcodes, judged.grades, jstarts, np.asarray(cuts, np.int64), level, width
    )
    counts = Counts(rel_at, ap_at, dcg_at, idcg_at, first, top_r, num_rel)
    out: dict[tuple[str, int | None], np.ndarray] = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        for family, k in wanted:
            if family not in FORMULAS:
                raise ValueError(f"unknown standard metric family '{family}'")
            c = col[width if k is None else k]
            out[(family, k)] = np.asarray(FORMULAS[family](counts, c, k), dtype=np.float64)
    return out


@dataclass(frozen=True)
class Counts:
    """What the scan counted per query (rows) at each cut (columns): the inputs of every formula."""

    rel_at: np.ndarray
    ap_at: np.ndarray
    dcg_at: np.ndarray
    idcg_at: np.ndarray
    first: np.ndarray  # 0-based rank of the first relevant chunk
    top_r: np.ndarray  # relevant chunks in the top R
    num_rel: np.ndarray

    @property
    def defined(self) -> np.ndarray:
        """1 where a query has a relevant chunk, NaN where it has none (binary metrics)."""
        return np.where(self.num_rel > 0, 1.0, np.nan)


# family -> formula(counts, column of the cut, K): one per trec_eval measure; the registry
# (metrics.registry) names these families and says which are cut at K.
FORMULAS = {
    "recall": lambda s, c, k: s.rel_at[:, c] / s.num_rel,
    "P": lambda s, c, k: s.rel_at[:, c] / k * s.defined,
    "success": lambda s, c, k: (s.rel_at[:, c] > 0) * s.defined,
    "recip_rank": lambda s, c, k: np.where(s.first < k, 1.0 / (s.first + 1), 0.0) * s.defined,
    "map_cut": lambda s, c, k: s.ap_at[:, c] / s.num_rel,
    "map": lambda s, c, k: s.ap_at[:, c] / s.num_rel,
    "Rprec": lambda s, c, k: s.top_r / s.num_rel,
    # 0/0 = NaN where a query has no positive grade
    "ndcg_cut": lambda s, c, k: s.dcg_at[:, c] / s.idcg_at[:, c],
}
