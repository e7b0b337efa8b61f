"""Compiled BM25 loops: per-document term counts, postings by term, and per-query top-k.

numba compiles these on first use and caches the machine code beside the module (as
metrics/_scan.py does). Imported lazily by retrievers.bm25, and only for corpora or query
sets big enough to pay for loading numba.

The index: sparse postings by term (documents int32, weights float64), except that a term
in at least half the documents keeps a dense row of weights (one per document, 0 where
absent): at most 4/3 the size of its postings, and added to the scores with vector
instructions.

Scores add each query term's weight in ascending term-id order, starting from 0.0, which is
exactly what the sparse product `(query counts) @ (term x document weights)` did before
(scipy's SpGEMM), so scores are bit-identical to it: without fastmath numba emits the same
IEEE operations in the same order, and adding a dense row's 0.0 leaves a score unchanged.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True, nogil=True)
def count_terms(
    tokens, lengths, doc0, mark, slot, df, out_terms, out_tf, out_nuniq
):  # pragma: no cover
    """Distinct terms of each document of a batch (tokens back to back, `lengths` per
    document, global ids from doc0) with their counts, in first-occurrence order.

    `mark` (-1 or the last document a term was seen in) and `slot` are scratch arrays over
    the vocabulary; df[t] gains 1 per document holding t. Returns the number of pairs."""
    p = 0
    j = 0
    for i in range(lengths.shape[0]):
        d = doc0 + i
        start = p
        for _ in range(lengths[i]):
            t = tokens[j]
            j += 1
            if mark[t] != d:
                mark[t] = d
                slot[t] = p
                out_terms[p] = t
                out_tf[p] = 1
                df[t] += 1
                p += 1
            else:
                out_tf[slot[t]] += 1
        out_nuniq[i] = p - start
    return p


@njit(cache=True, nogil=True)
def scatter_weights(
    terms, tf, nuniq, doc0, idf, norm, k1p1, next_slot, dense_of, post_docs, post_w, dense
):  # pragma: no cover
    """Place one batch's (document, term, count) pairs in the index, each as its BM25
    weight idf[t] * (f * (k1 + 1) / (f + norm[d])): in t's dense row dense[dense_of[t]] when
    it has one, else at next_slot[t], t's next free posting. Batches come in document
    order, so each posting list is sorted by document."""
    p = 0
    for i in range(nuniq.shape[0]):
        d = doc0 + i
        nd = norm[d]
        for _ in range(nuniq[i]):
            t = terms[p]
            f = np.float64(tf[p])
            w = idf[t] * (f * k1p1 / (f + nd))
            r = dense_of[t]
            if r >= 0:
                dense[r, d] = w
            else:
                s = next_slot[t]
                post_docs[s] = d
                post_w[s] = w
                next_slot[t] = s + 1
            p += 1


@njit(cache=True, nogil=True)
def _accumulate(
    indptr, docs, weights, dense_of, dense, q_terms, q_counts, lo, hi, acc
):  # pragma: no cover
    """acc += the scores of the query whose terms are q_terms[lo:hi], term by term."""
    for j in range(lo, hi):
        t = q_terms[j]
        c = q_counts[j]
        r = dense_of[t]
        if r >= 0:
            row = dense[r]
            for d in range(acc.shape[0]):
                acc[d] += c * row[d]
        else:
            for k in range(indptr[t], indptr[t + 1]):
                acc[docs[k]] += c * weights[k]


@njit(cache=True, parallel=True)
def dense_scores(
    indptr, docs, weights, dense_of, dense, q_ptr, q_terms, q_counts, out
):  # pragma: no cover
    """out[i] (zeros on entry) += query i's scores over every document."""
    for i in prange(q_ptr.shape[0] - 1):
        _accumulate(
            indptr,
            docs,
            weights,
            dense_of,
            dense,
            q_terms,
            q_counts,
            q_ptr[i],
            q_ptr[i + 1],
            out[i],
        )


_RUN = 32


# A size-k min-heap of (score, id position) whose root is the worst kept entry. Id positions
# are unique, so (score, position) is a total order: higher score first, then higher id.
@njit(cache=True, nogil=True, inline="always")
def _worse(s1, p1, s2, p2):  # pragma: no cover
    return s1 < s2 or (s1 == s2 and p1 < p2)


@njit(cache=True, nogil=True)
def _sift_down(hs, hp, size, i):  # pragma: no cover
    s, p = hs[i], hp[i]
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and _worse(hs[c + 1], hp[c + 1], hs[c], hp[c]):
            c += 1
        if not _worse(hs[c], hp[c], s, p):
            break
        hs[i], hp[i] = hs[c], hp[c]
        i = c
    hs[i], hp[i] = s, p


@njit(cache=True, nogil=True)
def _offer(hs, hp, size, cap, s, p):  # pragma: no cover
    """Offer (s, p) to the heap; returns the new size."""
    if size < cap:
        i = size
        while i > 0:  # sift up
            parent = (i - 1) // 2
            if not _worse(s, p, hs[parent], hp[parent]):
                break
            hs[i], hp[i] = hs[parent], hp[parent]
            i = parent
        hs[i], hp[i] = s, p
        return size + 1
    if _worse(hs[0], hp[0], s, p):
        hs[0], hp[0] = s, p
        _sift_down(hs, hp, size, 0)
    return size


@njit(cache=True, nogil=True)
def _count_at_least(x, bar):  # pragma: no cover
    """How many of x are >= bar (a loop LLVM vectorises)."""
    c = 0
    for i in range(x.shape[0]):
        if x[i] >= bar:
            c += 1
    return c


@njit(cache=True, nogil=True)
def _top_full(
    indptr,
    docs,
    weights,
    dense_of,
    dense,
    q_terms,
    q_counts,
    lo,
    hi,
    id_pos,
    acc,
    dirty,
    hs,
    hp,
    depth,
):  # pragma: no cover
    """Score every document into acc, term by term, then heap the top `depth`. acc is
    all zeros on entry unless `dirty`, and is left dirty. Returns the heap's size (depth)."""
    n_docs = acc.shape[0]
    rest = lo
    if lo < hi and dense_of[q_terms[lo]] >= 0:
        # A leading dense term writes every score (0.0 + its weight): no zeroing needed.
        row = dense[dense_of[q_terms[lo]]]
        c = q_counts[lo]
        for d in range(n_docs):
            acc[d] = 0.0 + c * row[d]
        rest = lo + 1
    elif dirty:
        acc[:] = 0.0
    _accumulate(indptr, docs, weights, dense_of, dense, q_terms, q_counts, rest, hi, acc)
    size = 0
    ts, tp = -np.inf, -1  # the worst kept entry once the heap is full: the bar to clear
    for c0 in range(0, n_docs, _RUN):
        c1 = min(c0 + _RUN, n_docs)
        # Most runs hold no score that clears the bar: a vectorised count skips them.
        if size < depth or _count_at_least(acc[c0:c1], ts) > 0:
            for d in range(c0, c1):
                s = acc[d]
                if size < depth or s > ts or (s == ts and id_pos[d] > tp):
                    size = _offer(hs, hp, size, depth, s, id_pos[d])
                    ts, tp = hs[0], hp[0]
    return size


@njit(cache=True, nogil=True)
def _top_touched(
    indptr, docs, weights, q_terms, q_counts, lo, hi, id_pos, by_pos, acc, taken, hs, hp, depth
):  # pragma: no cover
    """For sparse terms only and no negative weight: only the documents the postings touch
    can score above 0. Add the postings into acc (all zeros), heap the positive scores
    reading (and resetting) only those documents, then fill any remaining places with
    zero-score documents by descending id position. Returns the heap's size (depth)."""
    for j in range(lo, hi):
        t = q_terms[j]
        c = q_counts[j]
        for k in range(indptr[t], indptr[t + 1]):
            acc[docs[k]] += c * weights[k]
    size = 0
    ts, tp = -np.inf, -1
    for j in range(lo, hi):
        t = q_terms[j]
        for k in range(indptr[t], indptr[t + 1]):
            d = docs[k]
            s = acc[d]
            if s > 0.0:
                acc[d] = 0.0  # reset, and a later posting of d reads 0
                if size < depth or s > ts or (s == ts and id_pos[d] > tp):
                    size = _offer(hs, hp, size, depth, s, id_pos[d])
                    ts, tp = hs[0], hp[0]
    if size < depth:
        # Every positive document is in the heap (none was pushed out): the rest score 0.
        for i in range(size):
            taken[by_pos[hp[i]]] = 1
        pos = by_pos.shape[0] - 1
        while size < depth:
            if taken[by_pos[pos]] == 0:
                size = _offer(hs, hp, size, depth, 0.0, pos)
            pos -= 1
        for i in range(size):
            taken[by_pos[hp[i]]] = 0
    return size


@njit(cache=True, parallel=True)
def search_top(
    indptr,
    docs,
    weights,
    dense_of,
    dense,
    q_ptr,
    q_terms,
    q_counts,
    id_pos,
    by_pos,
    depth,
    nonneg,
    n_blocks,
    out_doc,
    out_score,
):  # pragma: no cover
    """Per query, the canonical top `depth` over every document (zero scores included):
    score descending, ties by id position descending. out_doc/out_score: (queries, depth).

    Queries are split into n_blocks runs of consecutive queries, one thread each. A query
    whose (sparse) postings cover under a quarter of the corpus, with no negative weight,
    reads only the documents they touch; any other scores every document."""
    n_docs = id_pos.shape[0]
    nq = q_ptr.shape[0] - 1
    for b in prange(n_blocks):
        acc = np.zeros(n_docs)
        dirty = False
        taken = np.zeros(n_docs if nonneg else 0, np.uint8)
        hs = np.empty(depth)
        hp = np.empty(depth, np.int64)
        for q in range(b * nq // n_blocks, (b + 1) * nq // n_blocks):
            lo, hi = q_ptr[q], q_ptr[q + 1]
            touched = 0
            for j in range(lo, hi):
                t = q_terms[j]
                touched += n_docs if dense_of[t] >= 0 else indptr[t + 1] - indptr[t]
            if nonneg and 4 * touched < n_docs:
                if dirty:
                    acc[:] = 0.0
                    dirty = False
                size = _top_touched(
                    indptr,
                    docs,
                    weights,
                    q_terms,
                    q_counts,
                    lo,
                    hi,
                    id_pos,
                    by_pos,
                    acc,
                    taken,
                    hs,
                    hp,
                    depth,
                )
            else:
                size = _top_full(
                    indptr,
                    docs,
                    weights,
                    dense_of,
                    dense,
                    q_terms,
                    q_counts,
                    lo,
                    hi,
                    id_pos,
                    acc,
                    dirty,
                    hs,
                    hp,
                    depth,
                )
                dirty = True
            for i in range(size - 1, -1, -1):  # pop the worst into the last free place
                out_score[q, i] = hs[0]
                out_doc[q, i] = by_pos[hp[0]]
                hs[0], hp[0] = hs[i], hp[i]
                _sift_down(hs, hp, i, 0)
