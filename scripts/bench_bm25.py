"""Time this harness's BM25 (index + top-100 retrieval) against rank_bm25's per-query loop.

Both run in the same process on the same inputs (RedQA General-Wiki: 3,218 chunks,
688 queries), so the ratio is what to read on a shared, noisy machine. Also checks
that both give identical canonical top-10 lists.

    HARNESS_DATA_DIR=/path/to/data python scripts/bench_bm25.py [--repeat 3]   # or --file PATH

where /path/to/data holds redqa/general-wiki.json
(docs/benchmarks.md#bm25-index--top-100-retrieval-on-redqa-general-wiki). Corpora of 100K
to 8.8M chunks, against bm25s as well: scripts/bench_bm25_scale.py.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.core.run import canonical  # noqa: E402
from harness.data.benchmarks import load_redqa  # noqa: E402
from retrievers.bm25 import BM25  # noqa: E402


def ours(bench, depth: int):
    bm25 = BM25()
    bm25.index(bench.corpus)
    return bm25.search(bench.queries, depth=depth)


def reference(bench, depth: int):
    """rank_bm25 as RARE used it: get_scores per query, then argsort for the top `depth`."""
    from rank_bm25 import BM25Okapi

    ids = list(bench.corpus)
    ref = BM25Okapi([bench.corpus[c].text.split() for c in ids])
    out = {}
    for q in bench.queries:
        scores = ref.get_scores(q.text.split())
        top = np.argsort(scores)[::-1][:depth]
        out[q.query_id] = (scores, top)
    return ids, out


def reference_canonical(ids, out, depth: int):
    """The reference scores in canonical order (ties by id descending), outside the timing."""
    return {qid: canonical(zip(ids, scores.tolist()), depth) for qid, (scores, _) in out.items()}


def best_of(fn, repeat: int) -> tuple[float, list[float], object]:
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), times, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(os.environ.get("HARNESS_DATA_DIR", ROOT.parent / "shared" / "data"))
    parser.add_argument(
        "--file",
        type=Path,
        default=default / "redqa" / "general-wiki.json",
        help="RedQA JSON file (default: $HARNESS_DATA_DIR/redqa/general-wiki.json)",
    )
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; the best is kept")
    args = parser.parse_args()

    bench = load_redqa(args.file, name="general-wiki")
    t_ours, all_ours, run = best_of(lambda: ours(bench, args.depth), args.repeat)
    t_ref, all_ref, (ids, raw) = best_of(
        lambda: reference(bench, args.depth), max(1, args.repeat - 2)
    )
    ref = reference_canonical(ids, raw, args.depth)
    diff10 = sum(run[q.query_id].ids[:10] != ref[q.query_id].ids[:10] for q in bench.queries)
    diff_all = sum(run[q.query_id].ids != ref[q.query_id].ids for q in bench.queries)
    max_score_gap = max(
        float(np.max(np.abs(np.subtract(run[q.query_id].scores, ref[q.query_id].scores))))
        for q in bench.queries
        if run[q.query_id].ids == ref[q.query_id].ids
    )
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cpus, python {platform.python_version()}"
    )
    print(
        f"data: {args.file} ({len(bench.corpus)} chunks, {len(bench.queries)} queries), "
        f"top-{args.depth}"
    )
    print("| implementation | index + retrieval (best) | all runs |")
    print("|---|---|---|")
    print(
        f"| harness BM25 (postings; numpy at this size) | {t_ours:.3f} s | "
        f"{', '.join(f'{t:.3f}' for t in all_ours)} |"
    )
    print(
        f"| rank_bm25 BM25Okapi, get_scores + argsort per query | {t_ref:.3f} s | "
        f"{', '.join(f'{t:.3f}' for t in all_ref)} |"
    )
    print(
        f"speed-up: {t_ref / t_ours:.1f}x (median-based: "
        f"{statistics.median(all_ref) / statistics.median(all_ours):.1f}x)"
    )
    print(
        f"queries whose top-10 differs: {diff10}; whose top-{args.depth} differs: {diff_all}; "
        f"max |score difference| on identical lists: {max_score_gap:.2e}"
    )
    return 0 if diff10 == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
