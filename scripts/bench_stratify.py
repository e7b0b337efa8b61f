"""Time `python -m harness.stratify` cold (empty caches) and cached, end to end, as processes.

The issue's targets on the 2-core machine: under 10 minutes cold (extraction + entity
embeddings + graph + Leiden), under 5 seconds when the strata file exists. Also checks that
a second cold build (the embedding cache off) writes the same bytes.

    python scripts/bench_stratify.py                      # general-wiki, offline extractor, minilm
    python scripts/bench_stratify.py --corpus demo --repeat 5
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


def stratify(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    t = time.perf_counter()
    res = subprocess.run(
        [sys.executable, "-m", "harness.stratify", *args],
        env=env,
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    )
    return time.perf_counter() - t, res.stderr


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", default="general-wiki")
    p.add_argument("--repeat", type=int, default=3, help="cached runs (the median is reported)")
    a = p.parse_args()
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(
            os.environ,
            HARNESS_CACHE_DIR=f"{tmp}/cache",
            HF_HUB_OFFLINE="1",
            PYTHONPATH=str(root),
        )
        work, again = Path(tmp, "a"), Path(tmp, "b")
        work.mkdir()
        again.mkdir()
        base = [f"corpus={a.corpus}", "device=cpu"]
        cold, stages = stratify(base, env, work)
        cached = [stratify(base, env, work)[0] for _ in range(a.repeat)]
        fresh, _ = stratify([*base, "cache=false"], env, again)
        name = f"results/strata/{a.corpus}/offline_minilm_g1.json"
        same = (work / name).read_bytes() == (again / name).read_bytes()
    print(f"corpus {a.corpus}, offline extractor, minilm on CPU")
    print(f"cold build (empty caches): {cold:7.1f} s")
    for line in stages.splitlines():
        if line.strip().endswith(" s") and ":" in line:
            print(f"  {line.strip()}")
    print(f"cached (median of {a.repeat}): {statistics.median(cached):7.2f} s")
    print(f"second cold build, embedding cache off: {fresh:7.1f} s; same bytes: {same}")


if __name__ == "__main__":
    main()
