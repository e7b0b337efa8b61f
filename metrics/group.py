"""Redundancy-aware group metrics (RARE): Coverage@K, PerfRecall@K, group NDCG@K, group MRR@K,
from each query's gold groups (in their listed order) and its canonical ranked chunk ids; NaN
for a query with no group. docs/metrics.md gives the definitions."""

from __future__ import annotations

import math
from collections.abc import Sequence

Groups = Sequence[frozenset[str]]


def evaluate(
    all_groups: Sequence[Groups], rankings: Sequence[Sequence[str]], wanted: Sequence[tuple]
) -> dict[tuple[str, int], list[float]]:
    """(family, K) -> per-query values of the group metrics for every query at once: one
    pass over each ranked list up to the largest K serves every family and K (a group's first
    hit is its best-ranked member; NDCG's greedy matching of the top k is the prefix of the
    top K's). NDCG: a chunk earns 1/log2(j+1) once, for the first still-unmatched group it
    is in; MRR: the mean over groups of 1/rank of the group's first member (0 if absent)."""
    # past every ranked list and every query's group count, a deeper K changes nothing: the
    # tables stop there (K = 10^11 costs nothing)
    reach = max([1, *map(len, rankings), *map(len, all_groups)])
    deepest = min(max(k for _, k in wanted), reach)
    disc = [0.0] + [1.0 / math.log2(j + 1) for j in range(1, deepest + 1)]
    ideal = [0.0]  # ideal[m]: IDCG of m groups
    for j in range(1, deepest + 1):
        ideal.append(ideal[-1] + disc[j])
    out: dict[tuple[str, int], list[float]] = {w: [] for w in wanted}
    items = list(out.items())
    for groups, ranked in zip(all_groups, rankings):
        n = len(groups)
        if not n:
            for _, values in items:
                values.append(math.nan)
            continue
        first: dict[str, int] = {}
        for j, chunk in enumerate(ranked[:deepest], start=1):
            first.setdefault(chunk, j)
        hits = [min([first[c] for c in g if c in first], default=0) for g in groups]
        matched = [False] * n
        earned = []  # ranks at which NDCG's greedy matching scores, ascending
        for chunk, j in first.items():  # first occurrences, in rank order
            for i, g in enumerate(groups):
                if not matched[i] and chunk in g:
                    matched[i] = True
                    earned.append(j)
                    break
        for (family, k), values in items:
            if family == "group_ndcg":
                dcg = 0.0
                for j in earned:
                    if j > k:
                        break
                    dcg += disc[j]
                values.append(dcg / ideal[min(n, k)])
                continue
            covered, rr = 0, 0.0
            for h in hits:
                if 0 < h <= k:
                    covered += 1
                    rr += 1.0 / h
            if family == "coverage":
                values.append(covered / n)
            elif family == "perfrecall":
                values.append(float(covered == n))
            else:  # group_mrr
                values.append(rr / n)
    return out
