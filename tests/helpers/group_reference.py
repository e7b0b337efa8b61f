"""The RARE group metrics for one query, written straight from their definitions: the oracle
that metrics.group.evaluate's one-pass batch is tested against."""

from __future__ import annotations

import math
from collections.abc import Sequence

Groups = Sequence[frozenset[str]]


def _discount(j: int) -> float:
    return 1.0 / math.log2(j + 1)


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
