"""Time corpus Similarity (%) by the O(M·d) formula against the brute-force M×M cosine matrix.

Target: the O(M·d) path (docs/metrics.md#corpus-diagnostics) on all 3,218 General-Wiki chunks
(MiniLM, d = 384) under 0.1 s on this 2-core machine. Both are timed in the same run (median
of --repeat), and their values are compared.

    python scripts/bench_similarity.py                  # General-Wiki, MiniLM (embeddings cached)
    python scripts/bench_similarity.py --random 20000   # random 20k x 384 matrix instead
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np


def timed(fn, repeat: int) -> tuple[float, float]:
    times, value = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), value


def brute_force(emb: np.ndarray) -> float:
    e = np.asarray(emb, dtype=np.float64)
    e = e / np.linalg.norm(e, axis=1, keepdims=True)
    sims = e @ e.T
    m = len(e)
    return float((sims.sum() - np.trace(sims)) / (m * (m - 1)))


def general_wiki_embeddings() -> np.ndarray:
    from harness.data.benchmarks import load_benchmark
    from harness.strata.build import make_embedder

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from omegaconf import OmegaConf

    from harness.core.paths import conf_dir

    cfg = OmegaConf.to_container(OmegaConf.load(conf_dir() / "corpus" / "general-wiki.yaml"))
    bench = load_benchmark(cfg)
    embedder = make_embedder("minilm", {"device": "cpu", "cache": True, "cache_dir": None})
    texts = [c.index_text for c in bench.corpus.values()]
    return np.asarray(embedder.embed(texts, "document", "minilm: general-wiki"))


def main() -> None:
    from harness.strata.diagnostics import similarity

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=7, help="timed repetitions (median reported)")
    p.add_argument(
        "--random",
        type=int,
        default=0,
        metavar="M",
        help="time a random M x 384 matrix instead of General-Wiki",
    )
    a = p.parse_args()
    if a.random:
        emb = np.random.default_rng(0).normal(size=(a.random, 384)).astype(np.float32)
        what = f"random {a.random} x 384"
    else:
        emb = general_wiki_embeddings()
        what = f"General-Wiki, MiniLM, {emb.shape[0]} x {emb.shape[1]}"
    fast_s, fast = timed(lambda: similarity(emb), a.repeat)
    slow_s, slow = timed(lambda: brute_force(emb), max(1, a.repeat // 2))
    print(f"{what} ({emb.dtype})")
    print(f"O(M·d) formula   {fast_s * 1000:8.2f} ms   similarity {100 * fast:.6f} %")
    print(f"M×M brute force  {slow_s * 1000:8.2f} ms   similarity {100 * slow:.6f} %")
    print(
        f"speed-up {slow_s / fast_s:.0f}x; |difference| {abs(fast - slow):.2e}; "
        f"target < 100 ms: {'met' if fast_s < 0.1 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
