"""BM25 (Okapi, ATIRE idf with epsilon floor), score-identical to rank_bm25.BM25Okapi.

Scores come from one sparse term x document weight matrix: a query's scores are
a sparse row-vector product, so there is no per-document Python loop.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from scipy import sparse

from harness.core.errors import ConfigError
from harness.core.types import Chunk, Query, Ranking, Run
from retrievers.tokenize import get_tokenizer
from retrievers.topk import id_positions, top_of_row

# Bound the dense score block (queries x documents) kept in memory at once.
_BLOCK_CELLS = 1 << 24


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
        if not k1 >= 0:
            raise ConfigError(f"retriever.k1 must be >= 0, got {k1}")
        if not 0 <= b <= 1:
            raise ConfigError(f"retriever.b must be in [0, 1], got {b}")
        if not epsilon >= 0:
            raise ConfigError(f"retriever.epsilon must be >= 0, got {epsilon}")
        self.name = name
        self.k1, self.b, self.epsilon = float(k1), float(b), float(epsilon)
        self.tokenize = get_tokenizer(tokenizer, stopwords=stopwords)
        self._vocab: dict[str, int] = {}
        self._weights: sparse.csr_matrix | None = None
        self._ids: list[str] = []

    def index(self, corpus: Mapping[str, Chunk]) -> None:
        """Tokenise the corpus and precompute every (term, document) BM25 weight."""
        if not corpus:
            raise ConfigError("cannot index an empty corpus")
        self._ids = list(corpus)
        vocab: dict[str, int] = {}
        term_ids: list[int] = []
        lengths = np.zeros(len(self._ids), dtype=np.float64)
        for d, chunk in enumerate(corpus.values()):
            tokens = self.tokenize(chunk.index_text)
            lengths[d] = len(tokens)
            term_ids.extend(vocab.setdefault(t, len(vocab)) for t in tokens)
        doc_ids = np.repeat(np.arange(len(self._ids)), lengths.astype(np.int64))
        n_docs, n_terms = len(self._ids), len(vocab)
        tf = sparse.csr_matrix(
            (np.ones(len(term_ids)), (np.asarray(term_ids, dtype=np.int64), doc_ids)),
            shape=(n_terms, n_docs),
        )
        tf.sum_duplicates()
        self._vocab = vocab
        self._weights = self._bm25_weights(tf, lengths)

    def _bm25_weights(self, tf: sparse.csr_matrix, lengths: np.ndarray) -> sparse.csr_matrix:
        n_docs = tf.shape[1]
        avgdl = lengths.sum() / n_docs or 1.0  # a corpus of empty chunks has no terms at all
        df = np.diff(tf.indptr).astype(np.float64)  # documents per term (rows are terms)
        idf = np.log(n_docs - df + 0.5) - np.log(df + 0.5)
        if len(idf):
            # rank_bm25: terms with idf < 0 get epsilon times the mean idf (taken before flooring).
            floor = self.epsilon * (math.fsum(idf) / len(idf))
            idf = np.where(idf < 0, floor, idf)
        norm = self.k1 * (1 - self.b + self.b * lengths / avgdl)
        f = tf.data
        cols = tf.indices
        rows = np.repeat(np.arange(tf.shape[0]), np.diff(tf.indptr))
        data = idf[rows] * (f * (self.k1 + 1) / (f + norm[cols]))
        return sparse.csr_matrix((data, tf.indices, tf.indptr), shape=tf.shape)

    def scores(self, queries: Sequence[Query]) -> np.ndarray:
        """Dense BM25 scores, one row per query, one column per chunk in corpus order."""
        return self._score_block(self._query_matrix(queries))

    def _query_matrix(self, queries: Sequence[Query]) -> sparse.csr_matrix:
        """Query-term count matrix; repeated query terms count again, as in rank_bm25."""
        if self._weights is None:
            raise RuntimeError("index() must be called before search()")
        rows, cols = [], []
        for i, q in enumerate(queries):
            for tok in self.tokenize(q.text):
                t = self._vocab.get(tok)
                if t is not None:
                    rows.append(i)
                    cols.append(t)
        return sparse.csr_matrix(
            (np.ones(len(rows)), (rows, cols)), shape=(len(queries), len(self._vocab))
        )

    def _score_block(self, qm: sparse.csr_matrix) -> np.ndarray:
        return np.asarray((qm @ self._weights).todense())

    def search(self, queries: Sequence[Query], *, depth: int) -> Run:
        """Top `depth` chunks per query (all chunks, zero scores included, as rank_bm25 ranks)."""
        qm = self._query_matrix(queries)
        n_docs = len(self._ids)
        depth_eff = min(depth, n_docs)
        ids = np.asarray(self._ids, dtype=object)
        id_pos = id_positions(self._ids)
        block = max(1, _BLOCK_CELLS // n_docs)
        rankings: dict[str, Ranking] = {}
        for start in range(0, len(queries), block):
            scores = self._score_block(qm[start : start + block])
            for row, q in zip(scores, queries[start : start + block]):
                rankings[q.query_id] = top_of_row(row, depth_eff, ids, id_pos)
        return Run(self.name, rankings, depth)
