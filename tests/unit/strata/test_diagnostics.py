"""Corpus diagnostics (SPEC 6): the O(M·d) Similarity against the brute-force M×M mean, and gold
redundancy on hand-counted groups."""

import dataclasses
import json
import os

import numpy as np
import pytest

from harness.core.errors import HarnessError
from harness.core.types import Benchmark, Chunk, Query
from harness.strata.diagnostics import diagnose, gold_redundancy, load, similarity


def brute_force(emb: np.ndarray) -> float:
    e = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    sims = e @ e.T
    m = len(e)
    return float((sims.sum() - np.trace(sims)) / (m * (m - 1)))


@pytest.mark.parametrize("m,d,seed", [(2, 3, 0), (7, 5, 1), (300, 64, 2), (1000, 384, 3)])
def test_similarity_equals_the_mean_of_the_pair_matrix(m, d, seed):
    rng = np.random.default_rng(seed)
    emb = rng.normal(size=(m, d)) + 0.3  # a shared offset, so the mean cosine is not ~0
    assert similarity(emb) == pytest.approx(brute_force(emb), abs=1e-12)


def test_similarity_normalises_rows_and_takes_float32():
    rng = np.random.default_rng(5)
    emb = rng.normal(size=(50, 16)).astype(np.float32)
    scaled = emb * rng.uniform(0.1, 10, size=(50, 1)).astype(np.float32)
    assert similarity(scaled) == pytest.approx(brute_force(emb.astype(np.float64)), abs=1e-6)


def test_similarity_hand_computed():
    # three unit vectors: e1, e1, e2 -> pairs (1, 0, 0) counted both ways -> 2 / 6
    emb = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    assert similarity(emb) == pytest.approx(1 / 3)


@pytest.mark.parametrize("emb", [np.zeros((1, 4)), np.array([[1.0, 0.0], [0.0, 0.0]])])
def test_similarity_refuses_undefined_input(emb):
    with pytest.raises(HarnessError):
        similarity(emb)


def _bench(groups_per_query):
    corpus = {f"c{i}": Chunk(f"c{i}", f"text {i}") for i in range(6)}
    queries = tuple(
        Query(f"q{i}", "x", tuple(frozenset(g) for g in groups))
        for i, groups in enumerate(groups_per_query)
    )
    return Benchmark(name="tiny", corpus=corpus, queries=queries, checksum="sha256:t", source="t")


def test_gold_redundancy_counts_groups_with_more_than_one_chunk():
    bench = _bench([[["c1"], ["c2", "c3"]], [["c4", "c5", "c0"]], [["c1"]]])
    red = gold_redundancy(bench)
    assert red["n_groups"] == 4 and red["n_redundant"] == 2
    assert red["value"] == pytest.approx(0.5)
    assert red["mean_group_size"] == pytest.approx((1 + 2 + 3 + 1) / 4)


class _FakeEmbedder:
    """Stands in for a Dense retriever: embeds a text as a fixed random vector."""

    class encoder:
        model_id = "fake/model"

    def embed(self, texts, role, label):
        return np.stack([np.random.default_rng(len(t)).normal(size=8) for t in texts])


def test_diagnose_writes_and_merges_per_embedder(tmp_path):
    bench = _bench([[["c1"], ["c2", "c3"]]])
    out = diagnose(bench, _FakeEmbedder(), "fake", tmp_path)
    path = tmp_path / "tiny" / "diagnostics.json"
    assert out["path"] == str(path)
    diagnose(bench, _FakeEmbedder(), "other", tmp_path)
    doc = load(path)
    assert sorted(doc["similarity"]) == ["fake", "other"]
    assert doc["gold_redundancy"]["value"] == pytest.approx(0.5)
    assert doc["similarity"]["fake"]["model"] == "fake/model"
    # other data: the old entries are dropped, not mixed in
    other = dataclasses.replace(bench, checksum="sha256:other")
    diagnose(other, _FakeEmbedder(), "fake", tmp_path)
    assert sorted(json.loads(path.read_text())["similarity"]) == ["fake"]


def test_damaged_diagnostics_file_is_one_error(tmp_path):
    path = tmp_path / "diagnostics.json"
    path.write_text("{not json")
    with pytest.raises(HarnessError, match="diagnostics.json: not valid JSON"):
        load(path)


def test_general_wiki_minilm_subset_matches_brute_force(general_wiki, tmp_path):
    """The acceptance check: MiniLM embeddings of real General-Wiki chunks, O(M·d) formula
    against the mean of the M×M cosine matrix, to 1e-6."""
    pytest.importorskip("sentence_transformers")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from harness.data.benchmarks import load_redqa
    from harness.strata.build import make_embedder

    bench = load_redqa(general_wiki, name="general-wiki")
    texts = [c.index_text for c in bench.corpus.values()][:400]
    embedder = make_embedder("minilm", {"device": "cpu", "cache": False, "cache_dir": None})
    emb = np.asarray(embedder.embed(texts, "document", "test"), dtype=np.float32)
    assert emb.shape == (400, 384)
    fast = similarity(emb)
    assert fast == pytest.approx(brute_force(emb.astype(np.float64)), abs=1e-6)
    assert 0.0 < fast < 0.5  # MiniLM on encyclopaedic chunks: low but positive
