"""BM25 (Okapi, ATIRE idf with epsilon floor), score-identical to rank_bm25.BM25Okapi.

The index is term-major postings: for each term, the documents holding it (int32, in
corpus order) and their precomputed BM25 weights (float64); a term in at least half the
chunks keeps a dense row of weights instead. Indexing streams: each chunk is tokenised into
a growing int32 buffer, counted per document in batches, and the batches are placed
straight into the postings, so the only transient is the batches' (term, count) pairs. A
query adds its terms' weights into a score array and a compiled top-k reads it
(retrievers/_bm25_kernels.py); small jobs do the same in numpy, without loading numba.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from harness.core.errors import ConfigError, check_flag
from harness.core.run import Ranking, Run
from harness.core.types import Chunk, Query
from retrievers.tokenize import get_tokenizer
from retrievers.topk import id_positions, ranked, top_of_row

# Tokens per counting batch: the batch buffers (int32) stay a few tens of MB.
_BATCH_TOKENS = 1 << 22
# Below this many (query, chunk) score cells, search in numpy: loading numba costs more.
_COMPILED_FROM_CELLS = 1 << 25
# Queries per search call into the kernel: bounds the (queries x depth) result arrays.
_QUERY_BATCH = 4096


class _Vocab(dict):
    """term -> id, giving an unseen term the next id (so `map(vocab.__getitem__, ...)` runs
    in C and only new terms reach Python)."""

    def __missing__(self, term: str) -> int:
        self[term] = code = len(self)
        return code


def _count_numpy(
    tokens: np.ndarray, lengths: np.ndarray, n_terms: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """count_terms for one batch in numpy: distinct terms per document (ascending), their
    counts, and the number of distinct terms of each document."""
    doc = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    keys, tf = np.unique(doc * max(n_terms, 1) + tokens, return_counts=True)
    nuniq = np.bincount(keys // max(n_terms, 1), minlength=len(lengths)).astype(np.int32)
    return (keys % max(n_terms, 1)).astype(np.int32), tf.astype(np.int32), nuniq


def _place_numpy(
    doc0: int,
    terms: np.ndarray,
    tf: np.ndarray,
    nuniq: np.ndarray,
    idf: np.ndarray,
    norm: np.ndarray,
    k1p1: float,
    dense_of: np.ndarray,
    dense: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """scatter_weights for a corpus of one batch in numpy: fills the dense rows and returns
    the other terms' postings (documents, weights) by term, then document."""
    order = np.argsort(terms, kind="stable")  # pairs come in document order
    terms = terms[order]
    docs = (doc0 + np.repeat(np.arange(len(nuniq), dtype=np.int32), nuniq))[order]
    f = tf[order].astype(np.float64)
    weights = idf[terms] * (f * k1p1 / (f + norm[docs]))
    rows = dense_of[terms]
    in_row = rows >= 0
    dense[rows[in_row], docs[in_row]] = weights[in_row]
    return docs[~in_row], weights[~in_row]


class BM25:
    """Okapi BM25 with rank_bm25's parameters: k1, b and the negative-idf floor epsilon."""

    def __init__(
        self,
        *,
        name: str = "bm25",
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
        tokenizer: str = "whitespace",
        stopwords: bool = False,
    ):
        for key, value in (("k1", k1), ("b", b), ("epsilon", epsilon)):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"retriever.{key} must be a number, got {value!r}")
            if not math.isfinite(value):  # k1=inf scores every chunk 0 (and numpy warns)
                raise ConfigError(f"retriever.{key} must be a finite number, got {value}")
        if not k1 >= 0:
            raise ConfigError(f"retriever.k1 must be >= 0, got {k1}")
        if not 0 <= b <= 1:
            raise ConfigError(f"retriever.b must be in [0, 1], got {b}")
        if not epsilon >= 0:
            raise ConfigError(f"retriever.epsilon must be >= 0, got {epsilon}")
        self.name = name
        self.k1, self.b, self.epsilon = float(k1), float(b), float(epsilon)
        stopwords = check_flag(stopwords, "retriever.stopwords")
        self.tokenize = get_tokenizer(tokenizer, stopwords=stopwords)
        self._vocab: dict[str, int] = {}
        self._ids = np.empty(0, dtype=object)
        self._indptr: np.ndarray | None = None  # (terms + 1,) int64: term t's postings
        self._docs = np.empty(0, dtype=np.int32)  # posting documents, by term then document
        self._weights = np.empty(0, dtype=np.float64)  # their BM25 weights
        self._dense_of = np.empty(0, dtype=np.int32)  # term -> its dense row, or -1
        self._dense = np.empty((0, 0), dtype=np.float64)  # (dense terms, chunks) weights
        self._nonneg = True  # no negative weight: the top-k may skip untouched documents
        self._id_pos = np.empty(0, dtype=np.int64)
        self._by_pos = np.empty(0, dtype=np.int64)

    def index(self, corpus: Mapping[str, Chunk]) -> None:
        """Tokenise the corpus and precompute every (term, document) BM25 weight."""
        self.index_texts((cid, chunk.index_text) for cid, chunk in corpus.items())

    def index_texts(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Index (chunk id, text) pairs read once, in order: a corpus too big to hold as
        Chunk objects can stream from a file or a generator. Same index as `index`."""
        vocab = _Vocab()
        term_of = vocab.__getitem__
        tokenize = self.tokenize
        ids: list[str] = []
        lengths = array("i")  # tokens per document, for the whole corpus
        df = np.zeros(0, dtype=np.int64)
        mark = np.zeros(0, dtype=np.int64)
        slot = np.zeros(0, dtype=np.int64)
        batches: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []
        tokens, first = array("i"), 0

        def flush(final: bool) -> None:
            nonlocal df, mark, slot, tokens, first
            toks = np.frombuffer(tokens, dtype=np.int32)
            lens = np.frombuffer(lengths, dtype=np.int32)[first:]
            if final and not batches:  # a corpus of one batch: numpy, no numba to load
                terms, tf, nuniq = _count_numpy(toks, lens, len(vocab))
                df = np.bincount(terms, minlength=len(vocab)).astype(np.int64)
            else:
                from retrievers._bm25_kernels import count_terms

                if len(vocab) > len(df):  # the scratch arrays cover the vocabulary
                    grow = max(len(vocab), 2 * len(df)) - len(df)
                    df = np.concatenate([df, np.zeros(grow, dtype=np.int64)])
                    mark = np.concatenate([mark, np.full(grow, -1, dtype=np.int64)])
                    slot = np.concatenate([slot, np.zeros(grow, dtype=np.int64)])
                terms = np.empty(len(toks), dtype=np.int32)
                tf = np.empty(len(toks), dtype=np.int32)
                nuniq = np.empty(len(lens), dtype=np.int32)
                n = count_terms(toks, lens, first, mark, slot, df, terms, tf, nuniq)
                # Counts fit 16 bits in any real text: the batch keeps 6 bytes a pair.
                small = n == 0 or tf[:n].max() <= np.iinfo(np.uint16).max
                terms, tf = terms[:n].copy(), tf[:n].astype(np.uint16 if small else np.int32)
            batches.append((first, terms, tf, nuniq))
            del toks, lens  # release the buffers' exports before they grow again
            tokens, first = array("i"), len(ids)

        for cid, text in pairs:
            toks = tokenize(text)
            ids.append(cid)
            lengths.append(len(toks))
            tokens.extend(map(term_of, toks))
            if len(tokens) >= _BATCH_TOKENS:
                flush(False)
        if not ids:
            raise ConfigError("cannot index an empty corpus")
        if len(ids) > np.iinfo(np.int32).max:
            raise ConfigError(f"BM25 indexes at most 2^31 - 1 chunks, got {len(ids)}")
        if first < len(ids):
            flush(True)

        n_docs, n_terms = len(ids), len(vocab)
        df = df[:n_terms]
        idf, norm = self._idf_and_norm(df, np.asarray(lengths, dtype=np.float64), n_docs)
        # A term in half the chunks or more: a dense row (8 bytes a chunk, against 12 a
        # posting) is at most 4/3 of its postings and adds with vector instructions.
        dense_terms = np.flatnonzero(2 * df >= n_docs)
        dense_of = np.full(n_terms, -1, dtype=np.int32)
        dense_of[dense_terms] = np.arange(len(dense_terms), dtype=np.int32)
        df[dense_terms] = 0
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])
        del mark, slot, df
        dense = np.zeros((len(dense_terms), n_docs), dtype=np.float64)
        if len(batches) == 1:
            docs, weights = _place_numpy(*batches.pop(), idf, norm, self.k1 + 1, dense_of, dense)
        else:
            from retrievers._bm25_kernels import scatter_weights

            docs = np.empty(int(indptr[-1]), dtype=np.int32)
            weights = np.empty(int(indptr[-1]), dtype=np.float64)
            next_slot = indptr[:-1].copy()
            while batches:  # free each batch once placed
                doc0, terms, tf, nuniq = batches.pop(0)
                scatter_weights(
                    terms, tf, nuniq, doc0, idf, norm, self.k1 + 1, next_slot, dense_of,
                    docs, weights, dense,
                )  # fmt: skip
        self._vocab = dict(vocab)
        self._ids = np.asarray(ids, dtype=object)
        self._indptr, self._docs, self._weights = indptr, docs, weights
        self._dense_of, self._dense = dense_of, dense
        # Every weight is idf[t] times a positive factor, so the sign is idf's.
        self._nonneg = bool(n_terms == 0 or idf.min() >= 0)
        self._id_pos = id_positions(self._ids)
        self._by_pos = np.empty(n_docs, dtype=np.int64)
        self._by_pos[self._id_pos] = np.arange(n_docs)
        ordered = self._ids[self._by_pos]
        if (ordered[1:] == ordered[:-1]).any():
            dup = ordered[1:][ordered[1:] == ordered[:-1]][0]
            raise ConfigError(
                f"chunk id {dup!r} occurs more than once in the corpus; give every chunk its own id"
            )

    def _idf_and_norm(
        self, df: np.ndarray, lengths: np.ndarray, n_docs: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Each term's idf (rank_bm25's floor included) and each document's length norm."""
        avgdl = lengths.sum() / n_docs or 1.0  # a corpus of empty chunks has no terms at all
        dff = df.astype(np.float64)
        idf = np.log(n_docs - dff + 0.5) - np.log(dff + 0.5)
        if len(idf):
            # rank_bm25: terms with idf < 0 get epsilon times the mean idf (taken before flooring).
            floor = self.epsilon * (math.fsum(idf) / len(idf))
            idf = np.where(idf < 0, floor, idf)
        norm = self.k1 * (1 - self.b + self.b * lengths / avgdl)
        return idf, norm

    def _query_terms(self, queries: Sequence[Query]) -> tuple[np.ndarray, ...]:
        """Each query's known terms in ascending id order with their counts (a repeated term
        counts again, as in rank_bm25), flattened: (offsets, term ids, counts)."""
        if self._indptr is None:
            raise RuntimeError("index() must be called before search()")
        ptr, terms, counts = [0], [], []
        get = self._vocab.get
        for q in queries:
            found = Counter(t for t in map(get, self.tokenize(q.text)) if t is not None)
            for t in sorted(found):
                terms.append(t)
                counts.append(found[t])
            ptr.append(len(terms))
        return (
            np.asarray(ptr, dtype=np.int64),
            np.asarray(terms, dtype=np.int32),
            np.asarray(counts, dtype=np.float64),
        )

    def _use_kernel(self, n_queries: int) -> bool:
        """Search through the compiled kernel only where it pays for loading numba."""
        return n_queries * len(self._ids) >= _COMPILED_FROM_CELLS

    def _add_scores(self, q_ptr, q_terms, q_counts, out: np.ndarray) -> None:
        """out[i] (zeros) += query i's scores, term by term as the kernel adds them."""
        indptr, docs, weights = self._indptr, self._docs, self._weights
        for i, row in enumerate(out):
            for j in range(q_ptr[i], q_ptr[i + 1]):
                t = q_terms[j]
                if self._dense_of[t] >= 0:
                    row += q_counts[j] * self._dense[self._dense_of[t]]
                else:
                    a, b = indptr[t], indptr[t + 1]
                    row[docs[a:b]] += q_counts[j] * weights[a:b]  # no repeats in a posting list

    def scores(self, queries: Sequence[Query]) -> np.ndarray:
        """Dense BM25 scores, one row per query, one column per chunk in corpus order."""
        q_ptr, q_terms, q_counts = self._query_terms(queries)
        out = np.zeros((len(queries), len(self._ids)), dtype=np.float64)
        if not self._use_kernel(len(queries)):
            self._add_scores(q_ptr, q_terms, q_counts, out)
        elif len(queries):
            from retrievers._bm25_kernels import dense_scores

            dense_scores(
                self._indptr, self._docs, self._weights, self._dense_of, self._dense,
                q_ptr, q_terms, q_counts, out,
            )  # fmt: skip
        return out

    def search(self, queries: Sequence[Query], *, depth: int) -> Run:
        """Top `depth` chunks per query (all chunks, zero scores included, as rank_bm25 ranks)."""
        q_ptr, q_terms, q_counts = self._query_terms(queries)
        depth_eff = min(depth, len(self._ids))
        rankings: dict[str, Ranking] = {}
        if not self._use_kernel(len(queries)):
            row = np.zeros((1, len(self._ids)))
            for i, q in enumerate(queries):
                row[:] = 0.0
                self._add_scores(q_ptr[i : i + 2], q_terms, q_counts, row)
                rankings[q.query_id] = top_of_row(row[0], depth_eff, self._ids, self._id_pos)
            return Run(self.name, rankings, depth)

        import numba

        from retrievers._bm25_kernels import search_top

        for start in range(0, len(queries), _QUERY_BATCH):
            part = queries[start : start + _QUERY_BATCH]
            nq = len(part)
            out_doc = np.zeros((nq, depth_eff), dtype=np.int64)
            out_score = np.zeros((nq, depth_eff), dtype=np.float64)
            if depth_eff > 0:
                lo, hi = q_ptr[start], q_ptr[start + nq]
                # Several blocks per thread, handed out one at a time: queries differ in cost.
                n_blocks = min(nq, 4 * numba.get_num_threads())
                with numba.parallel_chunksize(1):
                    search_top(
                        self._indptr, self._docs, self._weights, self._dense_of, self._dense,
                        q_ptr[start : start + nq + 1] - lo, q_terms[lo:hi], q_counts[lo:hi],
                        self._id_pos, self._by_pos, depth_eff, self._nonneg, n_blocks,
                        out_doc, out_score,
                    )  # fmt: skip
            for q, docs, scores in zip(part, out_doc, out_score):
                rankings[q.query_id] = ranked(docs, scores, self._ids)
        return Run(self.name, rankings, depth)
