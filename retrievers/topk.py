"""Canonical top-k from scores in corpus order: score descending, ties by chunk id descending."""

from __future__ import annotations

from collections.abc import Sequence
from operator import lt

import numpy as np

from harness.core.run import Ranking


def id_positions(ids: Sequence[str]) -> np.ndarray:
    """Each chunk's position in ascending id order (so ties break by id with one int compare)."""
    arr = np.asarray(ids, dtype=object)
    if all(map(lt, arr[:-1], arr[1:])):  # already ascending (zero-padded ids): skip the sort
        return np.arange(len(arr), dtype=np.int64)
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
    return ranked(cand[order], scores[order], ids)


def ranked(chosen: np.ndarray, scores: np.ndarray, ids: np.ndarray) -> Ranking:
    """The Ranking of corpus positions `chosen` already in canonical order, with their scores."""
    chosen = np.asarray(chosen, dtype=np.int64)
    return Ranking(
        tuple(ids[chosen].tolist()), tuple(np.asarray(scores, dtype=np.float64).tolist()), chosen
    )
