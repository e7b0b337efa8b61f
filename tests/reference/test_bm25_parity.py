"""BM25 scores and rankings agree with rank_bm25.BM25Okapi (the RARE reference)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from harness.core.run import canonical
from harness.core.types import Chunk, Query
from harness.data.benchmarks import load_benchmark
from retrievers.bm25 import BM25
from retrievers.tokenize import get_tokenizer

RTOL = 1e-9


def _reference_scores(texts, queries, tokenize, **params):
    ref = BM25Okapi([tokenize(t) for t in texts], **params)
    return np.array([ref.get_scores(tokenize(q)) for q in queries])


def _assert_close(ours, ref):
    assert np.isfinite(ref).all()
    # A score that sums terms of opposite sign (negative idf) can cancel to 0 in one order of
    # additions and to 1e-17 in another: below 1e-6 the tolerance is absolute (1e-15).
    scale = np.maximum(np.abs(ref), 1e-6)
    assert np.max(np.abs(ours - ref) / scale) <= RTOL


@pytest.mark.parametrize(
    "tokenizer, stopwords, params",
    [
        ("whitespace", False, {}),
        ("simple", False, {"k1": 1.2, "b": 0.4, "epsilon": 0.1}),
        ("simple", True, {"k1": 0.9, "b": 1.0, "epsilon": 0.5}),
    ],
)
def test_demo_corpus_parity(tokenizer, stopwords, params):
    bench = load_benchmark({"name": "demo", "format": "redqa", "packaged": "demo.json"})
    bm25 = BM25(tokenizer=tokenizer, stopwords=stopwords, **params)
    bm25.index(bench.corpus)
    tok = get_tokenizer(tokenizer, stopwords=stopwords)
    texts = [c.text for c in bench.corpus.values()]
    ref = _reference_scores(texts, [q.text for q in bench.queries], tok, **params)
    _assert_close(bm25.scores(bench.queries), ref)


WORDS = st.sampled_from("the a of river town mill salt glass rope wool x y z".split())


@settings(max_examples=150, deadline=None)
@given(
    # rank_bm25 computes 0/0 = NaN when a chunk's length norm is 0 (k1 = 0, or b = 1 and an
    # empty chunk), so the reference is only defined for k1 > 0 and non-empty chunks.
    docs=st.lists(st.lists(WORDS, min_size=1, max_size=12), min_size=1, max_size=25),
    queries=st.lists(st.lists(WORDS, min_size=1, max_size=6), min_size=1, max_size=5),
    k1=st.floats(0.01, 3.0),
    b=st.floats(0.0, 1.0),
    epsilon=st.floats(0.0, 1.0),
)
def test_random_corpora_parity_and_canonical_top(docs, queries, k1, b, epsilon):
    # Small vocabularies make many terms appear in over half the documents: negative idf.
    texts = [" ".join(d) for d in docs]
    corpus = {f"d{i:02d}": Chunk(f"d{i:02d}", t) for i, t in enumerate(texts)}
    qs = [Query(f"q{i}", " ".join(q), ()) for i, q in enumerate(queries)]
    bm25 = BM25(k1=k1, b=b, epsilon=epsilon)
    bm25.index(corpus)
    ref = _reference_scores(texts, [q.text for q in qs], str.split, k1=k1, b=b, epsilon=epsilon)
    ours = bm25.scores(qs)
    _assert_close(ours, ref)
    depth = 5
    run = bm25.search(qs, depth=depth)
    for i, q in enumerate(qs):
        expected = canonical(zip(corpus, ours[i].tolist()), depth)
        assert run[q.query_id] == expected


def test_negative_idf_floor_matches_reference():
    texts = ["a b", "a c", "a d", "e"]  # 'a' is in 3 of 4 documents: idf < 0
    corpus = {str(i): Chunk(str(i), t) for i, t in enumerate(texts)}
    bm25 = BM25()
    bm25.index(corpus)
    ref = BM25Okapi([t.split() for t in texts])
    assert ref.idf["a"] == pytest.approx(0.25 * ref.average_idf)
    _assert_close(
        bm25.scores([Query("q", "a a b zzz", ())]), np.array([ref.get_scores("a a b zzz".split())])
    )


def test_degenerate_length_norm_scores_zero_not_nan():
    """Where rank_bm25 would compute 0/0 (b = 1 and an empty chunk), the harness gives 0."""
    corpus = {"a": Chunk("a", "river town"), "b": Chunk("b", ""), "c": Chunk("c", "salt mill")}
    bm25 = BM25(b=1.0)
    bm25.index(corpus)
    scores = bm25.scores([Query("q", "river", ())])
    assert np.isfinite(scores).all() and scores[0, 1] == 0 and scores[0, 0] > 0
