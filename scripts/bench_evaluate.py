"""Time the notebook path: `harness.evaluate(bench, harness.Run.from_trec(path), metrics=...)`
against pytrec_eval (`parse_run` + `RelevanceEvaluator(...).evaluate`), in one process.

Synthetic and seeded: a BEIR folder (corpus.jsonl of POOL one-word chunks, queries.jsonl,
qrels/test.tsv with 1-9 judged chunks a query, grades 1-3, about 60 % of them retrieved)
and a TREC run of Q queries x D chunks drawn from the corpus (scores with 4 decimals, ties
in file order). The benchmark and the qrels dict are loaded before the clock starts (a user
loads them once); what is timed is what a user runs per run file:

  harness      ev = harness.evaluate(bench, harness.Run.from_trec(path), metrics=METRICS)
               with default settings, then ev.values (per-query values) and ev.summary
               (the means; its CIs are computed only when asked for)
  pytrec_eval  pytrec_eval.parse_run(open(path)) + RelevanceEvaluator(qrels, measures)
               .evaluate(run), then the means

A first round of both warms the caches (page cache, numba's machine code, and what the
benchmark object keeps: its vocab, its key table, its judgments encoded) and is not counted;
garbage is collected before each timed call (outside the clock); then the tools alternate for
--rounds rounds and the medians are reported with the ratio pytrec_eval / harness, and last
the time of a first run on a freshly loaded benchmark. The per-query values must agree to
1e-9 (exit 1 otherwise).

    python scripts/bench_evaluate.py --queries 20000 --depth 100
    python scripts/bench_evaluate.py --queries 10000 --depth 1000
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np

POOL = 1_000_000
METRICS = ["nDCG@10", "R@100", "AP"]
TREC = {"nDCG@10": "ndcg_cut_10", "R@100": "recall_100", "AP": "map"}


def generate(folder: Path, queries: int, depth: int, seed: int) -> tuple[Path, Path]:
    """(BEIR folder, run file) for these settings, made once and then reused."""
    bench = folder / f"beir-{queries}-s{seed}"
    run_path = folder / f"run-{queries}x{depth}-s{seed}.trec"
    if (bench / "qrels" / "test.tsv").is_file() and run_path.is_file():
        return bench, run_path
    rng = np.random.default_rng(seed)
    (bench / "qrels").mkdir(parents=True, exist_ok=True)
    with open(bench / "corpus.jsonl", "w") as f:
        f.writelines(f'{{"_id": "d{i}", "text": "w{i % 97}"}}\n' for i in range(POOL))
    with open(bench / "queries.jsonl", "w") as f:
        f.writelines(f'{{"_id": "q{i}", "text": "query {i}"}}\n' for i in range(queries))
    qrels_lines = ["query-id\tcorpus-id\tscore\n"]
    run_lines = []
    for q in range(queries):
        docs = rng.choice(POOL, size=depth, replace=False)
        scores = np.round(np.sort(rng.random(depth))[::-1] * 20, 4)
        n = int(rng.integers(1, 10))
        picked = np.where(
            rng.random(n) < 0.6, docs[rng.integers(0, depth, n)], rng.integers(0, POOL, n)
        )
        for d, g in dict(zip(picked.tolist(), rng.integers(1, 4, n).tolist())).items():
            qrels_lines.append(f"q{q}\td{d}\t{g}\n")
        run_lines.extend(
            f"q{q} Q0 d{d} {r} {s:.4f} bm25\n"
            for r, (d, s) in enumerate(zip(docs.tolist(), scores.tolist()), 1)
        )
        if len(run_lines) > 1_000_000:
            with open(run_path.with_suffix(".partial"), "a") as f:
                f.writelines(run_lines)
            run_lines = []
    with open(run_path.with_suffix(".partial"), "a") as f:
        f.writelines(run_lines)
    (bench / "qrels" / "test.tsv").write_text("".join(qrels_lines))
    run_path.with_suffix(".partial").replace(run_path)
    return bench, run_path


def qrels_of(bench: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    with open(bench / "qrels" / "test.tsv") as f:
        next(f)
        for line in f:
            q, d, g = line.split("\t")
            out.setdefault(q, {})[d] = int(g)
    return out


def run_harness(bench, run_path: Path):
    import harness

    ev = harness.evaluate(bench, harness.Run.from_trec(run_path), metrics=METRICS)
    means = ev.means.loc["overall", METRICS]
    return {m: ev.values[m] for m in METRICS}, means


def run_pytrec_eval(qrels, qids, run_path: Path):
    import pytrec_eval

    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    got = pytrec_eval.RelevanceEvaluator(qrels, set(TREC.values())).evaluate(run)
    values = {m: np.array([got[q][TREC[m]] if q in got else 0.0 for q in qids]) for m in METRICS}
    return values, {m: float(v.mean()) for m, v in values.items()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--queries", type=int, default=20_000)
    p.add_argument("--depth", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rounds", type=int, default=5, help="timed rounds after the warm one")
    p.add_argument("--data-dir", type=Path, default=Path("/tmp/bench_evaluate"))
    args = p.parse_args()
    import harness

    t = time.perf_counter()
    folder, run_path = generate(args.data_dir, args.queries, args.depth, args.seed)
    bench = harness.load_benchmark(folder)
    qrels = qrels_of(folder)
    qids = [q.query_id for q in bench.queries]
    print(
        f"{args.queries:,} queries x {args.depth} = {args.queries * args.depth:,} run lines, "
        f"{len(bench.corpus):,} chunks ({time.perf_counter() - t:.0f} s to make and load); "
        f"{os.cpu_count()} cores"
    )
    times: dict[str, list[float]] = {"harness": [], "pytrec_eval": []}
    got: dict[str, dict] = {}
    for round_ in range(args.rounds + 1):
        for tool in ("harness", "pytrec_eval") if round_ % 2 else ("pytrec_eval", "harness"):
            got.pop(tool, None)  # this tool's previous results go before the clock starts
            gc.collect()  # so neither tool pays for collecting the other's garbage
            t = time.perf_counter()
            if tool == "harness":
                got[tool] = run_harness(bench, run_path)[0]
            else:
                got[tool] = run_pytrec_eval(qrels, qids, run_path)[0]
            if round_:
                times[tool].append(time.perf_counter() - t)
    ours, ref = got["harness"], got["pytrec_eval"]
    for m in METRICS:
        worst = float(np.max(np.abs(ours[m] - ref[m])))
        if not worst <= 1e-9:
            raise SystemExit(f"{m}: the harness and pytrec_eval differ by {worst}")
    h, r = (statistics.median(times[k]) for k in ("harness", "pytrec_eval"))
    del bench, got
    fresh = harness.load_benchmark(folder)  # what a first run on a new benchmark also pays
    gc.collect()
    t = time.perf_counter()
    run_harness(fresh, run_path)
    first = time.perf_counter() - t
    print(json.dumps({k: [round(x, 3) for x in v] for k, v in times.items()}))
    print(f"harness.evaluate   {h:7.2f} s (median of {args.rounds})")
    print(f"  first run on a freshly loaded benchmark: {first:.2f} s (ratio {r / first:.2f})")
    print(f"pytrec_eval        {r:7.2f} s")
    print(f"ratio pytrec_eval / harness = {r / h:.2f}; values identical to 1e-9")


if __name__ == "__main__":
    main()
