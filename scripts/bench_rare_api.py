"""Time `harness.evaluate(bench, run)` with the RARE metrics on RedQA General-Wiki against the
RARE authors' `evaluation.metrics.evaluate_model`, in one process, on the same BM25 top 10.

The authors' code is not part of this project: point --rare-repo at a folder holding their
repository's `evaluation/metrics.py` (github.com/gkswns0531/RARE, commit 5667e3c, with an
empty `evaluation/__init__.py` beside it); it is imported from there at run time. Both get
the same ranked lists: the harness's BM25 run cut at 10, as a `harness.Run` for the harness
and as the authors' search results (objects with `chunk_id`) for theirs.

Timed per round, alternating, medians of --rounds after a warm round, garbage collected
before each timed call:

  harness  harness.evaluate(bench, run, k=10) then ev.means (Coverage@10, PerfRecall@10,
           NDCG@10, MRR@10; the default settings; the CIs are computed only when asked for)
  RARE     evaluate_model(search_results, queries, k=10)

The four means must agree to 1e-12 (exit 1 otherwise; the published MRR is group MRR over the
whole list, which at depth 10 is MRR@10).

    mkdir -p /tmp/rare/evaluation && touch /tmp/rare/evaluation/__init__.py
    git -C /path/to/RARE show 5667e3c:evaluation/metrics.py > /tmp/rare/evaluation/metrics.py
    python scripts/bench_rare_api.py --rare-repo /tmp/rare
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

PAIRS = {
    "coverage@10": "coverage@10",
    "perfrecall@10": "perfect_match@10",
    "group_ndcg@10": "ndcg@10",
    "group_mrr@10": "mrr",
}


class _Hit:
    """What the authors' evaluate_model reads from a search result."""

    __slots__ = ("chunk_id",)

    def __init__(self, chunk_id: str):
        self.chunk_id = chunk_id


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rare-repo", type=Path, required=True, help="a checkout of the RARE repo")
    p.add_argument("--rounds", type=int, default=9)
    args = p.parse_args()
    sys.path.insert(0, str(args.rare_repo))
    from evaluation.metrics import evaluate_model  # the authors' code, from their checkout

    import harness

    bench = harness.load_benchmark("general-wiki")
    run = harness.evaluate(bench, "bm25", depth=10, bootstrap=0).run
    queries = [
        {
            "gold_chunk_ids": sorted({c for g in q.groups for c in g}),
            "gold_chunk_groups": [sorted(g) for g in q.groups],
        }
        for q in bench.queries
    ]
    results = [[_Hit(c) for c in run[q.query_id].ids] for q in bench.queries]

    def ours():
        return harness.evaluate(bench, run, k=10).means.loc["overall"]

    def theirs():
        return evaluate_model(results, queries, k=10)

    times: dict[str, list[float]] = {"harness": [], "RARE": []}
    got = {}
    for round_ in range(args.rounds + 1):
        for tool, fn in (("harness", ours), ("RARE", theirs))[:: 1 if round_ % 2 else -1]:
            gc.collect()
            t = time.perf_counter()
            got[tool] = fn()
            if round_:
                times[tool].append(time.perf_counter() - t)
    for m, theirs_name in PAIRS.items():
        a, b = float(got["harness"][m]), float(got["RARE"][theirs_name])
        if abs(a - b) > 1e-12:
            raise SystemExit(f"{m}: harness {a} vs RARE {b}")
    h, r = (statistics.median(times[k]) for k in ("harness", "RARE"))
    print(f"General-Wiki, {len(bench.queries)} queries, BM25 top 10; means identical to 1e-12")
    print(f"harness.evaluate + means  {h * 1000:7.1f} ms (median of {args.rounds})")
    print(f"RARE evaluate_model       {r * 1000:7.1f} ms")
    print(f"ratio RARE / harness = {r / h:.2f}")


if __name__ == "__main__":
    main()
