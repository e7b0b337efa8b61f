"""Time a run whose cell is up to date against a fresh run of the same cell: `python -m harness
corpus=C` (shown from disk) and `python -m harness corpus=C force=true` (retrieve, score,
write), each in a fresh process, alternating, medians of --runs, in a temporary folder.

    python scripts/bench_uptodate.py --corpus demo
    HARNESS_DATA_DIR=../shared/data python scripts/bench_uptodate.py --corpus general-wiki
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(args: list[str], cwd: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as a user's Python: compiled modules are cached
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    return time.perf_counter() - t


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", default="demo")
    p.add_argument("--runs", type=int, default=9)
    args = p.parse_args()
    base = [f"corpus={args.corpus}"]
    with tempfile.TemporaryDirectory() as cwd:
        timed(base, cwd)  # makes the cell, warms the caches
        fresh, shown = [], []
        for i in range(args.runs):
            for kind in ("fresh", "shown") if i % 2 else ("shown", "fresh"):
                if kind == "fresh":
                    fresh.append(timed([*base, "force=true"], cwd))
                else:
                    shown.append(timed(base, cwd))
    f, s = statistics.median(fresh), statistics.median(shown)
    print(f"{args.corpus}: fresh run {f:.2f} s, up-to-date cell {s:.2f} s (medians of {args.runs})")
    print(f"ratio up-to-date / fresh = {s / f:.2f}")


if __name__ == "__main__":
    main()
