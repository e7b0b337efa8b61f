"""Canonical top-k from scores in corpus order: score descending, ties by chunk id descending."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from harness.core.types import Ranking


def id_positions(ids: Sequence[str]) -> np.ndarray:
    """Each chunk's position in ascending id order (so ties break by id with one int compare)."""
    arr = np.asarray(ids, dtype=object)
    pos = np.empty(len(arr), dtype=np.int64)
    pos[np.argsort(arr, kind="stable")] = np.arange(len(arr))
    return pos


def top_of_row(row: np.ndarray, depth: int, ids: np.ndarray, id_pos: np.ndarray) -> Ranking:
    """The canonical top `depth` of one query's scores over the whole corpus."""
    if depth < len(row):
        cut = np.partition(row, len(row) - depth)[len(row) - depth]
        cand = np.flatnonzero(row >= cut)  # every chunk tied at the cut competes on id
    else:
        cand = np.arange(len(row))
    return top_of_candidates(cand, row[cand], depth, ids, id_pos)


def top_of_candidates(
    cand: np.ndarray, scores: np.ndarray, depth: int, ids: np.ndarray, id_pos: np.ndarray
) -> Ranking:
    """Canonical order of candidate chunks (corpus positions) with their scores, cut at depth.
    The candidates must include every chunk tied with the depth-th score."""
    order = np.lexsort((-id_pos[cand], -scores))[:depth]
    chosen = np.asarray(cand[order], dtype=np.int64)
    return Ranking(
        tuple(ids[chosen].tolist()), tuple(scores[order].astype(np.float64).tolist()), chosen
    )
