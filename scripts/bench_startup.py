"""Start-up and loading costs, for this checkout and (--reference) another, run alternately on
the same machine so that each ratio comes from one run:

- compose: Hydra compositions per run (counted in the process, not timed);
- demo:    wall and CPU time of the default job (`python -m harness force=true`);
- wiki:    the same for `python -m harness corpus=general-wiki force=true` (needs the data);
- compare: `python -m harness.compare` of two General-Wiki cells (bm25, bm25[k1=0.9]; made
           once by this checkout, read by both);
- imports: import time by top-level package (`python -X importtime`) of the demo job and of
           compare;
- beir:    a synthetic corpus of --chunks chunks (seeded; ~60 tokens each) written as a BEIR
           folder and as RedQA JSON, each loaded in a fresh process: wall, CPU, peak RSS.

    python scripts/bench_startup.py --reference /path/to/other/checkout
    python scripts/bench_startup.py --only beir --chunks 1000000 --runs 3 --reference ...
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ("compose", "demo", "wiki", "compare", "imports", "beir")

# Counts Hydra compositions of one `python -m harness ARGS` (every one goes through
# ConfigLoaderImpl.load_configuration, the compose API's included).
COUNT = """
import sys
from hydra._internal.config_loader_impl import ConfigLoaderImpl
calls, load = [], ConfigLoaderImpl.load_configuration
ConfigLoaderImpl.load_configuration = lambda self, *a, **k: calls.append(1) or load(self, *a, **k)
from harness.cli.run import main
try:
    main(sys.argv[1:])
finally:
    print("compositions", len(calls), file=sys.stderr)
"""

# Loads one benchmark (argv: redqa|beir PATH) and prints wall and CPU seconds of the load.
LOAD = """
import sys, time
from pathlib import Path
from harness.data.benchmarks import load_beir, load_redqa
kind, path = sys.argv[1], Path(sys.argv[2])
wall, cpu = time.perf_counter(), time.process_time()
bench = (load_beir if kind == "beir" else load_redqa)(path, name="synthetic")
print(time.perf_counter() - wall, time.process_time() - cpu, len(bench.corpus))
"""


def _env(checkout: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(checkout)}


def timed(args: list[str], checkout: Path, cwd: Path) -> tuple[float, float]:
    """(wall s, CPU s) of one command run to the end (exit 0, or 1: compare's gate)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    res = subprocess.run(args, cwd=cwd, env=_env(checkout), capture_output=True, text=True)
    wall = time.perf_counter() - start
    if res.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args)} failed:\n{res.stderr}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def alternate(make_args, checkouts: dict[str, Path], runs: int, cwd: Path) -> dict[str, list]:
    """Each checkout's (wall, CPU) over `runs` rounds, one run of each per round in turn."""
    out: dict[str, list] = {k: [] for k in checkouts}
    for _ in range(runs):
        for key, path in checkouts.items():
            out[key].append(timed(make_args(key, path), path, cwd))
    return out


def report(title: str, times: dict[str, list]) -> None:
    """Median wall and CPU (user + sys) per checkout, the fastest wall (the least disturbed
    run, on a shared machine), and this / reference."""
    print(f"\n## {title}")
    med = {}
    for key, values in times.items():
        wall = statistics.median(w for w, _ in values)
        cpu = statistics.median(c for _, c in values)
        med[key] = wall, cpu
        print(
            f"{key:>9}: median wall {wall:.3f} s (fastest {min(w for w, _ in values):.3f} s), "
            f"CPU {cpu:.3f} s over {len(values)} runs"
        )
    if "reference" in med:
        (w, c), (rw, rc) = med["this"], med["reference"]
        print(f"this / reference: wall {w / rw:.2f}, CPU {c / rc:.2f}")


def compositions(checkouts: dict[str, Path], tmp: Path) -> None:
    print("\n## Hydra compositions per run")
    for args in ([], ["corpus=general-wiki"], ["retriever.k1=0.9"], ["retriever=bm25-simple"]):
        counts = {}
        for key, path in checkouts.items():
            cmd = [sys.executable, "-c", COUNT, *args, f"results.dir={tmp / key}", "force=true"]
            res = subprocess.run(cmd, cwd=tmp, env=_env(path), capture_output=True, text=True)
            found = re.findall(r"compositions (\d+)", res.stderr)
            counts[key] = found[-1] if found else f"failed: {res.stderr.strip()[-200:]}"
        shown = ", ".join(f"{k} {v}" for k, v in counts.items())
        print(f"python -m harness {' '.join(args) or '(demo)'}: {shown}")


def imports(
    checkouts: dict[str, Path], tmp: Path, cells: tuple[Path, Path] | None, runs: int
) -> None:
    print(f"\n## Import time by top-level package (self time summed; median of {runs} runs)")
    jobs = {"demo job": ["-m", "harness", f"results.dir={tmp / 'imports'}", "force=true"]}
    if cells:
        jobs["compare"] = ["-m", "harness.compare", *map(str, cells)]
    for job, args in jobs.items():
        for key, path in checkouts.items():
            samples: dict[str, list[int]] = defaultdict(lambda: [0] * runs)
            for i in range(runs):
                res = subprocess.run(
                    [sys.executable, "-X", "importtime", *args],
                    cwd=tmp,
                    env=_env(path),
                    capture_output=True,
                    text=True,
                )
                for m in re.finditer(r"import time:\s+(\d+) \|\s+\d+ \| ( *)(\S+)", res.stderr):
                    samples[m[3].split(".")[0]][i] += int(m[1])
            by_pkg = {pkg: statistics.median(us) / 1e6 for pkg, us in samples.items()}
            total = statistics.median(sum(v[i] for v in samples.values()) for i in range(runs))
            top = sorted(by_pkg.items(), key=lambda kv: -kv[1])[:7]
            shown = ", ".join(f"{p} {s:.3f}" for p, s in top)
            print(f"{job:>9} {key:>9}: {total / 1e6:.3f} s in all; {shown}")


def make_synthetic(folder: Path, chunks: int, seed: int = 0) -> tuple[Path, Path]:
    """The same chunks as a BEIR folder and as a RedQA JSON file (100 queries, one gold each)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(50_000)])
    ranks = np.arange(1, len(vocab) + 1)
    p = 1.0 / ranks
    p /= p.sum()  # Zipfian word frequencies
    beir = folder / "beir"
    (beir / "qrels").mkdir(parents=True, exist_ok=True)
    corpus: dict[str, dict] = {}
    with open(beir / "corpus.jsonl", "w", encoding="utf-8") as f:
        for start in range(0, chunks, 10_000):
            n = min(10_000, chunks - start)
            lengths = rng.integers(40, 81, n)
            words = vocab[rng.choice(len(vocab), size=int(lengths.sum()), p=p)]
            ends = np.cumsum(lengths)
            for i, (lo, hi) in enumerate(zip(ends - lengths, ends)):
                cid, text = f"doc{start + i}", " ".join(words[lo:hi])
                f.write(json.dumps({"_id": cid, "title": "", "text": text}) + "\n")
                corpus[cid] = {"content": text}
    gold = rng.integers(0, chunks, 100)
    queries = [
        {"query_id": f"q{i}", "question": f"question {i}", "gold_chunk_groups": [[f"doc{g}"]]}
        for i, g in enumerate(gold)
    ]
    with open(beir / "queries.jsonl", "w", encoding="utf-8") as f:
        f.writelines(
            json.dumps({"_id": q["query_id"], "text": q["question"]}) + "\n" for q in queries
        )
    lines = [f"q{i}\tdoc{g}\t1\n" for i, g in enumerate(gold)]
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(lines))
    redqa = folder / "redqa.json"
    redqa.write_text(json.dumps({"queries": queries, "corpus": corpus}), encoding="utf-8")
    return beir, redqa


def beir(checkouts: dict[str, Path], tmp: Path, chunks: int, runs: int) -> None:
    start = time.perf_counter()
    folder, redqa = make_synthetic(tmp / "synthetic", chunks)
    size = (folder / "corpus.jsonl").stat().st_size / 2**20
    print(
        f"\n## Loading {chunks:,} chunks ({size:.0f} MiB of corpus.jsonl; made in "
        f"{time.perf_counter() - start:.0f} s)"
    )
    results: dict[tuple[str, str], list] = defaultdict(list)
    for _ in range(runs):
        for key, path in checkouts.items():
            for kind, target in (("beir", folder), ("redqa", redqa)):
                cmd = [sys.executable, "-c", LOAD, kind, str(target)]
                res = subprocess.run(cmd, cwd=tmp, env=_env(path), capture_output=True, text=True)
                if res.returncode:
                    raise SystemExit(res.stderr)
                wall, cpu, n = res.stdout.split()
                assert int(n) == chunks, (kind, n)
                results[key, kind].append((float(wall), float(cpu)))
    for key in checkouts:
        b = [statistics.median(x[i] for x in results[key, "beir"]) for i in (0, 1)]
        r = [statistics.median(x[i] for x in results[key, "redqa"]) for i in (0, 1)]
        print(
            f"{key:>9}: BEIR {b[0]:.2f} s (CPU {b[1]:.2f}), RedQA JSON {r[0]:.2f} s "
            f"(CPU {r[1]:.2f}); BEIR / RedQA: wall {b[0] / r[0]:.2f}, CPU {b[1] / r[1]:.2f}"
        )
    if "reference" in checkouts:
        for kind in ("beir", "redqa"):
            this = statistics.median(w for w, _ in results["this", kind])
            ref = statistics.median(w for w, _ in results["reference", kind])
            print(f"{kind:>9}: this / reference wall {this / ref:.2f}")
    peaks(checkouts, tmp, folder, redqa)


def peaks(checkouts: dict[str, Path], tmp: Path, folder: Path, redqa: Path) -> None:
    """Peak RSS of each load, each in a process of its own: VmHWM (ru_maxrss would include
    what this process held when it forked the child)."""
    probe = LOAD.replace("print(", "_ = (") + (
        "\nprint(next(ln for ln in open('/proc/self/status') if ln.startswith('VmHWM')).split()[1])"
    )
    for key, path in checkouts.items():
        shown = []
        for kind, target in (("BEIR", folder), ("RedQA JSON", redqa)):
            cmd = [sys.executable, "-c", probe, kind.lower().split()[0], str(target)]
            res = subprocess.run(cmd, cwd=tmp, env=_env(path), capture_output=True, text=True)
            shown.append(f"{kind} {int(res.stdout.split()[-1]) / 1024:,.0f} MiB")
        print(f"{key:>9}: peak RSS {', '.join(shown)}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--reference", type=Path, help="another checkout, timed alternately")
    p.add_argument("--runs", type=int, default=5, help="runs per checkout and measure (5)")
    p.add_argument("--chunks", type=int, default=1_000_000, help="synthetic chunks (1,000,000)")
    p.add_argument("--only", default=",".join(SECTIONS), help=f"among {','.join(SECTIONS)}")
    args = p.parse_args()
    only = set(args.only.split(","))
    checkouts = {
        "this": ROOT,
        **({"reference": args.reference.resolve()} if args.reference else {}),
    }
    data = Path(os.environ.get("HARNESS_DATA_DIR", ""), "redqa", "general-wiki.json")
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores; checkouts: "
        + ", ".join(f"{k} {v}" for k, v in checkouts.items())
    )
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        py = sys.executable
        if "compose" in only:
            compositions(checkouts, tmp)
        if "demo" in only:
            times = alternate(
                lambda k, _: [py, "-m", "harness", "force=true", f"results.dir={tmp / k}"],
                checkouts,
                args.runs,
                tmp,
            )
            report("Default job: python -m harness force=true", times)
        if "wiki" in only and data.is_file():
            times = alternate(
                lambda k, _: [
                    py,
                    "-m",
                    "harness",
                    "corpus=general-wiki",
                    "force=true",
                    f"results.dir={tmp / k}",
                ],
                checkouts,
                args.runs,
                tmp,
            )
            report("General-Wiki BM25: python -m harness corpus=general-wiki force=true", times)
        cells = None
        if ({"compare", "imports"} & only) and data.is_file():
            for extra in ([], ["retriever.k1=0.9"]):
                cmd = [py, "-m", "harness", "corpus=general-wiki", f"results.dir={tmp / 'cells'}"]
                subprocess.run(
                    cmd + extra, cwd=tmp, env=_env(ROOT), check=True, capture_output=True
                )
            cells = (tmp / "cells/general-wiki/bm25", tmp / "cells/general-wiki/bm25[k1=0.9]")
        if "compare" in only and cells:
            times = alternate(
                lambda k, _: [py, "-m", "harness.compare", *map(str, cells)],
                checkouts,
                args.runs,
                tmp,
            )
            report("python -m harness.compare bm25 bm25[k1=0.9] (General-Wiki, 688 queries)", times)
        if "imports" in only:
            imports(checkouts, tmp, cells, args.runs)
        if "beir" in only:
            beir(checkouts, tmp, args.chunks, max(1, min(args.runs, 3)))


if __name__ == "__main__":
    main()
