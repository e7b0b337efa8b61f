"""Time one dense cell cold (empty embedding cache) and warm (everything cached), end to end.

Runs `python -m harness retriever=R corpus=C` twice as real processes with a fresh
HARNESS_CACHE_DIR, checks both wrote identical per-query values and runs, and prints both times
and their ratio (the issue's target: warm at least 10x faster).

    python scripts/bench_cache.py                                   # minilm on general-wiki
    python scripts/bench_cache.py --retriever minilm --corpus demo
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(args: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "harness", *args], env=env, check=True, stdout=subprocess.DEVNULL
    )
    return time.perf_counter() - t


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--retriever", default="minilm")
    p.add_argument("--corpus", default="general-wiki")
    p.add_argument("--repeat", type=int, default=3, help="warm runs (the median is reported)")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, HARNESS_CACHE_DIR=f"{tmp}/cache", HF_HUB_OFFLINE="1")
        cold_dir, warm_dir = Path(tmp, "cold"), Path(tmp, "warm")
        base = [f"retriever={a.retriever}", f"corpus={a.corpus}"]
        cold = run([*base, f"results.dir={cold_dir}"], env)
        print(f"cold (encode corpus and queries, write the cache): {cold:7.2f} s", flush=True)
        warm = sorted(run([*base, f"results.dir={warm_dir}"], env) for _ in range(a.repeat))
        median = warm[len(warm) // 2]
        print(
            f"warm (all embeddings cached), median of {a.repeat}:  {median:7.2f} s   "
            f"({', '.join(f'{w:.2f}' for w in warm)})"
        )
        print(f"warm is {cold / median:.1f}x faster")
        name = f"{a.corpus}/{a.retriever}"
        same = all(
            (cold_dir / name / f).read_bytes() == (warm_dir / name / f).read_bytes()
            for f in ("per_query.csv", "run.trec")
        )
        print(f"per_query.csv and run.trec identical cold vs warm: {same}")
        if not same:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
