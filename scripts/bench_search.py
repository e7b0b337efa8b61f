"""Search backends side by side on one machine: build time, query time, R@depth against
exact search, and repeatability, for the indexes `retrievers.search` builds (exact flat,
flat over fp16 vectors with its exactness proof, HNSW, IVF-PQ), measured in one run.

Data: `--docs` normalised vectors of `--dim` around 1,000 topics (embeddings cluster), and
`--queries` queries near random chunks; exact top-`--depth` lists from numpy are the
reference. Each approximate index is built twice and its lists compared (results files must
be byte-identical from run to run).

    python scripts/bench_search.py                                # 100k x 384, 1,000 queries
    python scripts/bench_search.py --docs 1000000 --dim 768 --indexes flat,ivfpq
    python scripts/bench_search.py --tiny                          # smoke run
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from retrievers.search import InnerProductSearch  # noqa: E402

INDEXES = {
    "numpy": dict(backend="numpy"),
    "flat": dict(backend="faiss", index="flat"),
    "flat-fp16": dict(backend="faiss", index="flat", fp16=True),
    "hnsw": dict(backend="faiss", index="hnsw"),
    "ivfpq": dict(backend="faiss", index="ivfpq"),
}


def data(docs: int, dim: int, queries: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(1000, dim)).astype(np.float32)
    emb = centres[rng.integers(0, 1000, docs)]
    emb += 0.8 * rng.standard_normal(size=(docs, dim), dtype=np.float32)
    q = emb[rng.integers(0, docs, queries)] + 0.5 * rng.standard_normal(
        size=(queries, dim), dtype=np.float32
    )
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return emb, q, [f"c{i:08d}" for i in range(docs)]


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--docs", type=int, default=100_000)
    p.add_argument("--dim", type=int, default=384)
    p.add_argument("--queries", type=int, default=1000)
    p.add_argument("--depth", type=int, default=10)
    p.add_argument(
        "--indexes", default=",".join(INDEXES), help="comma-separated: " + ", ".join(INDEXES)
    )
    p.add_argument("--repeat", type=int, default=2, help="builds per index (lists compared)")
    p.add_argument("--tiny", action="store_true", help="5,000 x 32, 100 queries")
    a = p.parse_args()
    if a.tiny:
        a.docs, a.dim, a.queries = 5000, 32, 100
    emb, q, ids = data(a.docs, a.dim, a.queries)
    print(f"{a.docs:,} docs x {a.dim}-d, {a.queries:,} queries, top {a.depth}; "
          f"{os.cpu_count()} CPUs; RSS {rss_mib():.0f} MiB")  # fmt: skip
    ref = InnerProductSearch(backend="numpy")
    ref.build(emb, ids)
    t = time.perf_counter()
    want = [set(r.ids) for r in ref.search(q, a.depth)]
    exact_s = time.perf_counter() - t
    print(f"{'index':10} {'build s':>8} {'search s':>9} {'q/s':>8} {'vs numpy':>9} "
          f"{'recall':>7} {'repeat':>7}  params")  # fmt: skip
    for name in a.indexes.split(","):
        lists, builds, searches = [], [], []
        for _ in range(a.repeat):
            s = InnerProductSearch(**INDEXES[name])
            t = time.perf_counter()
            s.build(emb, ids)
            builds.append(time.perf_counter() - t)
            t = time.perf_counter()
            got = s.search(q, a.depth)
            searches.append(time.perf_counter() - t)
            lists.append([(r.ids, r.scores) for r in got])
        recall = np.mean([len(set(g[0]) & w) / len(w) for g, w in zip(lists[0], want)])
        same = all(x == lists[0] for x in lists[1:])
        search_s = min(searches)
        print(f"{name:10} {min(builds):8.2f} {search_s:9.3f} {a.queries / search_s:8.0f} "
              f"{exact_s / search_s:8.2f}x {recall:7.4f} {'same' if same else 'DIFFER':>7}  "
              f"{dict(s.plan.params)}")  # fmt: skip
    print(f"(numpy exact reference: {exact_s:.3f} s; 'vs numpy' = its time / this index's; "
          f"peak RSS {rss_mib():.0f} MiB)")  # fmt: skip


if __name__ == "__main__":
    main()
