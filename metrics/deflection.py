"""Deflection, retrieval side: can a retriever's own scores tell an answerable query from one
the corpus cannot answer (CRUMQs, GaRAGe), so that a system could decline by a threshold?

The block (metrics.json `protocols.deflection`) holds the top-1 score distribution per
answerable value, the AUROC of answerable ("yes") against unanswerable ("no") queries by the
top-1 score and by the mean of the top K scores, and, where passages carry relevance labels,
how often an unanswerable query's top K holds a distractor (a RELATED or OUTDATED passage that
looks like an answer and is not one).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from harness.core.errors import BenchmarkError
from harness.core.labels import label_key as core_label_key
from harness.core.run import Run
from harness.core.types import ANSWERABLE, Benchmark, Query

QUANTILES = (("q25", 25.0), ("median", 50.0), ("q75", 75.0))


def label_key(name: str) -> str:
    """A label name as the block shows it: the shared spelling rule (harness.core.labels),
    in lower case."""
    return core_label_key(name).lower()


def deflection(
    benchmark: Benchmark, run: Run, ks: Iterable[int], distractors: Sequence[str] = ()
) -> dict[str, Any] | None:
    """The deflection block of a cell, JSON-ready and in a fixed key order; None when every
    query is answerable (nothing to deflect).

    - `n`: queries per answerable value (yes, partial, no).
    - `top1`: per answerable value, the top-1 score's n, mean, min, q25, median, q75 and max
      (numpy.percentile, its default linear interpolation); `empty` counts the queries whose
      ranking is empty (the retriever returned nothing), which have no top-1 score.
    - `auroc`: {"top1": x, "top<K>_mean": x, ...}: the probability that an answerable query
      scores above an unanswerable one, ties counted 1/2 (Mann-Whitney U / (n_yes n_no));
      None when either class has no query. Partial queries are left out (they sit between the
      two classes); top-K mean = the mean of the first min(K, len) scores. An empty ranking
      scores -inf: a query with nothing retrieved is below every threshold, so it is always
      deflected.
    - `distractors` (only when some unanswerable query has labels and `distractors` names
      some): {"labels": [...], "top<K>": {"share", "queries", "n"}}: of the `n` unanswerable
      queries with labels, the `queries` whose top K holds a chunk labelled with one of
      `distractors` (names compared as label_key does), and their share.

    Scores are the retriever's raw scores. An AUROC over them assumes scores are comparable
    across queries (true for BM25 or cosine similarity within one retriever; not for a run
    whose scores are per-query ranks or normalised per query), which is exactly what a
    threshold-based deflection needs: one cut-off for every query.
    """
    ks = _ks(ks)
    queries = benchmark.queries
    for q in queries:
        if q.answerable not in ANSWERABLE:
            raise BenchmarkError(
                f"query '{q.query_id}': answerable is {q.answerable!r}; expected one of "
                f"{', '.join(ANSWERABLE)}"
            )
    if all(q.answerable == "yes" for q in queries):
        return None
    by = {a: [q for q in queries if q.answerable == a] for a in ANSWERABLE}
    out: dict[str, Any] = {
        "n": {a: len(by[a]) for a in ANSWERABLE},
        "top1": {a: _summary([run[q.query_id].scores for q in by[a]]) for a in ANSWERABLE},
        "auroc": _aurocs(run, by["yes"], by["no"], ks),
    }
    block = _distractors(run, by["no"], ks, distractors)
    if block is not None:
        out["distractors"] = block
    return out


def _ks(ks: Iterable[int]) -> list[int]:
    ks = list(ks)
    bad = [k for k in ks if not isinstance(k, numbers.Integral) or isinstance(k, bool) or k < 1]
    if bad:
        raise ValueError(f"deflection cutoffs must be positive integers, got {bad}")
    return sorted({int(k) for k in ks})


def _summary(rankings: list[tuple[float, ...]]) -> dict[str, Any]:
    """Distribution of the top-1 score over the non-empty rankings; the empty ones counted."""
    tops = np.array([s[0] for s in rankings if s], dtype=float)
    out: dict[str, Any] = {"n": int(tops.size), "empty": len(rankings) - int(tops.size)}
    if tops.size == 0:
        return out | {"mean": None, "min": None} | {k: None for k, _ in QUANTILES} | {"max": None}
    qs = np.percentile(tops, [p for _, p in QUANTILES])  # default method: linear
    return (
        out
        | {"mean": float(tops.mean()), "min": float(tops.min())}
        | {k: float(v) for (k, _), v in zip(QUANTILES, qs)}
        | {"max": float(tops.max())}
    )


def _top_mean(scores: tuple[float, ...], k: int) -> float:
    """Mean of the first min(k, len) scores; -inf for an empty ranking (always deflected)."""
    return float(np.mean(scores[:k])) if scores else -math.inf


def _aurocs(run: Run, yes: list[Query], no: list[Query], ks: list[int]) -> dict[str, Any]:
    pos = [run[q.query_id].scores for q in yes]
    neg = [run[q.query_id].scores for q in no]
    out = {"top1": auroc([_top_mean(s, 1) for s in pos], [_top_mean(s, 1) for s in neg])}
    for k in ks:
        out[f"top{k}_mean"] = auroc([_top_mean(s, k) for s in pos], [_top_mean(s, k) for s in neg])
    return out


def auroc(positive: Sequence[float], negative: Sequence[float]) -> float | None:
    """P(a positive scores above a negative), ties counted 1/2; None when a class is empty.

    Computed as Mann-Whitney U / (n_pos n_neg) from average ranks (scipy.stats.rankdata):
    average ranks give a tied pair exactly 1/2, the sort is O(n log n) instead of the n_pos x
    n_neg pair count, and -inf (empty rankings) ranks like any other value. rankdata rather
    than mannwhitneyu because only U is needed, not a p-value or its method choices."""
    if not positive or not negative:
        return None
    from scipy.stats import rankdata

    scores = np.array([*positive, *negative], dtype=float)
    ranks = rankdata(scores, method="average")
    n_pos, n_neg = len(positive), len(negative)
    u = float(ranks[:n_pos].sum()) - n_pos * (n_pos + 1) / 2.0
    return u / (n_pos * n_neg)


def _distractors(
    run: Run, no: list[Query], ks: list[int], distractors: Sequence[str]
) -> dict[str, Any] | None:
    """Share of the labelled unanswerable queries with a distractor-labelled chunk in the top K;
    None when no unanswerable query has labels or no distractor label is named."""
    wanted = sorted({label_key(d) for d in distractors})
    labelled = [q for q in no if q.labels is not None]
    if not wanted or not labelled:
        return None
    keys = set(wanted)
    # rank (0-based) of the first distractor in each labelled query's ranking; None: none
    first: list[int | None] = []
    for q in labelled:
        bad = {c for c, name in q.labels.items() if label_key(name) in keys}
        ids = run[q.query_id].ids
        first.append(next((i for i, c in enumerate(ids) if c in bad), None))
    n = len(labelled)
    out: dict[str, Any] = {"labels": wanted}
    for k in ks:
        hits = sum(1 for r in first if r is not None and r < k)
        out[f"top{k}"] = {"share": hits / n, "queries": hits, "n": n}
    return out
