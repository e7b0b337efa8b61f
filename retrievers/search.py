"""Inner-product search over corpus embeddings, returning canonical rankings.

Backends: `faiss` (on a GPU when faiss has GPU support and a CUDA device is selected),
`torch` (exact, blocked matmul + topk on the selected device: the GPU path without
faiss-gpu), `numpy` (exact, blocked matmul). `auto` picks faiss when installed, else torch on
a CUDA device, else numpy.

Indexes (faiss): `flat` (exact), `hnsw` (graph, on the CPU), `ivf` (IVF-Flat), `ivfpq`
(IVF with product-quantised codes), or `auto`: `plan_index` picks one from the corpus size,
the dimension and the memory free on the device (or `memory_gb`), and says why:

- a GPU (faiss-gpu and a CUDA device): exact flat search over fp16 vectors when they fit;
  else IVF-PQ on the GPU when its codes fit; else HNSW on the CPU (IVF-PQ there if even the
  graph does not fit the host);
- the CPU: exact flat search when a copy of the fp32 vectors fits; else IVF-PQ.

Scores are always exact fp32 inner products. Exact search is tie-safe: a query whose
depth-th score ties with the next gets every tied chunk as a candidate, so ties at the cut
break by chunk id like everywhere else. Flat search over fp16 vectors fetches extra
candidates, rescores them in fp32 from the host copy, and proves from an error bound on fp16
scores that no other chunk can reach the cut (else it fetches more, then scores the row), so
its rankings are those of fp32 search. IVF-PQ candidates (`refine` x depth) are rescored the
same way (approximate: a chunk the index misses stays missed). Approximate indexes are built
deterministically: a training sample of evenly spaced rows, faiss's fixed k-means seeds, and
HNSW graphs inserted on one thread (a multi-threaded insert order varies run to run).
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from harness.core.errors import ConfigError, HarnessError, check_int
from harness.core.run import Ranking
from retrievers.topk import id_positions, top_of_candidates, top_of_row

BACKENDS = ("auto", "faiss", "torch", "numpy")
INDEXES = ("auto", "flat", "hnsw", "ivf", "ivfpq")
_BLOCK_CELLS = 1 << 25  # bound on a queries x corpus score block held at once
# bytes per code faiss-gpu's IVF-PQ supports (8 bits per sub-quantizer; over 48 with fp16
# lookup tables, which the GPU path always uses)
GPU_PQ_BYTES = (1, 2, 3, 4, 8, 12, 16, 20, 24, 28, 32, 40, 48, 56, 64, 96)
GPU_MAX_K = 2048  # the largest k faiss-gpu searches for
SHARE = 0.8  # of the free memory an index may take when no memory_gb is set
TRAIN_PER_CENTROID = 40  # training rows per k-means centroid (faiss asks for at least 39)
SMALL_TRAIN = 1 << 22  # training floats below which k-means runs on one thread
SEED = 1234  # faiss's k-means seed, set explicitly: it is what makes IVF builds repeatable
_GIB = 1 << 30


@dataclass(frozen=True)
class Resources:
    """What the choice of index depends on besides the vectors: measured by `probe`, made
    up by tests."""

    faiss: bool = True  # faiss importable
    faiss_gpu: bool = False  # faiss has GPU support and sees a GPU
    gpu_free: int | None = None  # bytes free on the selected GPU (None: unknown)
    host_free: int | None = None  # bytes of host memory available (None: unknown)


def probe(device: str) -> Resources:
    """The resources of this machine for a search on `device` (cpu, cuda:N)."""
    has_faiss = importlib.util.find_spec("faiss") is not None
    faiss_gpu, gpu_free = False, None
    if device.startswith("cuda"):
        if has_faiss:
            import faiss

            faiss_gpu = hasattr(faiss, "StandardGpuResources") and faiss.get_num_gpus() > 0
        try:
            import torch

            gpu_free = int(torch.cuda.mem_get_info(torch.device(device))[0])
        except Exception:  # no CUDA torch: the GPU's memory is unknown, assumed enough
            gpu_free = None
    return Resources(has_faiss, faiss_gpu, gpu_free, _host_available())


def _host_available() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


@dataclass(frozen=True)
class IndexPlan:
    """Which index a search builds, where, and why (`why` is the note line's text)."""

    backend: str  # faiss | torch | numpy
    index: str  # flat | hnsw | ivf | ivfpq
    device: str  # cpu | cuda:N
    fp16: bool  # vectors held as fp16 (flat on the GPU)
    params: Mapping[str, int] = field(default_factory=dict)
    chosen: str = "config"  # auto (plan_index chose) | config (the settings named it)
    why: str = ""

    def describe(self) -> dict[str, Any]:
        """What metrics.json records (no memory figures: they vary run to run)."""
        out = asdict(self) | {"params": dict(sorted(self.params.items()))}
        del out["why"]
        return out


def plan_index(
    n: int,
    dim: int,
    *,
    resources: Resources,
    device: str = "cpu",
    backend: str = "auto",
    index: str = "auto",
    memory_gb: float | None = None,
    fp16: bool | None = None,
    nlist: int | None = None,
    nprobe: int = 32,
    pq_m: int | None = None,
    pq_nbits: int = 8,
    refine: int = 10,
    hnsw_m: int = 32,
    ef_construction: int = 200,
    ef_search: int = 256,
) -> IndexPlan:
    """The index for `n` vectors of `dim` float32 on `device`, given the machine's
    `resources`; a pure function (tests call it with made-up memory sizes). Settings other
    than `auto` win; `memory_gb` replaces the measured free memory of the search device."""
    cuda = device.startswith("cuda")
    if backend == "auto":
        backend = "faiss" if resources.faiss else ("torch" if cuda else "numpy")
    if backend != "faiss":
        dev = device if backend == "torch" else "cpu"
        return IndexPlan(backend, "flat", dev, False, {}, "config" if index == "flat" else "auto",
                         f"{backend} exact search on {dev}")  # fmt: skip
    gpu = cuda and resources.faiss_gpu
    budget = None if memory_gb is None else int(memory_gb * _GIB)
    graph = {"M": hnsw_m, "ef_construction": ef_construction, "ef_search": ef_search}
    lists = _ivf_params(n, nlist, nprobe)

    def pq(on_gpu: bool) -> dict[str, int]:
        return {**lists, **_pq_params(n, dim, pq_m, pq_nbits, on_gpu), "refine": refine}

    def plan(kind: str, on_gpu: bool, params: dict, half: bool, why: str) -> IndexPlan:
        return IndexPlan("faiss", kind, device if on_gpu else "cpu", half, params,
                         "config" if index != "auto" else "auto", why)  # fmt: skip

    if index != "auto":  # the settings name it
        if index == "flat":
            half = gpu if fp16 is None else bool(fp16)
            return plan("flat", gpu, {}, half, f"faiss flat (exact{', fp16' * half}), as set")
        if index == "hnsw":
            where = "; faiss has no GPU HNSW" if gpu else ""
            return plan("hnsw", False, graph, False, f"faiss HNSW on the CPU, as set{where}")
        if index == "ivf":
            return plan("ivf", gpu, lists, False, "faiss IVF-Flat, as set")
        return plan("ivfpq", gpu, pq(gpu), False, "faiss IVF-PQ, as set")

    flat32 = n * dim * 4
    host_cap = budget if budget is not None and not gpu else _share(resources.host_free)
    if gpu:
        cap = budget if budget is not None else _share(resources.gpu_free)
        room = _room(cap, budget, "the GPU's free memory")
        half = True if fp16 is None else bool(fp16)
        flat = flat32 // 2 if half else flat32
        if flat <= cap:
            return plan("flat", True, {}, half,
                        f"faiss flat (exact{', fp16' * half}) on {device}: {_size(flat)} of "
                        f"vectors fit {room}")  # fmt: skip
        params = pq(True)
        need = _pq_bytes(n, dim, params)
        if need <= cap:
            return plan("ivfpq", True, params, False,
                        f"faiss IVF-PQ on {device}: {_size(flat)} of vectors exceed {room}; "
                        f"its codes take {_size(need)}")  # fmt: skip
        graph_bytes = n * (dim * 4 + hnsw_m * 2 * 4)
        if graph_bytes <= host_cap:
            return plan("hnsw", False, graph, False,
                        f"faiss HNSW on the CPU: neither {_size(flat)} of vectors nor "
                        f"{_size(need)} of IVF-PQ codes fit {room}")  # fmt: skip
        params = pq(False)
        return plan("ivfpq", False, params, False,
                    f"faiss IVF-PQ on the CPU: the vectors fit neither {room} nor, as an "
                    f"HNSW graph ({_size(graph_bytes)}), the host's memory")  # fmt: skip
    room = _room(host_cap, budget, "available memory")
    if flat32 <= host_cap:
        why = f"faiss flat (exact) on the CPU: {_size(flat32)} of vectors fit {room}"
        if cuda:
            why += "; faiss has no GPU support here"
        return plan("flat", False, {}, bool(fp16), why)
    params = pq(False)
    return plan("ivfpq", False, params, False,
                f"faiss IVF-PQ on the CPU: {_size(flat32)} of vectors exceed {room}; its "
                f"codes take {_size(_pq_bytes(n, dim, params))}")  # fmt: skip


def _share(free: int | None) -> float:
    return math.inf if free is None else free * round(SHARE * 100) // 100  # integer bytes


def _room(cap: float, budget: int | None, what: str) -> str:
    if budget is not None:
        return f"the budget of {_size(budget)} (search.memory_gb)"
    if cap == math.inf:
        return f"{what} (not measured)"
    return f"{_size(cap)} ({SHARE:.0%} of {what})"


def _size(nbytes: float) -> str:
    for unit, scale in (("GiB", _GIB), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{int(nbytes)} B"


def _ivf_params(n: int, nlist: int | None, nprobe: int) -> dict[str, int]:
    lists = nlist or max(1, min(n // 39, int(4 * math.sqrt(n))))
    return {"nlist": lists, "nprobe": min(nprobe, lists)}


def _pq_params(n: int, dim: int, m: int | None, nbits: int, gpu: bool) -> dict[str, int]:
    """Sub-quantizers: the largest code size faiss-gpu supports that divides the dimension
    with at least two dimensions each; bits: 8 on the GPU (all its default layout takes),
    fewer on the CPU when the corpus is too small to train 2^bits centroids well."""
    if m is None:
        m = max([c for c in GPU_PQ_BYTES if dim % c == 0 and dim // c >= 2] or [1])
    if not gpu:
        nbits = max(1, min(nbits, int(math.log2(max(2, n // 39)))))
    return {"m": m, "nbits": nbits}


def _pq_bytes(n: int, dim: int, params: Mapping[str, int]) -> int:
    """Codes and ids of every vector, plus the coarse and PQ centroids."""
    code = -(-params["m"] * params["nbits"] // 8)
    return n * (code + 8) + params["nlist"] * dim * 4 + (1 << params["nbits"]) * dim * 4


class FaissGpu:
    """Moves a faiss index onto a GPU (faiss-gpu only); tests replace it to run the GPU code
    paths on the CPU."""

    max_k = GPU_MAX_K

    def __init__(self):
        self._res = None

    def to_gpu(self, index, device: str, plan: IndexPlan):
        import faiss

        if self._res is None:
            self._res = faiss.StandardGpuResources()
        opts = faiss.GpuClonerOptions()
        # flat: fp16 vectors; IVF-PQ: fp16 lookup tables (needed for codes over 48 bytes)
        opts.useFloat16 = plan.fp16 or plan.index == "ivfpq"
        opts.usePrecomputed = False
        return faiss.index_cpu_to_gpu(self._res, int(device.split(":")[1]), index, opts)


class InnerProductSearch:
    """Index corpus embeddings once; return each query's canonical top `depth`."""

    def __init__(
        self,
        *,
        backend: str = "auto",
        index: str = "auto",
        hnsw_m: int = 32,
        ef_construction: int = 200,
        ef_search: int = 256,
        nlist: int | None = None,
        nprobe: int = 32,
        pq_m: int | None = None,
        pq_nbits: int = 8,
        refine: int = 10,
        memory_gb: float | None = None,
        fp16: bool | None = None,
        devices: Sequence[str] = ("cpu",),
        resources: Callable[[str], Resources] = probe,
        gpu: FaissGpu | None = None,
    ):
        if backend not in BACKENDS:
            raise ConfigError(f"unknown search backend '{backend}'; valid: {', '.join(BACKENDS)}")
        if index not in INDEXES:
            raise ConfigError(f"unknown search index '{index}'; valid: {', '.join(INDEXES)}")
        for key, value, least in (
            ("hnsw_m", hnsw_m, 2), ("ef_construction", ef_construction, 1),
            ("ef_search", ef_search, 1), ("nprobe", nprobe, 1), ("pq_nbits", pq_nbits, 1),
            ("refine", refine, 1), ("nlist", nlist, 1), ("pq_m", pq_m, 1),
        ):  # fmt: skip
            if value is None and key in ("nlist", "pq_m"):
                continue
            check_int(value, f"retriever.search.{key}", least)
        if memory_gb is not None and (
            isinstance(memory_gb, bool) or not isinstance(memory_gb, (int, float)) or memory_gb <= 0
        ):
            raise ConfigError(
                f"retriever.search.memory_gb must be a positive number of GiB or null, got "
                f"{memory_gb!r}"
            )
        if fp16 is not None and not isinstance(fp16, bool):
            raise ConfigError(f"retriever.search.fp16 must be true, false or null, got {fp16!r}")
        has_faiss = importlib.util.find_spec("faiss") is not None
        if backend == "faiss" and not has_faiss:
            raise HarnessError("search backend 'faiss' needs faiss; run: pip install faiss-cpu")
        if index not in ("auto", "flat") and backend in ("torch", "numpy"):
            raise ConfigError(
                f"search index '{index}' (approximate) needs the faiss backend; "
                "pip install faiss-cpu, or use search.index=flat"
            )
        if index not in ("auto", "flat") and not has_faiss:
            raise ConfigError(
                f"search index '{index}' (approximate) needs faiss; run: pip install faiss-cpu"
            )
        self.settings = dict(
            backend=backend, index=index, memory_gb=memory_gb, fp16=fp16, nlist=nlist,
            nprobe=nprobe, pq_m=pq_m, pq_nbits=pq_nbits, refine=refine, hnsw_m=hnsw_m,
            ef_construction=ef_construction, ef_search=ef_search,
        )  # fmt: skip
        self.device = devices[0]
        self._resources = resources
        self._gpu = gpu
        self.plan: IndexPlan | None = None
        self._index = None
        self._emb: np.ndarray | None = None

    def describe(self) -> dict[str, Any]:
        """The index built (after build()), as metrics.json records it."""
        if self.plan is None:
            return {k: self.settings[k] for k in ("backend", "index")} | {"device": self.device}
        return self.plan.describe()

    def build(self, emb: np.ndarray, ids: Sequence[str]) -> None:
        self._emb = np.ascontiguousarray(emb, dtype=np.float32)
        self._ids = np.asarray(ids, dtype=object)
        self._id_pos = id_positions(ids)
        n, dim = self._emb.shape
        plan = plan_index(n, dim, resources=self._resources(self.device), device=self.device,
                          **self.settings)  # fmt: skip
        if plan.fp16 and np.abs(self._emb).max(initial=0.0) > 6e4:  # beyond fp16's range
            why = plan.why + "; fp32: values exceed fp16's range"
            plan = replace(plan, fp16=False, why=why)
        if plan.index == "ivfpq" and dim % plan.params["m"]:
            raise ConfigError(
                f"retriever.search.pq_m={plan.params['m']} does not divide the embedding "
                f"dimension {dim}; pick a divisor of {dim} or pq_m=null"
            )
        if plan.index == "ivfpq" and plan.device != "cpu" and plan.params["m"] not in GPU_PQ_BYTES:
            raise ConfigError(
                f"retriever.search.pq_m={plan.params['m']}: faiss-gpu's IVF-PQ takes "
                f"{', '.join(map(str, GPU_PQ_BYTES))}; pick one, or pq_m=null"
            )
        self.plan = plan
        if plan.backend == "faiss":
            self._index = self._faiss_index(self._emb, plan)
        elif plan.backend == "torch":
            import torch

            self._index = torch.from_numpy(self._emb).to(plan.device)
        if plan.fp16:  # the error bound of fp16 scores needs the largest chunk norm
            self._max_norm = float(np.sqrt(np.einsum("ij,ij->i", self._emb, self._emb).max()))

    def _faiss_index(self, emb: np.ndarray, plan: IndexPlan):
        import faiss

        n, d = emb.shape
        p, ip = plan.params, faiss.METRIC_INNER_PRODUCT
        on_gpu = plan.device != "cpu"
        if plan.index == "flat":
            if plan.fp16 and not on_gpu:  # fp16 storage on the CPU (tests, or fp16=true)
                index = faiss.IndexScalarQuantizer(d, faiss.ScalarQuantizer.QT_fp16, ip)
            else:
                index = faiss.IndexFlatIP(d)
        elif plan.index == "hnsw":
            index = faiss.IndexHNSWFlat(d, p["M"], ip)
            index.hnsw.efConstruction = p["ef_construction"]
            index.hnsw.efSearch = p["ef_search"]
        elif plan.index == "ivf":
            index = faiss.IndexIVFFlat(faiss.IndexFlatIP(d), d, p["nlist"], ip)
        else:
            index = faiss.IndexIVFPQ(faiss.IndexFlatIP(d), d, p["nlist"], p["m"], p["nbits"], ip)
            index.pq.cp.seed = SEED
        if plan.index in ("ivf", "ivfpq"):
            index.cp.seed = SEED
            index.nprobe = p["nprobe"]
        if on_gpu:
            if self._gpu is None:
                self._gpu = FaissGpu()
            index = self._gpu.to_gpu(index, plan.device, plan)
        if not index.is_trained:
            sample = _training_rows(emb, p)
            # a small k-means is faster on one thread: OpenMP's barriers dominate it, and
            # on a busy machine they spin for seconds
            with _threads(1 if sample.size < SMALL_TRAIN else 0):
                index.train(sample)
        # one thread for HNSW: the graph depends on the insertion order
        with _threads(1 if plan.index == "hnsw" else 0):
            index.add(emb)
        return index

    def search(self, queries: np.ndarray, depth: int) -> list[Ranking]:
        """Canonical top `depth` for each query embedding (rows of `queries`)."""
        if self._emb is None or self.plan is None:
            raise RuntimeError("build() must be called before search()")
        q = np.ascontiguousarray(queries, dtype=np.float32)
        if q.shape[1] != self._emb.shape[1]:
            raise HarnessError(
                f"query embeddings have dimension {q.shape[1]} but the corpus's have "
                f"{self._emb.shape[1]}; both must come from the same model"
            )
        depth = min(depth, len(self._ids))
        if self.plan.backend == "numpy":
            return self._numpy(q, depth)
        if self.plan.backend == "torch":
            return self._torch(q, depth)
        if self.plan.index == "flat" and self.plan.fp16:
            return self._rescored(q, depth, 2 * depth + 16, exact=True)
        if self.plan.index == "ivfpq":
            return self._rescored(q, depth, depth * self.plan.params["refine"], exact=False)
        return self._faiss(q, depth)

    def _max_k(self) -> int:
        on_gpu = self.plan is not None and self.plan.device != "cpu"
        limit = getattr(self._gpu, "max_k", GPU_MAX_K) if on_gpu else len(self._ids)
        return min(len(self._ids), limit)

    def _numpy(self, q: np.ndarray, depth: int) -> list[Ranking]:
        out = []
        block = max(1, _BLOCK_CELLS // len(self._ids))
        for s in range(0, len(q), block):
            for row in q[s : s + block] @ self._emb.T:
                out.append(top_of_row(row, depth, self._ids, self._id_pos))
        return out

    def _torch(self, q: np.ndarray, depth: int) -> list[Ranking]:
        import torch

        k = min(depth + 1, len(self._ids))
        out = []
        block = max(1, _BLOCK_CELLS // len(self._ids))
        for s in range(0, len(q), block):
            scores = torch.from_numpy(q[s : s + block]).to(self.plan.device) @ self._index.T
            val, idx = torch.topk(scores, k, dim=1)
            val, idx = val.cpu().numpy(), idx.cpu().numpy()
            for r in range(len(val)):
                if k > depth and val[r, depth] == val[r, depth - 1]:  # a tie crosses the cut
                    row = scores[r].cpu().numpy()
                    out.append(top_of_row(row, depth, self._ids, self._id_pos))
                else:
                    out.append(top_of_candidates(idx[r], val[r], depth, self._ids, self._id_pos))
        return out

    def _faiss(self, q: np.ndarray, depth: int) -> list[Ranking]:
        exact = self.plan.index == "flat"
        k = min(depth + 1, self._max_k()) if exact else depth
        if exact and k <= depth < len(self._ids):  # deeper than faiss-gpu searches
            return self._numpy(q, depth)
        dist, idx = self._index.search(q, k)
        out = []
        for r in range(len(q)):
            keep = idx[r] >= 0  # approximate indexes pad with -1
            cand, scores = idx[r][keep], dist[r][keep]
            if exact and k > depth and scores[depth] == scores[depth - 1]:
                # every chunk scoring at least the tied cut: a range search just below it
                try:
                    lims, d2, i2 = self._index.range_search(
                        q[r : r + 1], float(np.nextafter(scores[depth - 1], -np.inf))
                    )
                except RuntimeError:  # GPU indexes have no range search: score the row
                    row = self._emb @ q[r]
                    out.append(top_of_row(row, depth, self._ids, self._id_pos))
                    continue
                cand, scores = i2[lims[0] : lims[1]], d2[lims[0] : lims[1]]
            out.append(top_of_candidates(cand, scores, depth, self._ids, self._id_pos))
        return out

    def _rescored(self, q: np.ndarray, depth: int, k: int, exact: bool) -> list[Ranking]:
        """`k` candidates per query, scored in fp32 from the host copy: IVF-PQ's as they are;
        fp16 flat search's (`exact`) kept only when the fp16 error bound proves no other chunk
        reaches the cut, else more candidates, then the whole row."""
        n, limit = len(self._ids), self._max_k()
        out: list[Ranking | None] = [None] * len(q)
        todo = np.arange(len(q))
        k = min(limit, k)
        while len(todo):
            dist, idx = self._index.search(q[todo], k)
            left = []
            for j, r in enumerate(todo):
                cand = idx[j][idx[j] >= 0]
                scores = self._emb[cand] @ q[r]
                if (
                    not exact
                    or len(cand) == n
                    or (
                        len(cand) > depth
                        and np.partition(scores, len(scores) - depth)[len(scores) - depth]
                        > dist[j][len(cand) - 1] + self._fp16_error(q[r])
                    )
                ):
                    out[r] = top_of_candidates(cand, scores, depth, self._ids, self._id_pos)
                else:
                    left.append(r)
            todo = np.asarray(left, dtype=np.int64)
            if k >= limit:
                break
            k = min(limit, 8 * k)
        for r in todo:  # the bound could not be met within faiss's k: the exact row
            out[r] = top_of_row(self._emb @ q[r], depth, self._ids, self._id_pos)
        return out  # type: ignore[return-value]

    def _fp16_error(self, query: np.ndarray) -> float:
        """Twice a bound on |fp16 score - fp32 score| for any chunk: rounding both vectors to
        fp16 (relative 2^-11 each, absolute 2^-25 below fp16's normal range) and fp32
        accumulation over the dimension."""
        dim = len(query)
        qn = float(np.linalg.norm(query))
        rel = 2.0**-10 + 2.0**-20 + dim * 2.0**-23
        absolute = 2.0**-24 * math.sqrt(dim) * (qn + self._max_norm)
        return 2 * (rel * qn * self._max_norm + absolute)


@contextlib.contextmanager
def _threads(n: int):
    """faiss's OpenMP threads set to `n` for a block (0: leave them as they are)."""
    import faiss

    before = faiss.omp_get_max_threads()
    if n:
        faiss.omp_set_num_threads(n)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


def _training_rows(emb: np.ndarray, params: Mapping[str, int]) -> np.ndarray:
    """Evenly spaced rows, enough for the coarse and PQ k-means (a deterministic sample)."""
    centroids = max(params.get("nlist", 1), 1 << params.get("nbits", 0))
    want = min(len(emb), TRAIN_PER_CENTROID * centroids)
    rows = np.linspace(0, len(emb) - 1, want).round().astype(np.int64)
    return np.ascontiguousarray(emb[np.unique(rows)])
