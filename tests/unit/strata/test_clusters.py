"""The entity kNN graph and Leiden clusters on hand-built embeddings."""

import numpy as np
import pytest

from harness.strata.clusters import knn_graph, leiden

pytest.importorskip("faiss")


def _two_groups():
    # three entities around each of two orthogonal directions, plus one loner
    a, b, c = np.eye(3)
    emb = np.array([a, a + 0.1 * b, a + 0.1 * c, b, b + 0.1 * a, b + 0.1 * c, c])
    return emb.astype(np.float32)


def test_graph_keeps_close_pairs_once():
    g = knn_graph(_two_groups(), k=50, tau=0.5)
    pairs = {tuple(p) for p in g.edges.tolist()}
    assert pairs == {(0, 1), (0, 2), (1, 2), (3, 4), (3, 5), (4, 5)}  # the loner joins none
    w = dict(zip(map(tuple, g.edges.tolist()), g.weights))
    assert w[(0, 1)] == pytest.approx(1 / np.sqrt(1.01), abs=1e-6)  # cosine of a, a + .1b


def test_k_limits_neighbours():
    g = knn_graph(_two_groups(), k=1, tau=0.5)
    assert all(len(set(p)) == 2 for p in g.edges.tolist()) and len(g.edges) <= 6


def test_leiden_finds_the_groups_and_is_deterministic():
    pytest.importorskip("leidenalg")
    g = knn_graph(_two_groups(), k=50, tau=0.5)
    labels = leiden(g, resolution=1.0, seed=0)
    assert labels[:3].tolist() == [0, 0, 0] and labels[3:6].tolist() == [1, 1, 1]
    assert labels[6] == 2  # alone
    assert leiden(g, resolution=1.0, seed=0).tolist() == labels.tolist()
