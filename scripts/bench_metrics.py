"""Time the standard metrics: harness vs pytrec_eval vs ranx on the same synthetic run.

All standard metrics at K in {1,5,10,100} (nDCG, Recall, P, AP, RR, Success) plus MAP and
R-Precision, for Q queries x 100 retrieved chunks with about 5 graded relevant each. Each
tool starts from the same Python dicts ({qid: {docid: grade}} and {qid: {docid: score}})
and ends with per-query values; the steps are timed apart so the report shows where the
time goes. The metric step of the harness and of pytrec_eval is the median of 3 runs. ranx
and the harness compile with numba on first use: their first calls are timed apart.
Also checks that the three agree (to 1e-6) on the metrics they share.

    python scripts/bench_metrics.py                    # 100,000 queries (needs ranx)
    python scripts/bench_metrics.py --queries 20000 --skip-ranx
"""

from __future__ import annotations

import argparse
import gc
import random
import time

import numpy as np

KS = (1, 5, 10, 100)
DEPTH = 100


def synthetic(n_queries: int, seed: int) -> tuple[dict, dict, dict]:
    """qrels with 1-9 graded relevant chunks (mean 5), runs of 100 scored chunks where some
    relevant chunks are retrieved and scores have ties, and the corpus vocabulary."""
    rng = random.Random(seed)
    pool = [f"doc{i:07d}" for i in range(2_000_000)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        qid = f"q{q:06d}"
        rel = {pool[rng.randrange(len(pool))]: rng.randint(1, 3) for _ in range(rng.randint(1, 9))}
        qrels[qid] = rel
        docs = [d for d in rel if rng.random() < 0.6]
        while len(docs) < DEPTH:
            docs.append(pool[rng.randrange(len(pool))])
        # scores rounded to 3 decimals: ties between chunks are common, as in real runs
        run[qid] = {d: round(rng.random(), 3) for d in docs[:DEPTH]}
    return qrels, run, {d: i for i, d in enumerate(pool)}


def timed(label: str, fn, report: dict, repeat: int = 1):
    """Run fn `repeat` times; report the median time (all times printed)."""
    times = []
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    report[label] = float(np.median(times))
    each = "" if repeat == 1 else "   (" + ", ".join(f"{x:.2f}" for x in times) + ")"
    print(f"  {label:<34} {report[label]:8.2f} s{each}", flush=True)
    return out


def bench_harness(qrels, run, vocab, report):
    from harness.core.run import Run
    from metrics import standard

    wanted = [
        (f, k) for k in KS for f in ("ndcg", "recall", "P", "map", "recip_rank", "success")
    ] + [("map", None), ("Rprec", None)]
    qids = list(qrels)
    r = timed(
        "harness: canonical run (sort, codes)",
        lambda: Run.from_scores("x", run, DEPTH, vocab),
        report,
    )
    judged = timed(
        "harness: encode qrels",
        lambda: standard.prepare([qrels[q] for q in qids], vocab),
        report,
    )
    timed(  # numba: compiles on a first-ever call, else loads its on-disk cache
        "harness: first call (numba load)",
        lambda: standard.evaluate(
            [r[q] for q in qids[:10]],
            standard.prepare([qrels[q] for q in qids[:10]], vocab),
            wanted,
        ),
        report,
    )
    values = timed(
        "harness: all metrics",
        lambda: standard.evaluate([r[q] for q in qids], judged, wanted),
        report,
        repeat=3,
    )
    report["harness total"] = (
        report["harness: canonical run (sort, codes)"]
        + report["harness: encode qrels"]
        + report["harness: all metrics"]
    )
    return {(f, k): dict(zip(qids, v.tolist())) for (f, k), v in values.items()}


def bench_pytrec_eval(qrels, run, report):
    import pytrec_eval

    cuts = ",".join(map(str, KS))
    measures = {f"{m}.{cuts}" for m in ("ndcg_cut", "recall", "P", "map_cut", "success")}
    measures |= {"recip_rank", "map", "Rprec"}
    ev = timed(
        "pytrec_eval: build evaluator",
        lambda: pytrec_eval.RelevanceEvaluator(qrels, measures),
        report,
    )
    out = timed("pytrec_eval: evaluate", lambda: ev.evaluate(run), report, repeat=3)
    report["pytrec_eval total"] = (
        report["pytrec_eval: build evaluator"] + report["pytrec_eval: evaluate"]
    )
    return out


def bench_ranx(qrels, run, report):
    import ranx

    metrics = [
        f"{m}@{k}" for k in KS for m in ("ndcg", "recall", "precision", "map", "mrr", "hit_rate")
    ] + ["map", "r-precision"]
    q = timed("ranx: Qrels from dict", lambda: ranx.Qrels(qrels), report)
    r = timed("ranx: Run from dict", lambda: ranx.Run(run), report)
    timed("ranx: evaluate, first call (JIT)", lambda: ranx.evaluate(q, r, metrics), report)
    r2 = ranx.Run(run)  # ranx caches scores on the Run; a fresh one measures the work again
    timed("ranx: evaluate, warm", lambda: ranx.evaluate(q, r2, metrics), report)
    report["ranx total (warm)"] = (
        report["ranx: Qrels from dict"]
        + report["ranx: Run from dict"]
        + report["ranx: evaluate, warm"]
    )
    return r2


def check_agreement(ours, ref) -> int:
    """Compare per-query values with pytrec_eval; returns the number of values checked."""
    names = {("ndcg", k): f"ndcg_cut_{k}" for k in KS}
    names |= {("map", k): f"map_cut_{k}" for k in KS}
    names |= {(m, k): f"{m}_{k}" for m in ("recall", "P", "success") for k in KS}
    names |= {("map", None): "map", ("Rprec", None): "Rprec", ("recip_rank", 100): "recip_rank"}
    n = 0
    for key, trec in names.items():
        for qid, v in ours[key].items():
            want = ref[qid][trec]
            if abs(v - want) > 1e-6:
                raise SystemExit(f"disagreement on {qid} {trec}: harness {v}, pytrec_eval {want}")
            n += 1
    return n


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--queries", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-ranx", action="store_true")
    args = p.parse_args()
    print(f"{args.queries:,} queries x {DEPTH} retrieved, K = {KS}", flush=True)
    report: dict[str, float] = {}
    qrels, run, vocab = timed("generate data", lambda: synthetic(args.queries, args.seed), report)
    n_rel = np.mean([len(v) for v in qrels.values()])
    print(f"  mean relevant per query: {n_rel:.2f}")
    ours = bench_harness(qrels, run, vocab, report)
    ref = bench_pytrec_eval(qrels, run, report)
    print(f"  agreement with pytrec_eval: {check_agreement(ours, ref):,} values within 1e-6")
    del ref
    if not args.skip_ranx:
        bench_ranx(qrels, run, report)
    h, m = report["harness total"], report["harness: all metrics"]
    pt_total, pt_eval = report["pytrec_eval total"], report["pytrec_eval: evaluate"]
    print("\nmetric step (qrels prepared; the harness from a canonical run, pytrec_eval from")
    print("its run dict, which is its only input; ranx from its Run, compiled):")
    print(f"  harness      {m:8.2f} s")
    print(f"  pytrec_eval  {pt_eval:8.2f} s   harness is {pt_eval / m:.1f}x faster")
    if "ranx total (warm)" in report:
        rx = report["ranx: evaluate, warm"]
        print(f"  ranx         {rx:8.2f} s   harness takes {m / rx:.2f}x ranx's time")
    print("end to end, from the same Python dicts:")
    print(f"  harness      {h:8.2f} s")
    print(f"  pytrec_eval  {pt_total:8.2f} s   harness is {pt_total / h:.1f}x faster")
    if "ranx total (warm)" in report:
        rx = report["ranx total (warm)"]
        print(f"  ranx         {rx:8.2f} s   harness is {rx / h:.1f}x faster (ranx warm)")


if __name__ == "__main__":
    main()
