"""Wall time of the default job (`python -m harness force=true`, BM25 on demo) for this checkout
and, with --reference, another checkout of the project, run alternately on the same machine.

    python scripts/bench_cli.py --runs 7 --reference /path/to/other/checkout
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


def once(checkout: Path, results: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as a user's Python: compiled modules are cached
    args = [sys.executable, "-m", "harness", "force=true", f"results.dir={results}"]
    start = time.perf_counter()
    subprocess.run(args, cwd=checkout, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--runs", type=int, default=5, help="runs per checkout (5)")
    p.add_argument("--reference", type=Path, help="another checkout to time alternately")
    args = p.parse_args()
    checkouts = {
        "this": ROOT,
        **({"reference": args.reference.resolve()} if args.reference else {}),
    }
    times: dict[str, list[float]] = {k: [] for k in checkouts}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.runs):
            for key, path in checkouts.items():
                times[key].append(once(path, Path(tmp) / key))
    for key, values in times.items():
        print(f"{key:>9}: median {statistics.median(values):.3f} s over {len(values)} runs")
    if args.reference:
        ratio = statistics.median(times["this"]) / statistics.median(times["reference"])
        print(f"this / reference: {ratio:.2f}")


if __name__ == "__main__":
    main()
