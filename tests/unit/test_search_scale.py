"""Dense search at scale: the index choice (a pure function, called with made-up machines),
the approximate CPU indexes against exact search (recall above a stated bound, identical
across two builds), fp16 flat search giving exact rankings, and the GPU code paths run on
the CPU through an injected stand-in for faiss-gpu."""

import json

import numpy as np
import pytest

from harness.core.errors import ConfigError
from retrievers.search import (
    GPU_PQ_BYTES,
    IndexPlan,
    InnerProductSearch,
    Resources,
    plan_index,
)

GiB = 1 << 30
GPU_80 = Resources(faiss=True, faiss_gpu=True, gpu_free=80 * GiB, host_free=500 * GiB)
CPU_23 = Resources(faiss=True, faiss_gpu=False, gpu_free=None, host_free=23 * GiB)


# --- the choice -------------------------------------------------------------------------


def test_gpu_flat_fp16_when_the_vectors_fit():
    p = plan_index(1_000_000, 4096, resources=GPU_80, device="cuda:0")
    assert (p.backend, p.index, p.device, p.fp16, p.chosen) == (
        "faiss", "flat", "cuda:0", True, "auto",
    )  # fmt: skip
    assert "7.6 GiB of vectors fit" in p.why  # 1M x 4096 x 2 bytes


def test_gpu_ivfpq_when_fp16_vectors_exceed_free_memory():
    small = Resources(faiss_gpu=True, gpu_free=8 * GiB, host_free=500 * GiB)
    p = plan_index(1_000_000, 4096, resources=small, device="cuda:1")
    assert (p.index, p.device, p.fp16) == ("ivfpq", "cuda:1", False)
    # 64 bytes per vector: the largest code faiss-gpu takes that divides 4096; 8 bits on the GPU
    assert dict(p.params) == {"m": 64, "nbits": 8, "nlist": 4000, "nprobe": 32, "refine": 10}
    assert "exceed" in p.why and "6.4 GiB (80% of the GPU's free memory)" in p.why


def test_hnsw_on_the_cpu_when_not_even_pq_codes_fit_the_gpu():
    tiny = Resources(faiss_gpu=True, gpu_free=64 << 20, host_free=500 * GiB)
    p = plan_index(1_000_000, 4096, resources=tiny, device="cuda:0")
    assert (p.index, p.device) == ("hnsw", "cpu")
    assert dict(p.params) == {"M": 32, "ef_construction": 200, "ef_search": 256}
    # and IVF-PQ on the CPU when the host cannot hold the graph either
    both = Resources(faiss_gpu=True, gpu_free=64 << 20, host_free=8 * GiB)
    p = plan_index(1_000_000, 4096, resources=both, device="cuda:0")
    assert (p.index, p.device, p.params["nbits"]) == ("ivfpq", "cpu", 8)


def test_cpu_flat_up_to_the_budget_then_ivfpq():
    assert plan_index(1_000_000, 768, resources=CPU_23).index == "flat"  # 2.9 GiB
    p = plan_index(10_000_000, 4096, resources=CPU_23)  # 153 GiB
    assert (p.index, p.device, p.params["m"]) == ("ivfpq", "cpu", 64)
    # the boundary: exactly 80 % of the free memory still fits
    exact = Resources(host_free=5 * 4096 * 4 * 10)
    assert plan_index(40, 4096, resources=exact).index == "flat"
    assert plan_index(41, 4096, resources=exact).index == "ivfpq"


def test_a_configured_budget_replaces_the_measured_memory():
    p = plan_index(1_000_000, 4096, resources=GPU_80, device="cuda:0", memory_gb=4)
    assert p.index == "ivfpq" and "the budget of 4.0 GiB (search.memory_gb)" in p.why
    p = plan_index(10_000, 384, resources=CPU_23, memory_gb=0.001)
    assert p.index == "ivfpq" and p.params["nbits"] == 8
    assert plan_index(1000, 384, resources=CPU_23, memory_gb=0.01).index == "flat"


def test_an_explicit_index_wins():
    p = plan_index(1_000_000, 4096, resources=CPU_23, index="flat")
    assert (p.index, p.chosen, p.fp16) == ("flat", "config", False)
    p = plan_index(10**9, 4096, resources=GPU_80, device="cuda:0", index="flat")
    assert (p.index, p.device, p.fp16) == ("flat", "cuda:0", True)
    p = plan_index(1000, 64, resources=GPU_80, device="cuda:0", index="hnsw")
    assert p.device == "cpu" and "no GPU HNSW" in p.why
    p = plan_index(1000, 64, resources=GPU_80, device="cuda:0", index="flat", fp16=False)
    assert not p.fp16
    p = plan_index(5000, 64, resources=GPU_80, device="cuda:0", index="ivfpq", pq_m=8)
    assert p.params["m"] == 8 and p.params["nbits"] == 8 and p.device == "cuda:0"


def test_without_faiss_or_without_its_gpu_support():
    none = Resources(faiss=False, host_free=GiB)
    assert plan_index(10, 4, resources=none).backend == "numpy"
    p = plan_index(10, 4, resources=none, device="cuda:0")
    assert (p.backend, p.device) == ("torch", "cuda:0")
    cpu_faiss = Resources(faiss=True, faiss_gpu=False, host_free=GiB)
    p = plan_index(10, 4, resources=cpu_faiss, device="cuda:0")
    assert (p.backend, p.device, p.fp16) == ("faiss", "cpu", False)
    assert "no GPU support" in p.why


@pytest.mark.parametrize("dim", [8, 32, 384, 768, 1024, 1536, 2560, 3072, 4096])
def test_pq_code_sizes_suit_faiss_gpu(dim):
    m = plan_index(10**6, dim, resources=Resources(faiss_gpu=True, gpu_free=1 << 28),
                   device="cuda:0", index="ivfpq").params["m"]  # fmt: skip
    assert m in GPU_PQ_BYTES and dim % m == 0 and dim // m >= 2


def test_the_record_is_deterministic_json():
    p = plan_index(1_000_000, 4096, resources=GPU_80, device="cuda:0", memory_gb=4)
    again = plan_index(1_000_000, 4096, resources=GPU_80, device="cuda:0", memory_gb=4)
    assert json.dumps(p.describe(), sort_keys=True) == json.dumps(again.describe(), sort_keys=True)
    assert set(p.describe()) == {"backend", "index", "device", "fp16", "params", "chosen"}
    # the memory figures are in the note line only: they vary from run to run
    other = Resources(faiss_gpu=True, gpu_free=81 * GiB)
    assert plan_index(1_000_000, 4096, resources=other, device="cuda:0", memory_gb=4).describe() \
        == p.describe()  # fmt: skip


def test_bad_search_settings_are_config_errors():
    with pytest.raises(ConfigError, match="search.memory_gb must be a positive number"):
        InnerProductSearch(memory_gb=0)
    with pytest.raises(ConfigError, match="search.refine must be an integer >= 1"):
        InnerProductSearch(refine=0)
    with pytest.raises(ConfigError, match="unknown search index 'ivf-pq'"):
        InnerProductSearch(index="ivf-pq")
    pytest.importorskip("faiss")
    s = InnerProductSearch(backend="faiss", index="ivfpq", pq_m=5)
    with pytest.raises(ConfigError, match="pq_m=5 does not divide the embedding dimension 8"):
        s.build(np.ones((100, 8), np.float32), [str(i) for i in range(100)])


# --- the CPU paths against exact search ---------------------------------------------------


def _clustered(n=3000, dim=32, n_queries=100, seed=0):
    """Normalised vectors around 30 topics (embeddings cluster), and queries near chunks."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(30, dim))
    emb = centres[rng.integers(0, 30, n)] + 0.6 * rng.normal(size=(n, dim))
    q = emb[rng.integers(0, n, n_queries)] + 0.4 * rng.normal(size=(n_queries, dim))
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return emb.astype(np.float32), q.astype(np.float32), [f"c{i:05d}" for i in range(n)]


def _exact(emb, ids, q, depth):
    s = InnerProductSearch(backend="numpy")
    s.build(emb, ids)
    return s.search(q, depth)


def _recall(got, want):
    return float(np.mean([len(set(g.ids) & set(w.ids)) / len(w.ids) for g, w in zip(got, want)]))


def _lists(rankings):
    return [(r.ids, r.scores) for r in rankings]


# R@10 against exact search that each CPU index must reach on the clustered data, with
# the shipped settings (measured: 1.0 for all three)
BOUNDS = {"hnsw": 0.98, "ivf": 0.98, "ivfpq": 0.95}


@pytest.mark.parametrize("index", sorted(BOUNDS))
def test_approximate_cpu_indexes_recall_and_repeat(index):
    pytest.importorskip("faiss")
    emb, q, ids = _clustered()
    want = _exact(emb, ids, q, 10)
    builds = []
    for _ in range(2):
        s = InnerProductSearch(backend="faiss", index=index)
        s.build(emb, ids)
        builds.append(s.search(q, 10))
        assert s.describe()["index"] == index and s.describe()["device"] == "cpu"
    assert _recall(builds[0], want) >= BOUNDS[index]
    # byte-identical results files need identical lists from two builds (ids and scores)
    assert _lists(builds[0]) == _lists(builds[1])
    # scores are exact inner products, whatever the index
    for r, row in zip(builds[0], q):
        assert np.allclose(r.scores, [emb[int(c[1:])] @ row for c in r.ids], atol=1e-6)


def test_weaker_settings_lose_recall_and_the_bound_can_fail():
    """The recall check is not vacuous: a starved HNSW and a coarse IVF-PQ miss neighbours."""
    pytest.importorskip("faiss")
    rng = np.random.default_rng(3)
    emb = rng.normal(size=(3000, 32)).astype(np.float32)  # no clusters: the hard case
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    q = rng.normal(size=(100, 32)).astype(np.float32)
    ids = [f"c{i:05d}" for i in range(3000)]
    want = _exact(emb, ids, q, 10)
    weak = InnerProductSearch(backend="faiss", index="hnsw", hnsw_m=4, ef_construction=8,
                              ef_search=10)  # fmt: skip
    weak.build(emb, ids)
    assert _recall(weak.search(q, 10), want) < BOUNDS["hnsw"]
    coarse = InnerProductSearch(backend="faiss", index="ivfpq", nprobe=2, refine=1)
    coarse.build(emb, ids)
    fine = InnerProductSearch(backend="faiss", index="ivfpq", nprobe=64, refine=20)
    fine.build(emb, ids)
    assert _recall(coarse.search(q, 10), want) < _recall(fine.search(q, 10), want)


def test_hnsw_is_built_on_one_thread_and_searched_on_all(monkeypatch):
    faiss = pytest.importorskip("faiss")
    emb, q, ids = _clustered(n=500)
    seen = []
    real_add = faiss.IndexHNSWFlat.add

    def add(self, x):
        seen.append(faiss.omp_get_max_threads())
        return real_add(self, x)

    monkeypatch.setattr(faiss.IndexHNSWFlat, "add", add)
    before = faiss.omp_get_max_threads()
    s = InnerProductSearch(backend="faiss", index="hnsw")
    s.build(emb, ids)
    assert seen == [1] and faiss.omp_get_max_threads() == before


def test_auto_on_this_cpu_is_exact_flat_search():
    pytest.importorskip("faiss")
    emb, q, ids = _clustered(n=400)
    s = InnerProductSearch()
    s.build(emb, ids)
    assert s.describe() == {"backend": "faiss", "index": "flat", "device": "cpu", "fp16": False,
                            "params": {}, "chosen": "auto"}  # fmt: skip
    assert [r.ids for r in s.search(q, 20)] == [r.ids for r in _exact(emb, ids, q, 20)]


def test_auto_under_a_tiny_budget_builds_ivfpq_on_the_cpu():
    pytest.importorskip("faiss")
    emb, q, ids = _clustered()
    s = InnerProductSearch(memory_gb=1e-4)  # 105 KB < 375 KB of vectors
    s.build(emb, ids)
    assert s.plan.index == "ivfpq" and s.plan.chosen == "auto"
    assert _recall(s.search(q, 10), _exact(emb, ids, q, 10)) >= BOUNDS["ivfpq"]


# --- fp16 flat search: exact rankings --------------------------------------------------


def _ties():
    """Groups of nearly identical vectors, whose scores differ by less than fp16 can tell
    apart (but more than fp32 rounding), and exact duplicates: ties at the cut."""
    rng = np.random.default_rng(5)
    base = rng.normal(size=(40, 16))
    emb = np.repeat(base, 25, axis=0) + 3e-4 * rng.normal(size=(1000, 16))
    emb[::7] = base[0]  # exact duplicates too
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    q = np.vstack([base[:10] + 0.3 * rng.normal(size=(10, 16)), rng.normal(size=(10, 16))])
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return emb.astype(np.float32), q.astype(np.float32), [f"d{i:04d}" for i in range(1000)]


def _exact_up_to_rounding(got, emb, q, depth, tol=1e-6):
    """Each list is the exact top `depth` in float64 arithmetic, except for the order of
    chunks whose scores differ by less than float32 rounding (`tol`): BLAS kernels round
    such near-ties differently, and no search can promise their order."""
    for ranking, row in zip(got, q):
        s64 = emb.astype(np.float64) @ row.astype(np.float64)
        pos = np.array([int(c[1:]) for c in ranking.ids])
        cut = np.sort(s64)[::-1][depth - 1]
        assert len(pos) == depth and np.all(s64[pos] >= cut - tol)
        assert set(np.flatnonzero(s64 > cut + tol)) <= set(pos.tolist())
        assert np.all(np.diff(s64[pos]) <= tol)  # descending
        assert np.allclose(ranking.scores, s64[pos], atol=tol)


@pytest.mark.parametrize("data", [_clustered, _ties])
@pytest.mark.parametrize("depth", [1, 10, 100])
def test_fp16_flat_search_gives_the_exact_rankings(data, depth):
    pytest.importorskip("faiss")
    emb, q, ids = data()
    s = InnerProductSearch(backend="faiss", index="flat", fp16=True)
    s.build(emb, ids)
    assert s.describe()["fp16"] is True
    got = s.search(q, depth)
    _exact_up_to_rounding(got, emb, q, depth)
    if data is _clustered:  # no near-ties there: the very lists of fp32 search
        assert [r.ids for r in got] == [r.ids for r in _exact(emb, ids, q, depth)]


def test_fp16_search_without_its_proof_would_be_wrong():
    """On this data, fp16 scores alone misorder chunks: the rescoring and the bound matter."""
    emb, q, _ = _ties()
    half = q.astype(np.float16).astype(np.float32) @ emb.astype(np.float16).astype(np.float32).T
    wrong = 0
    for r in range(len(q)):
        top16 = set(np.argsort(-half[r], kind="stable")[:10].tolist())
        top32 = set(np.argsort(-(emb @ q[r]), kind="stable")[:10].tolist())
        wrong += top16 != top32
    assert wrong >= 5


def test_fp16_error_bound_holds():
    """The bound the exactness proof rests on, checked against fp16 arithmetic itself."""
    pytest.importorskip("faiss")
    rng = np.random.default_rng(9)
    for dim, scale in ((16, 1.0), (384, 1.0), (4096, 1.0), (64, 50.0), (64, 1e-3)):
        emb = (scale * rng.normal(size=(300, dim))).astype(np.float32)
        q = (scale * rng.normal(size=(20, dim))).astype(np.float32)
        s = InnerProductSearch(backend="faiss", index="flat", fp16=True)
        s.build(emb, [str(i) for i in range(300)])
        exact = q.astype(np.float64) @ emb.T.astype(np.float64)
        half = q.astype(np.float16).astype(np.float64) @ emb.astype(np.float16).T.astype(np.float64)
        for r in range(len(q)):
            assert np.abs(half[r] - exact[r]).max() <= s._fp16_error(q[r]) / 2


# --- GPU code paths on the CPU ------------------------------------------------------------


class FakeGpu:
    """Stands in for faiss-gpu: records what would move to the GPU and keeps it on the CPU
    (fp16 flat search as fp16 storage there); a small largest k exercises the fall-backs."""

    def __init__(self, max_k=2048):
        self.max_k = max_k
        self.moved: list[tuple[str, str, bool]] = []

    def to_gpu(self, index, device, plan: IndexPlan):
        import faiss

        self.moved.append((plan.index, device, plan.fp16))
        if plan.index == "flat" and plan.fp16:
            return faiss.IndexScalarQuantizer(
                index.d, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT
            )
        return index


def _gpu_search(resources, gpu, **settings):
    return InnerProductSearch(devices=["cuda:0"], resources=lambda device: resources, gpu=gpu,
                              **settings)  # fmt: skip


@pytest.mark.parametrize("max_k", [2048, 12])
def test_gpu_flat_fp16_path_is_exact(max_k):
    pytest.importorskip("faiss")
    emb, q, ids = _ties()
    gpu = FakeGpu(max_k)
    s = _gpu_search(GPU_80, gpu)
    s.build(emb, ids)
    assert gpu.moved == [("flat", "cuda:0", True)]
    assert s.describe() == {"backend": "faiss", "index": "flat", "device": "cuda:0",
                            "fp16": True, "params": {}, "chosen": "auto"}  # fmt: skip
    for depth in (5, 30):  # 30 > max_k=12: the whole row is scored instead
        _exact_up_to_rounding(s.search(q, depth), emb, q, depth)


def test_gpu_ivfpq_path_when_memory_is_short():
    pytest.importorskip("faiss")
    emb, q, ids = _clustered()
    short = Resources(faiss_gpu=True, gpu_free=200_000, host_free=500 * GiB)  # < 750 KB fp16
    gpu = FakeGpu()
    s = _gpu_search(short, gpu)
    s.build(emb, ids)
    assert gpu.moved == [("ivfpq", "cuda:0", False)]
    rec = s.describe()
    assert (rec["index"], rec["device"], rec["params"]["nbits"]) == ("ivfpq", "cuda:0", 8)
    assert _recall(s.search(q, 10), _exact(emb, ids, q, 10)) >= BOUNDS["ivfpq"]


def test_gpu_fallback_to_hnsw_on_the_cpu_moves_nothing():
    pytest.importorskip("faiss")
    emb, q, ids = _clustered(n=600)
    none = Resources(faiss_gpu=True, gpu_free=1000, host_free=500 * GiB)
    gpu = FakeGpu()
    s = _gpu_search(none, gpu)
    s.build(emb, ids)
    assert gpu.moved == [] and s.describe()["index"] == "hnsw" and s.describe()["device"] == "cpu"
    assert _recall(s.search(q, 10), _exact(emb, ids, q, 10)) >= BOUNDS["hnsw"]


def test_dense_records_the_index_in_its_notes():
    """What run_coverage copies into metrics.json (run.retriever_notes.search), and the note."""
    pytest.importorskip("faiss")
    from harness.core.types import Chunk, Query
    from retrievers.dense import Dense

    class Enc:
        def encode(self, texts):
            return np.array([[len(t), t.count("a"), 1.0] for t in texts], np.float32)

    dense = Dense.from_encoder(Enc(), name="toy", search={"memory_gb": 1e-9})
    corpus = {f"c{i}": Chunk(f"c{i}", "a" * i + "b" * (50 - i)) for i in range(50)}
    dense.index(corpus)
    assert dense.notes["search"]["index"] == "ivfpq"
    run = dense.search([Query("q", "aaab", ())], depth=5)
    assert len(run["q"].ids) == 5
    assert any(m.startswith("search: faiss IVF-PQ on the CPU") for m in dense.messages())
