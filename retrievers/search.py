"""Inner-product search over corpus embeddings, returning canonical rankings.

Backends: `faiss` (exact IndexFlatIP, or approximate HNSW / IVF; on a GPU when faiss-gpu is
installed and a CUDA device is selected), `torch` (exact, blocked matmul + topk on the
selected device: the GPU path when faiss-gpu is absent), `numpy` (exact, blocked matmul).
`auto` picks faiss when installed, else torch on a CUDA device, else numpy.

Exact search is tie-safe: a query whose depth-th score is tied with the next one gets every
tied chunk as a candidate, so ties at the cut break by chunk id like everywhere else.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

import numpy as np

from harness.core.errors import ConfigError, HarnessError
from harness.core.types import Ranking
from retrievers.topk import id_positions, top_of_candidates, top_of_row

BACKENDS = ("auto", "faiss", "torch", "numpy")
INDEXES = ("flat", "hnsw", "ivf")
_BLOCK_CELLS = 1 << 25  # bound on a queries x corpus score block held at once


class InnerProductSearch:
    """Index corpus embeddings once; return each query's canonical top `depth`."""

    def __init__(
        self,
        *,
        backend: str = "auto",
        index: str = "flat",
        hnsw_m: int = 32,
        ef_construction: int = 200,
        ef_search: int = 256,
        nlist: int | None = None,
        nprobe: int = 32,
        devices: Sequence[str] = ("cpu",),
    ):
        if backend not in BACKENDS:
            raise ConfigError(f"unknown search backend '{backend}'; valid: {', '.join(BACKENDS)}")
        if index not in INDEXES:
            raise ConfigError(f"unknown search index '{index}'; valid: {', '.join(INDEXES)}")
        has_faiss = importlib.util.find_spec("faiss") is not None
        gpu = devices[0].startswith("cuda")
        if backend == "auto":
            backend = "faiss" if has_faiss else ("torch" if gpu else "numpy")
        if backend == "faiss" and not has_faiss:
            raise HarnessError("search backend 'faiss' needs faiss; run: pip install faiss-cpu")
        if index != "flat" and backend != "faiss":
            raise ConfigError(
                f"search index '{index}' (approximate) needs the faiss backend; "
                "pip install faiss-cpu, or use search.index=flat"
            )
        self.backend, self.index_kind = backend, index
        self.hnsw_m, self.ef_construction, self.ef_search = hnsw_m, ef_construction, ef_search
        self.nlist, self.nprobe = nlist, nprobe
        self.device = devices[0]
        self._index = None
        self._emb: np.ndarray | None = None

    def describe(self) -> dict:
        return {"backend": self.backend, "index": self.index_kind, "device": self.device}

    def build(self, emb: np.ndarray, ids: Sequence[str]) -> None:
        self._emb = np.ascontiguousarray(emb, dtype=np.float32)
        self._ids = np.asarray(ids, dtype=object)
        self._id_pos = id_positions(ids)
        if self.backend == "faiss":
            self._index = self._faiss_index(self._emb)
        elif self.backend == "torch":
            import torch

            self._index = torch.from_numpy(self._emb).to(self.device)

    def _faiss_index(self, emb: np.ndarray):
        import faiss

        n, d = emb.shape
        if self.index_kind == "flat":
            index = faiss.IndexFlatIP(d)
        elif self.index_kind == "hnsw":
            index = faiss.IndexHNSWFlat(d, self.hnsw_m, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = self.ef_construction
            index.hnsw.efSearch = self.ef_search
        else:
            nlist = self.nlist or max(1, min(n // 39, int(4 * np.sqrt(n))))
            index = faiss.IndexIVFFlat(faiss.IndexFlatIP(d), d, nlist, faiss.METRIC_INNER_PRODUCT)
            index.train(emb)
            index.nprobe = min(self.nprobe, nlist)
        if self.device.startswith("cuda") and hasattr(faiss, "StandardGpuResources"):
            self._gpu_res = faiss.StandardGpuResources()
            index = faiss.index_cpu_to_gpu(self._gpu_res, int(self.device.split(":")[1]), index)
        index.add(emb)
        return index

    def search(self, queries: np.ndarray, depth: int) -> list[Ranking]:
        """Canonical top `depth` for each query embedding (rows of `queries`)."""
        if self._emb is None:
            raise RuntimeError("build() must be called before search()")
        q = np.ascontiguousarray(queries, dtype=np.float32)
        if q.shape[1] != self._emb.shape[1]:
            raise HarnessError(
                f"query embeddings have dimension {q.shape[1]} but the corpus's have "
                f"{self._emb.shape[1]}; both must come from the same model"
            )
        depth = min(depth, len(self._ids))
        if self.backend == "numpy":
            return self._numpy(q, depth)
        if self.backend == "torch":
            return self._torch(q, depth)
        return self._faiss(q, depth)

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
            scores = torch.from_numpy(q[s : s + block]).to(self.device) @ self._index.T
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
        exact = self.index_kind == "flat"
        k = min(depth + 1, len(self._ids)) if exact else depth
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
