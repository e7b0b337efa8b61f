"""BM25's index and search paths (numpy for small jobs, compiled kernels for big ones, one
batch or many) give the scores of the former sparse product `(query counts) @ (term x
document weights)` bit for bit, rankings equal to canonical() over those scores, and the
scores of rank_bm25.BM25Okapi."""

import math
from contextlib import contextmanager
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi
from scipy import sparse

import retrievers.bm25 as bm25_module
from harness.core.errors import ConfigError
from harness.core.run import canonical
from harness.core.types import Chunk, Query
from retrievers.bm25 import BM25
from retrievers.topk import id_positions

# numpy: one counting batch, search in numpy. compiled: batches of a few tokens (numba
# counting and placing), search through the kernel, queries in batches of 20 (so a thread
# scores several queries in a row with one score array).
PATHS = {
    "numpy": {"_COMPILED_FROM_CELLS": 10**18, "_BATCH_TOKENS": 1 << 30},
    "compiled": {"_COMPILED_FROM_CELLS": 0, "_BATCH_TOKENS": 7, "_QUERY_BATCH": 20},
}
INDEX_ARRAYS = ("_indptr", "_docs", "_weights", "_dense_of", "_dense", "_id_pos", "_by_pos")


@contextmanager
def path(name):
    with mock.patch.multiple(bm25_module, **PATHS[name]):
        yield


def sparse_product(texts, queries, k1, b, epsilon, tokenize=str.split):
    """The former implementation: a COO token matrix summed into CSR, weights per entry,
    scores = query-count matrix @ weights (scipy)."""
    vocab: dict[str, int] = {}
    term_ids: list[int] = []
    lengths = np.zeros(len(texts))
    for d, text in enumerate(texts):
        toks = tokenize(text)
        lengths[d] = len(toks)
        term_ids.extend(vocab.setdefault(t, len(vocab)) for t in toks)
    doc_ids = np.repeat(np.arange(len(texts)), lengths.astype(np.int64))
    tf = sparse.csr_matrix(
        (np.ones(len(term_ids)), (np.asarray(term_ids, dtype=np.int64), doc_ids)),
        shape=(len(vocab), len(texts)),
    )
    tf.sum_duplicates()
    avgdl = lengths.sum() / len(texts) or 1.0
    df = np.diff(tf.indptr).astype(np.float64)
    idf = np.log(len(texts) - df + 0.5) - np.log(df + 0.5)
    if len(idf):
        idf = np.where(idf < 0, epsilon * (math.fsum(idf) / len(idf)), idf)
    norm = k1 * (1 - b + b * lengths / avgdl)
    rows = np.repeat(np.arange(tf.shape[0]), np.diff(tf.indptr))
    f = tf.data
    data = idf[rows] * (f * (k1 + 1) / (f + norm[tf.indices]))
    weights = sparse.csr_matrix((data, tf.indices, tf.indptr), shape=tf.shape)
    r, c = [], []
    for i, q in enumerate(queries):
        for tok in tokenize(q):
            if tok in vocab:
                r.append(i)
                c.append(vocab[tok])
    qm = sparse.csr_matrix((np.ones(len(r)), (r, c)), shape=(len(queries), len(vocab)))
    return np.asarray((qm @ weights).todense())


def check_against_sparse(ids, texts, queries, depth, k1=1.5, b=0.75, epsilon=0.25):
    """Both paths: scores bit-identical to the sparse product, rankings canonical over them,
    and the same index arrays."""
    corpus = {i: Chunk(i, t) for i, t in zip(ids, texts)}
    qs = [Query(f"q{i}", q, ()) for i, q in enumerate(queries)]
    ref = sparse_product(texts, queries, k1, b, epsilon)
    built = {}
    for name in PATHS:
        with path(name):
            bm25 = BM25(k1=k1, b=b, epsilon=epsilon)
            bm25.index(corpus)
            scores = bm25.scores(qs)
            run = bm25.search(qs, depth=depth)
        assert np.array_equal(scores, ref), name
        for i, q in enumerate(qs):
            expected = canonical(zip(ids, ref[i].tolist()), depth)
            assert run[q.query_id] == expected, (name, q.text)
            assert [ids[c] for c in run[q.query_id].codes] == list(expected.ids)
        built[name] = bm25
    for attr in INDEX_ARRAYS:
        assert np.array_equal(getattr(built["numpy"], attr), getattr(built["compiled"], attr))
    return built["numpy"]


WORDS = "the a of river town mill salt glass rope wool x y z".split()


@settings(max_examples=120, deadline=None)
@given(
    data=st.data(),
    docs=st.lists(st.lists(st.sampled_from(WORDS), max_size=12), min_size=1, max_size=25),
    queries=st.lists(
        st.lists(st.sampled_from([*WORDS, "zzz", "unknown"]), max_size=6), min_size=1, max_size=8
    ),
    depth=st.integers(1, 30),
    k1=st.floats(0.0, 3.0),
    b=st.floats(0.0, 1.0),
    epsilon=st.floats(0.0, 1.0),
)
def test_random_corpora_match_the_sparse_product(data, docs, queries, depth, k1, b, epsilon):
    # Empty chunks and queries, unknown and repeated query terms, ties, negative idf (small
    # vocabulary), depth beyond the corpus; ids whose string order is not corpus order.
    order = data.draw(st.permutations(range(len(docs))))
    ids = [f"d{i}" for i in order]
    texts = [" ".join(d) for d in docs]
    check_against_sparse(ids, texts, [" ".join(q) for q in queries], depth, k1, b, epsilon)


def _zipf_corpus(n_docs, n_words, seed):
    rng = np.random.default_rng(seed)
    p = 1 / np.arange(1, n_words + 1)
    words = np.array([f"w{i}" for i in range(n_words)])
    texts = [
        " ".join(words[rng.choice(n_words, size=rng.integers(0, 15), p=p / p.sum())])
        for _ in range(n_docs)
    ]
    return texts, words


def test_a_bigger_corpus_takes_every_kernel_path():
    """Dense rows (terms in half the chunks) before and after sparse terms, queries touching
    few chunks (the posting-list top-k, zero-score fill) or many (the full scan)."""
    texts, words = _zipf_corpus(400, 300, seed=1)
    texts[0] = "rare_first " + texts[0]  # a sparse term with a lower id than any dense term
    ids = [f"c{(i * 7919) % 400}" for i in range(400)]
    queries = [
        "w0",
        "rare_first w0 w1",
        "w250 w251",  # few chunks: fewer positive scores than depth, zeros fill by id
        "w120 w120 w5",
        "",
        "nothing known",
        *[" ".join(words[[i, i + 1, 3 * i]]) for i in range(0, 90, 3)],
    ]
    bm25 = check_against_sparse(ids, texts, queries, depth=60)
    assert len(bm25._dense) > 0 and bm25._nonneg


@pytest.mark.parametrize("depth", [7, 64])
def test_ties_at_the_cut_compete_on_id_across_the_corpus(depth):
    """Hundreds of chunks with equal scores: whichever run of the scan a tied chunk sits in,
    it beats the kept ones with lower ids."""
    rng = np.random.default_rng(4)
    texts = [" ".join(rng.choice(["p", "q", "r"], size=rng.integers(1, 3))) for _ in range(700)]
    ids = [f"t{(i * 389) % 700:03d}" for i in range(700)]  # id order unlike corpus order
    check_against_sparse(ids, texts, ["p", "q r", "r r p", "s"], depth=depth)


def test_negative_weights_take_the_full_scan():
    # Terms in most chunks with epsilon = 0 and a corpus whose mean idf is negative.
    texts = ["a b", "a b", "a b c", "a c", "a"] * 3
    bm25 = check_against_sparse(
        [f"{i:02d}" for i in range(15)], texts, ["a", "b c", "c c z", ""], depth=20, epsilon=0.5
    )
    assert not bm25._nonneg


@pytest.mark.parametrize("name", list(PATHS))
def test_rank_bm25_scores(name):
    texts, _ = _zipf_corpus(300, 200, seed=2)
    texts = [t or "w0" for t in texts]  # rank_bm25 divides 0 by 0 on empty chunks at b=1
    queries = ["w0 w1 w1 w77", "w3", "w199 zzz", "w10 w20 w30 w40"]
    corpus = {str(i): Chunk(str(i), t) for i, t in enumerate(texts)}
    with path(name):
        bm25 = BM25()
        bm25.index(corpus)
        ours = bm25.scores([Query(str(i), q, ()) for i, q in enumerate(queries)])
    ref = BM25Okapi([t.split() for t in texts])
    expected = np.array([ref.get_scores(q.split()) for q in queries])
    assert np.allclose(ours, expected, rtol=1e-12, atol=0)


def test_streamed_index_equals_the_mapping_index():
    texts, _ = _zipf_corpus(200, 100, seed=3)
    ids = [f"x{i}" for i in range(200)]
    a, b = BM25(), BM25()
    a.index({i: Chunk(i, t) for i, t in zip(ids, texts)})
    b.index_texts(iter(zip(ids, texts)))
    for attr in INDEX_ARRAYS:
        assert np.array_equal(getattr(a, attr), getattr(b, attr))
    assert a._vocab == b._vocab and list(a._ids) == list(b._ids)


def test_index_texts_rejects_duplicate_ids_and_empty_streams():
    with pytest.raises(ConfigError, match="'b' occurs more than once"):
        BM25().index_texts([("a", "x"), ("b", "y"), ("b", "z")])
    with pytest.raises(ConfigError, match="empty corpus"):
        BM25().index_texts(iter([]))


@given(st.lists(st.text(alphabet="ab01é", max_size=4), unique=True, max_size=20))
def test_id_positions_rank_ids_ascending(ids):
    expected = {c: r for r, c in enumerate(sorted(ids))}
    assert id_positions(ids).tolist() == [expected[c] for c in ids]
    assert id_positions(sorted(ids)).tolist() == list(range(len(ids)))
