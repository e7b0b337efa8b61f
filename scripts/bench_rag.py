"""Time end-to-end RAG per query through the public API: harness.evaluate with the rag metrics,
cold (an empty answer cache: every prompt generated) and warm (every answer cached, no model
built), against the same evaluate call without them (retrieval and scoring alone), measured in
alternating rounds in one process.

By default: the packaged demo corpus (48 queries with answers), BM25, K = 5 and 10, and a tiny
random-weight causal LM (tests/helpers/tiny_models.py) on the CPU, which times the plumbing,
not a real model. With a real generator on a GPU:

    python scripts/bench_rag.py                                                  # tiny, CPU
    python scripts/bench_rag.py --generator Qwen/Qwen2.5-7B-Instruct --device cuda --batch-size 64

It prints the cost model: per query 1 + #K prompts (the closed-book one shared by every
retriever), one greedy answer each of at most max_new_tokens tokens. `--garage` times
GaRAGe's measures instead (eligibility, factuality, uRAF, RAF, deflection) with the rule-based
stub judge of tests/helpers/rag_stub.py: the plumbing of sentences, claims and the label cache
on top of the answers, not a judge model.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

METRICS = ["perfrecall", "e2e", "closed_book", "rag_gain", "parametric_gain"]
GARAGE = ["perfrecall", "eligibility", "ufactuality", "factuality", "uraf", "raf", "deflected"]
STUB_JUDGE = {"target": "tests.helpers.rag_stub.GarageJudge"}


def main() -> None:
    import harness

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", default="demo")
    p.add_argument("--generator", default=None, help="hub id or folder (default: tiny model)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--dtype", default="auto")
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--max-new-tokens", type=int, default=16)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--garage", action="store_true", help="GaRAGe's measures, a stub judge")
    args = p.parse_args()
    metrics = GARAGE if args.garage else METRICS
    judged = {"judge": "custom", "judge_model": STUB_JUDGE} if args.garage else {}
    bench = harness.load_benchmark(args.corpus)
    ks = [5, 10]
    with tempfile.TemporaryDirectory() as tmp:
        model = args.generator
        if model is None:
            from tests.helpers.tiny_models import build_tiny_models

            model = str(build_tiny_models(Path(tmp))[0])
        generator = {"backend": "hf", "model": model, "device": args.device,
                     "dtype": args.dtype, "batch_size": args.batch_size}  # fmt: skip
        common = {"bootstrap": 0, "permutations": 0}
        run = harness.evaluate(bench, "bm25", ["coverage"], k=ks, **common).run

        def with_rag(cache: str) -> float:
            section = {"generator": generator, "max_new_tokens": args.max_new_tokens,
                       "cache": cache, **judged}  # fmt: skip
            t = time.perf_counter()
            ev = harness.evaluate(bench, run, metrics, k=ks, rag=section, **common)
            elapsed = time.perf_counter() - t
            assert ev.means is not None
            return elapsed

        def plain() -> float:
            t = time.perf_counter()
            harness.evaluate(bench, run, ["perfrecall"], k=ks, **common)
            return time.perf_counter() - t

        cold, warm, base = [], [], []
        for r in range(args.rounds):
            order = ("cold", "warm", "plain") if r % 2 == 0 else ("plain", "warm", "cold")
            for kind in order:
                if kind == "cold":
                    cold.append(with_rag(f"{tmp}/cache-{r}"))  # a new, empty cache
                elif kind == "warm":
                    cache = f"{tmp}/cache-warm"
                    if not warm:
                        with_rag(cache)  # fills it once
                    warm.append(with_rag(cache))
                else:
                    base.append(plain())
    n = sum(1 for q in bench.queries if q.answers and q.answerable != "no")
    c, w, b = (statistics.median(x) for x in (cold, warm, base))
    prompts = len(bench.queries) * len(ks) if args.garage else n * (1 + len(ks))
    what = "GaRAGe's measures, stub judge" if args.garage else "e2e"
    print(f"{args.corpus}: {n} queries with answers, K = {ks}, {prompts} prompts ({what})")
    print(f"generator: {model if args.generator else 'tiny random-weight Qwen2 (CPU)'}")
    print(f"cold (every answer generated): {c:.3f} s, {1000 * c / n:.1f} ms per query")
    print(f"warm (every answer cached):    {w:.3f} s, {1000 * w / n:.1f} ms per query")
    print(f"retrieval metrics alone:        {b:.3f} s")
    print(
        f"ratios: cold / alone {c / b:.1f}x, warm / alone {w / b:.1f}x (medians of {args.rounds})"
    )


if __name__ == "__main__":
    main()
