"""Time a TREC run file end to end: the harness against pytrec_eval (and ranx when it imports).

Synthetic and seeded: Q queries x D retrieved chunks, ids drawn from an 8.8M-passage id space
(MS MARCO's size; no repeats within a query), scores with 4 decimals listed in rank order, tied
chunks in file order (not canonical order, so ties must be sorted), tag `bm25`: about 33 bytes
a line, 3.3 GB for 100K x 1000. Qrels: 1-9 judged chunks a query (grades 1-3), about 60 % of
them retrieved.

Each tool runs in a fresh process (so its peak RSS is its own, and numba's cached machine code
is loaded as a user's process loads it), from the same file and the same qrels dict (read
before the clock starts). What is timed, from the tool's import to per-query values of map,
ndcg_cut_10, recall_100, P_10 and recip_rank:

  harness      Run.from_trec(path) (read, validate, canonical order; the compiled path for a
               file this large) + metrics.standard.prepare(qrels) + metrics.standard.evaluate
  pytrec_eval  pytrec_eval.parse_run(open(path)) (its own Python reader, as its users read
               runs) + RelevanceEvaluator(qrels, measures) + evaluate(run)
  ranx         ranx.Run.from_file(path, kind="trec") (its Python reader) + Qrels(qrels) +
               ranx.evaluate(..., return_mean=False)

A first round of every tool warms the caches (the page cache, numba's on-disk machine code)
and is not counted; then rounds alternate the tools and the medians are reported, with the
ratio of pytrec_eval's (and ranx's) median to the harness's. The harness and pytrec_eval must
agree on every value to 1e-9 (the script exits 1 otherwise); ranx's largest difference is shown.

    python scripts/bench_runfile.py --queries 10000 --depth 1000           # with references
    python scripts/bench_runfile.py --queries 100000 --depth 1000 --tools harness --rounds 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

POOL = 8_800_000
MEASURES = ("map", "ndcg_cut_10", "recall_100", "P_10", "recip_rank")
TOOLS = ("harness", "pytrec_eval", "ranx")


def generate(folder: Path, queries: int, depth: int, seed: int) -> tuple[Path, Path]:
    """run.trec and qrels.json for these settings (made once, then reused)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    folder.mkdir(parents=True, exist_ok=True)
    run_path = folder / f"run-{queries}x{depth}-s{seed}.trec"
    qrels_path = folder / f"qrels-{queries}x{depth}-s{seed}.json"
    if run_path.is_file() and qrels_path.is_file():
        return run_path, qrels_path
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    options = pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    partial = run_path.with_suffix(".partial")
    with open(partial, "wb") as f:
        for first in range(0, queries, 10_000):
            n = min(10_000, queries - first)
            # distinct ids per query: a random start plus increasing gaps, then shuffled
            gaps = rng.integers(1, POOL // depth, (n, depth))
            docs = (np.cumsum(gaps, axis=1) + rng.integers(0, POOL, (n, 1))) % POOL
            docs = np.take_along_axis(docs, np.argsort(rng.random((n, depth)), axis=1), axis=1)
            scores = np.round(np.sort(rng.random((n, depth)), axis=1)[:, ::-1] * 20, 4)
            qids = np.arange(first, first + n)
            judged = rng.integers(1, 10, n)
            from_run = rng.integers(0, depth, (n, 9))
            others = rng.integers(0, POOL, (n, 9))
            retrieved = rng.random((n, 9)) < 0.6
            grades = rng.integers(1, 4, (n, 9))
            for i in range(n):
                rel = np.where(retrieved[i], docs[i, from_run[i]], others[i])[: judged[i]]
                qrels[f"q{qids[i]}"] = {f"d{d}": int(g) for d, g in zip(rel, grades[i])}
            zeros = pa.array(np.zeros(n * depth, np.int32))
            table = pa.table(
                {
                    "q": pc.binary_join_element_wise(
                        "q", pc.cast(pa.array(np.repeat(qids, depth)), pa.string()), ""
                    ),
                    "z": pa.DictionaryArray.from_arrays(zeros, pa.array(["Q0"])),
                    "d": pc.binary_join_element_wise(
                        "d", pc.cast(pa.array(docs.ravel()), pa.string()), ""
                    ),
                    "r": np.tile(np.arange(1, depth + 1), n),
                    "s": scores.ravel(),
                    "t": pa.DictionaryArray.from_arrays(zeros, pa.array(["bm25"])),
                }
            )
            pcsv.write_csv(table, f, write_options=options)
    qrels_path.write_text(json.dumps(qrels))
    partial.replace(run_path)
    return run_path, qrels_path


def child(tool: str, run_path: str, qrels_path: str, out: str) -> None:
    """One tool's timed run; prints its timings as JSON, saves its values to `out`."""
    qrels = json.loads(Path(qrels_path).read_text())
    qids = sorted(qrels)
    times: dict[str, float] = {}
    t0 = time.perf_counter()  # imports count: a user's process pays them
    if tool == "harness":
        from harness.core.run import Run
        from metrics import standard

        times["import"] = time.perf_counter() - t0
        run = Run.from_trec(run_path)
        times["read + canonical order"] = time.perf_counter() - t0 - times["import"]
        t1 = time.perf_counter()
        judged = standard.prepare([qrels[q] for q in qids])
        wanted = [("map", None), ("ndcg", 10), ("recall", 100), ("P", 10), ("recip_rank", None)]
        got = standard.evaluate([run[q] for q in qids], judged, wanted)
        times["metrics"] = time.perf_counter() - t1
        values = dict(zip(MEASURES, (got[w] for w in wanted)))
    elif tool == "pytrec_eval":
        import pytrec_eval

        times["import"] = time.perf_counter() - t0
        with open(run_path) as f:
            run = pytrec_eval.parse_run(f)
        times["read"] = time.perf_counter() - t0 - times["import"]
        t1 = time.perf_counter()
        measures = {"map", "ndcg_cut.10", "recall.100", "P.10", "recip_rank"}
        got = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
        times["metrics"] = time.perf_counter() - t1
        values = {m: np.array([got[q][m] for q in qids]) for m in MEASURES}
    else:
        import ranx

        times["import"] = time.perf_counter() - t0
        run = ranx.Run.from_file(run_path, kind="trec")
        times["read"] = time.perf_counter() - t0 - times["import"]
        t1 = time.perf_counter()
        names = ["map", "ndcg@10", "recall@100", "precision@10", "mrr"]
        got = ranx.evaluate(ranx.Qrels(qrels), run, names, return_mean=False)
        times["metrics"] = time.perf_counter() - t1
        order = {q: i for i, q in enumerate(run.keys())}  # ranx's query order
        at = np.array([order[q] for q in qids])
        values = {m: np.asarray(got[n])[at] for m, n in zip(MEASURES, names)}
    times["total"] = time.perf_counter() - t0
    np.savez(out, **values)
    print(json.dumps(times))


def spawn(tool: str, run_path: Path, qrels_path: Path, out: Path) -> dict:
    """Run `child` in a fresh process; its timings plus its peak RSS (GiB)."""
    cmd = [sys.executable, __file__, "--child", tool, str(run_path), str(qrels_path), str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE)
    stdout = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{tool} failed (exit {proc.returncode})")
    result = json.loads(stdout.decode().strip().splitlines()[-1])
    result["peak_rss_gib"] = usage.ru_maxrss / 2**20  # ru_maxrss is in KiB on Linux
    return result


def available(tool: str) -> bool:
    if tool == "harness":
        return True
    probe = subprocess.run([sys.executable, "-c", f"import {tool}"], capture_output=True)
    return probe.returncode == 0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--queries", type=int, default=10_000)
    p.add_argument("--depth", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rounds", type=int, default=3, help="timed rounds after the warm one")
    p.add_argument("--tools", default=",".join(TOOLS), help="comma-separated: " + ", ".join(TOOLS))
    p.add_argument("--data-dir", type=Path, default=Path("/tmp/bench_runfile"))
    p.add_argument(
        "--child", nargs=4, metavar=("TOOL", "RUN", "QRELS", "OUT"), help=argparse.SUPPRESS
    )
    args = p.parse_args()
    if args.child:
        child(*args.child)
        return
    tools = [t for t in args.tools.split(",") if t]
    missing = [t for t in tools if t not in TOOLS]
    if missing:
        raise SystemExit(f"unknown tool {missing[0]!r}; valid: {', '.join(TOOLS)}")
    skipped = [t for t in tools if not available(t)]
    tools = [t for t in tools if t not in skipped]
    for t in skipped:
        print(f"({t} does not import here: skipped)")
    t = time.perf_counter()
    run_path, qrels_path = generate(args.data_dir, args.queries, args.depth, args.seed)
    size = run_path.stat().st_size
    print(
        f"{args.queries:,} queries x {args.depth} chunks = {args.queries * args.depth:,} lines, "
        f"{size / 2**30:.2f} GiB ({time.perf_counter() - t:.0f} s to make or find); "
        f"{os.cpu_count()} cores",
        flush=True,
    )
    results: dict[str, list[dict]] = {tool: [] for tool in tools}
    outs = {tool: args.data_dir / f"values-{tool}.npz" for tool in tools}
    for r in range(args.rounds + 1):
        for tool in tools:
            res = spawn(tool, run_path, qrels_path, outs[tool])
            parts = ", ".join(f"{k} {v:.2f} s" for k, v in res.items() if k != "peak_rss_gib")
            label = "warm-up" if r == 0 else f"round {r}"
            print(
                f"  {label:8} {tool:12} {parts}; peak RSS {res['peak_rss_gib']:.2f} GiB", flush=True
            )
            if r:
                results[tool].append(res)
    if "harness" in tools:
        ours = np.load(outs["harness"])
        for tool in tools[1:]:
            ref = np.load(outs[tool])
            diff = max(float(np.max(np.abs(ours[m] - ref[m]), initial=0)) for m in MEASURES)
            print(f"largest difference from {tool}: {diff:.2e} over {len(ours['map']):,} queries")
            if tool == "pytrec_eval" and not diff <= 1e-9:
                raise SystemExit("the harness and pytrec_eval disagree")
    med = {tool: float(np.median([x["total"] for x in results[tool]])) for tool in tools}
    print("\nmedian end to end (file -> run -> per-query values):")
    for tool in tools:
        ratio = (
            ""
            if tool == "harness" or "harness" not in med
            else (f"   {med[tool] / med['harness']:.1f}x the harness's time")
        )
        rss = max(x["peak_rss_gib"] for x in results[tool])
        print(f"  {tool:12} {med[tool]:8.2f} s   peak RSS {rss:.2f} GiB{ratio}")


if __name__ == "__main__":
    main()
