"""Inner-product search: every exact backend gives the same canonical rankings, ties included."""

import numpy as np
import pytest

from harness.core.errors import ConfigError, HarnessError
from retrievers.search import InnerProductSearch

IDS = [f"c{i:02d}" for i in range(12)]


def _corpus():
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(12, 4)).astype(np.float32)
    emb[[3, 7, 9]] = emb[5]  # four chunks with identical vectors: tied scores for every query
    return emb


def _ranked(backend, emb, queries, depth, **kw):
    s = InnerProductSearch(backend=backend, **kw)
    s.build(emb, IDS)
    return [(r.ids, r.codes.tolist()) for r in s.search(queries, depth)]


@pytest.mark.parametrize("backend", ["faiss", "torch"])
def test_exact_backends_match_numpy(backend):
    pytest.importorskip(backend)
    emb = _corpus()
    queries = np.vstack([emb[5] * 3, np.random.default_rng(1).normal(size=(5, 4))])
    for depth in (1, 2, 3, 5, 12, 20):
        assert _ranked(backend, emb, queries, depth) == _ranked("numpy", emb, queries, depth)


def test_ties_at_the_cut_break_by_id_descending():
    emb = _corpus()
    q = emb[5:6] * 2  # chunks 3, 5, 7, 9 tie at the top
    for backend in ("numpy", "faiss"):
        if backend == "faiss":
            pytest.importorskip("faiss")
        ids, codes = _ranked(backend, emb, q, 2)[0]
        assert ids == ("c09", "c07") and codes == [9, 7]


def test_approximate_indexes_return_full_lists():
    pytest.importorskip("faiss")
    rng = np.random.default_rng(2)
    emb = rng.normal(size=(400, 8)).astype(np.float32)
    ids = [f"d{i:03d}" for i in range(400)]
    exact = InnerProductSearch(backend="numpy")
    exact.build(emb, ids)
    q = emb[:20] + 0.01
    want = [r.ids[0] for r in exact.search(q, 10)]
    for index in ("hnsw", "ivf"):
        s = InnerProductSearch(backend="faiss", index=index, nlist=8, nprobe=8)
        s.build(emb, ids)
        got = s.search(q, 10)
        assert all(len(r.ids) == 10 for r in got)
        # the nearest neighbour (the query's own chunk) is found by both approximate indexes
        assert sum(r.ids[0] == w for r, w in zip(got, want)) >= 18


def test_bad_settings():
    with pytest.raises(ConfigError, match="unknown search backend 'fiass'"):
        InnerProductSearch(backend="fiass")
    with pytest.raises(ConfigError, match="needs the faiss backend"):
        InnerProductSearch(backend="numpy", index="hnsw")
    s = InnerProductSearch(backend="numpy")
    s.build(_corpus(), IDS)
    with pytest.raises(HarnessError, match="dimension 3 but the corpus's have 4"):
        s.search(np.zeros((1, 3), np.float32), 5)
