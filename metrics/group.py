"""Redundancy-aware group metrics (RARE): Coverage@K, PerfRecall@K, group NDCG@K, group MRR@K.

Each function takes a query's gold groups (in their listed order) and the
canonical ranked chunk ids, and returns a float; NaN when the query has no group.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Groups = Sequence[frozenset[str]]

_DISCOUNT = [0.0] + [1.0 / math.log2(j + 1) for j in range(1, 1001)]


def _discount(j: int) -> float:
    return _DISCOUNT[j] if j < len(_DISCOUNT) else 1.0 / math.log2(j + 1)


def coverage(groups: Groups, ranked: Sequence[str], k: int) -> float:
    """Share of groups with at least one member in the top k."""
    if not groups:
        return math.nan
    top = set(ranked[:k])
    return sum(1 for g in groups if not g.isdisjoint(top)) / len(groups)


def perfrecall(groups: Groups, ranked: Sequence[str], k: int) -> float:
    """1 when every group is covered in the top k, else 0 (RARE's perfect_match@K / Top@K)."""
    cov = coverage(groups, ranked, k)
    return cov if math.isnan(cov) else float(cov == 1.0)


def ndcg(groups: Groups, ranked: Sequence[str], k: int) -> float:
    """Group NDCG: a chunk earns 1/log2(j+1) once, for the first still-unmatched group it is in."""
    if not groups:
        return math.nan
    matched = [False] * len(groups)
    seen: set[str] = set()
    dcg = 0.0
    for j, chunk in enumerate(ranked[:k], start=1):
        if chunk in seen:
            continue  # a duplicate id earns nothing the second time
        seen.add(chunk)
        for i, g in enumerate(groups):
            if not matched[i] and chunk in g:
                matched[i] = True
                dcg += _discount(j)
                break
    idcg = sum(_discount(j) for j in range(1, min(len(groups), k) + 1))
    return dcg / idcg


def mrr(groups: Groups, ranked: Sequence[str], k: int) -> float:
    """Mean over groups of 1/rank of the group's first member within the top k (0 if absent)."""
    if not groups:
        return math.nan
    first: dict[str, int] = {}
    for j, chunk in enumerate(ranked[:k], start=1):
        first.setdefault(chunk, j)
    total = 0.0
    for g in groups:
        ranks = [first[c] for c in g if c in first]
        if ranks:
            total += 1.0 / min(ranks)
    return total / len(groups)


def evaluate(
    all_groups: Sequence[Groups], rankings: Sequence[Sequence[str]], wanted: Sequence[tuple]
) -> dict[tuple[str, int], list[float]]:
    """(family, K) -> per-query values of the group metrics for every query at once, the
    same numbers as the functions above: one pass over each ranked list up to the largest K
    serves every family and K (a group's first hit is its best-ranked member; NDCG's greedy
    matching of the top k is the prefix of the top K's)."""
    deepest = max(k for _, k in wanted)
    disc = [_discount(j) for j in range(deepest + 1)]
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
            if family == "ndcg":
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
            else:  # mrr
                values.append(rr / n)
    return out
