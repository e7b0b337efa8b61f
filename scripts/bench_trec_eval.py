"""Time `python -m harness.trec_eval` end to end against pytrec_eval doing the same job.

The data is bench_runfile.py's (seeded: Q queries x D retrieved, scores with 4 decimals, ties
in file order; 1-9 judged documents a query, grades 1-3), with the qrels written as a TREC
qrels file. Each tool runs in a fresh process, from its start to the printed summary of
trec_eval's official measures (runid, num_q, num_ret, num_rel, num_rel_ret, map, gm_map,
Rprec, bpref, recip_rank, iprec_at_recall, P):

  harness      python -m harness.trec_eval qrels.txt run.trec
  pytrec_eval  a Python process: parse_qrel + parse_run (its readers), RelevanceEvaluator with
               those measures, evaluate, compute_aggregated_measure for each, print the lines
  trec_eval    with --trec-eval PATH: trec_eval 10.0's own program (build it from its sources
               with make), whose output the harness must print byte for byte

A first round of both warms the page cache and numba's on-disk machine code and is not
counted; then rounds alternate the two and the medians are reported with their ratio. The two
must print the same numbers (4 decimals; the script exits 1 otherwise), iprec_at_recall aside:
the harness follows trec_eval 10.0 there, pytrec_eval 9.0.8.

    python scripts/bench_trec_eval.py --queries 10000 --depth 1000 --rounds 3 \
        [--trec-eval /tmp/trec_eval-10/trec_eval]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from bench_runfile import generate  # noqa: E402  (scripts/ is not a package)

PYTREC = """
import sys, pytrec_eval
qrels_path, run_path = sys.argv[1:]
with open(qrels_path) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(run_path) as f:
    run = pytrec_eval.parse_run(f)
measures = {"num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
            "recip_rank", "iprec_at_recall", "P"}
values = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
names = sorted(next(iter(values.values())))
for name in names:
    agg = pytrec_eval.compute_aggregated_measure(name, [v[name] for v in values.values()])
    print(f"{name:<22}\\tall\\t{agg:6.4f}")
"""


def timed(cmd: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    took = time.perf_counter() - t0
    if done.returncode:
        raise SystemExit(f"{cmd[:3]} failed: {done.stderr.strip()}")
    return took, done.stdout


def _values(text: str) -> dict[str, float]:
    out = {}
    for line in text.splitlines():
        name, qid, value = (x.strip() for x in line.split("\t"))
        if qid == "all" and name != "runid":
            out[name] = round(float(value), 4)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--queries", type=int, default=10_000)
    p.add_argument("--depth", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data-dir", type=Path, default=Path("/tmp/bench_trec_eval"))
    p.add_argument("--trec-eval", type=Path, help="trec_eval 10.0's program, timed beside")
    args = p.parse_args()
    run_path, qrels_json = generate(args.data_dir, args.queries, args.depth, args.seed)
    qrels_path = qrels_json.with_suffix(".txt")
    if not qrels_path.is_file():
        qrels = json.loads(qrels_json.read_text())
        lines = (f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items())
        qrels_path.write_text("".join(lines))
    commands = {
        "harness": [sys.executable, "-m", "harness.trec_eval", str(qrels_path), str(run_path)],
        "pytrec_eval": [sys.executable, "-c", PYTREC, str(qrels_path), str(run_path)],
    }
    if args.trec_eval:
        commands["trec_eval"] = [str(args.trec_eval), str(qrels_path), str(run_path)]
    size = run_path.stat().st_size / 1e9
    print(f"{args.queries:,} queries x {args.depth} ({size:.2f} GB run); official measures")
    outputs = {tool: timed(cmd)[1] for tool, cmd in commands.items()}  # warm-up, not counted
    ours, theirs = _values(outputs["harness"]), _values(outputs["pytrec_eval"])
    if args.trec_eval and outputs["trec_eval"] != outputs["harness"]:
        raise SystemExit("the harness does not print what trec_eval 10.0 prints")
    shared = {m for m in set(ours) & set(theirs) if not m.startswith("iprec_at_recall")}
    differ = sorted(m for m in shared if abs(ours[m] - theirs[m]) > 1e-4)
    if len(shared) < 15 or differ:
        raise SystemExit(f"the two disagree on {differ or 'which measures they print'}")
    times: dict[str, list[float]] = {tool: [] for tool in commands}
    for r in range(args.rounds):
        order = list(commands) if r % 2 == 0 else list(reversed(commands))
        for tool in order:
            times[tool].append(timed(commands[tool])[0])
    med = {tool: statistics.median(t) for tool, t in times.items()}
    for tool, t in times.items():
        print(f"  {tool:<12} median {med[tool]:7.2f} s   ({', '.join(f'{x:.2f}' for x in t)})")
    print(f"  pytrec_eval / harness: {med['pytrec_eval'] / med['harness']:.2f}x")
    if args.trec_eval:
        print(f"  trec_eval / harness: {med['trec_eval'] / med['harness']:.2f}x; same bytes")
    print(f"  {len(shared)} summary values agree with pytrec_eval to 4 decimals")


if __name__ == "__main__":
    main()
