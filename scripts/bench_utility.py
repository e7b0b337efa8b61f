"""Time ΔSePer (harness.utility.utility_values) per query, cold (empty cache) and warm (every
generation and entailment cached), and our batched sampler against the reference way of
sampling with transformers (one generate(do_sample=True, num_return_sequences=N) call per
prompt, likelihoods from compute_transition_scores), measured alternately in one run.

By default: the `protocols` fixture (built from $HARNESS_DATA_DIR/redqa/general-wiki.json),
BM25 top-K, and tiny random-weight models (tests/helpers/tiny_models.py) on the CPU, which
times the plumbing, not a real model. With real models on a GPU it is the GPU how-to:

    python scripts/bench_utility.py                                   # tiny models, CPU
    python scripts/bench_utility.py --device cuda --dtype bf16 --batch-size 160 \\
        --generator Qwen/Qwen2.5-7B-Instruct --nli microsoft/deberta-v2-xlarge-mnli

It prints the cost model: per query (1 + #K) prompts x N samples of up to max_new_tokens
tokens, and per prompt N x refs x 2 NLI pairs plus up to N(N-1) for clustering, with the
counts this run measured.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def load_fixture(tmp: Path, path: str | None):
    import harness

    if path:
        return harness.load_benchmark(path)
    import importlib.util

    data = Path(os.environ.get("HARNESS_DATA_DIR", ROOT.parent / "shared" / "data"))
    source = data / "redqa" / "general-wiki.json"
    if not source.is_file():
        sys.exit(f"error: {source} is absent; set HARNESS_DATA_DIR or pass --benchmark")
    spec = importlib.util.spec_from_file_location(
        "mk", ROOT / "scripts" / "make_protocols_fixture.py"
    )
    mk = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mk)
    return harness.load_benchmark(mk.write(source, tmp / "protocols.json"))


def prompts_of(bench, run, ks, spec) -> list[str]:
    """The distinct prompts utility_values samples (closed book and top K), in its order."""
    from harness.utility.compute import passages_text, references

    out = []
    for q in bench.queries:
        if not references(q):
            continue
        closed = spec.prompt_closed.format(question=q.text)
        out.append(closed)
        for k in ks:
            text = passages_text(bench, run[q.query_id].ids[:k], spec)
            out.append(spec.prompt.format(question=q.text, passages=text) if text else closed)
    return list(dict.fromkeys(out))


def reference_sampling(gen, prompts, spec) -> float:
    """Seconds to sample N answers per prompt the plain transformers way."""
    import torch

    model, _ = gen._load()
    t = time.perf_counter()
    for p in prompts:
        ids = torch.tensor([gen.encode(p)], device=gen.device)
        torch.manual_seed(0)
        with torch.inference_mode():
            out = model.generate(
                input_ids=ids,
                attention_mask=torch.ones_like(ids),
                do_sample=True,
                temperature=spec.temperature,
                top_p=spec.top_p,
                top_k=0,
                num_return_sequences=spec.samples,
                max_new_tokens=spec.max_new_tokens,
                output_scores=True,
                return_dict_in_generate=True,
            )
            model.compute_transition_scores(out.sequences, out.scores, normalize_logits=True)
    if gen.device.startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - t


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--benchmark", help="RedQA JSON or BEIR folder (default: protocols fixture)")
    p.add_argument("--generator", default="tiny", help="hub id or folder (tiny: random weights)")
    p.add_argument("--nli", default="tiny", help="hub id or folder (tiny: random weights)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--dtype", default="auto")
    p.add_argument("--batch-size", type=int, default=80, help="generator sequences per call")
    p.add_argument("--nli-batch-size", type=int, default=64)
    p.add_argument("--samples", type=int, default=10)
    p.add_argument("--max-new-tokens", type=int, default=32)
    p.add_argument("--k", type=int, nargs="+", default=[5, 10])
    p.add_argument("--queries", type=int, default=0, help="first N queries only (0: all)")
    p.add_argument("--repeat", type=int, default=2, help="cold runs, alternated with reference")
    p.add_argument("--no-reference", action="store_true")
    a = p.parse_args()

    import harness
    from harness.core.types import Benchmark
    from harness.utility import ModelSpec, UtilitySpec, utility_values
    from harness.utility.hf import HFGenerator

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        bench = load_fixture(tmp, a.benchmark)
        if a.queries:
            bench = Benchmark(bench.name, bench.corpus, bench.queries[: a.queries],
                              bench.checksum, bench.source)  # fmt: skip
        gen_model, nli_model = a.generator, a.nli
        if "tiny" in (gen_model, nli_model):
            from tests.helpers.tiny_models import build_tiny_models

            tiny = build_tiny_models(tmp / "tiny")
            gen_model = str(tiny[0]) if gen_model == "tiny" else gen_model
            nli_model = str(tiny[1]) if nli_model == "tiny" else nli_model
        retriever = harness.get_retriever("bm25")
        retriever.index(bench.corpus)
        run = retriever.search(bench.queries, depth=max(a.k))

        def spec(cache: Path) -> UtilitySpec:
            return UtilitySpec(
                generator=ModelSpec(
                    "hf", gen_model, dtype=a.dtype, device=a.device, batch_size=a.batch_size
                ),  # fmt: skip
                nli=ModelSpec(
                    "hf", nli_model, dtype=a.dtype, device=a.device, batch_size=a.nli_batch_size
                ),  # fmt: skip
                samples=a.samples,
                max_new_tokens=a.max_new_tokens,
                cache=cache,
            )

        prompts = prompts_of(bench, run, a.k, spec(tmp))
        ref_gen = None if a.no_reference else HFGenerator(spec(tmp).generator)
        colds, gens, refs, stats = [], [], [], {}
        for rep in range(a.repeat):
            t = time.perf_counter()
            _, stats = utility_values(bench, run, a.k, spec(tmp / f"cache{rep}"))
            colds.append(time.perf_counter() - t)
            gens.append(stats["seconds"]["generation"])
            if ref_gen is not None:
                refs.append(reference_sampling(ref_gen, prompts, spec(tmp)))
        t = time.perf_counter()
        _, warm_stats = utility_values(bench, run, a.k, spec(tmp / "cache0"))
        warm = time.perf_counter() - t

    n = stats["queries"]
    cold, gen = statistics.median(colds), statistics.median(gens)
    print(f"benchmark {bench.name}: {len(bench.queries)} queries, {n} with answers; K={a.k}; "
          f"N={a.samples}; max_new_tokens={a.max_new_tokens}; device {a.device}")  # fmt: skip
    print(f"generator {a.generator}, NLI {a.nli}; torch threads {_threads()}")
    print(f"prompts sampled: {stats['prompts']} ({stats['prompts'] / n:.2f} per query; at most "
          f"1 + {len(a.k)}); sequences generated: {stats['prompts'] * a.samples}")  # fmt: skip
    print(f"NLI pairs: {stats['nli_pairs']} ({stats['nli_pairs'] / stats['prompts']:.1f} per "
          f"prompt; model: N x refs x 2 = {a.samples} x refs x 2, plus up to "
          f"N(N-1) = {a.samples * (a.samples - 1)} for clustering)")  # fmt: skip
    runs = ", ".join(f"{x:.2f}" for x in colds)
    stages = ", ".join(f"{k} {v:.2f} s" for k, v in stats["seconds"].items())
    print(f"cold: {cold:.2f} s ({cold / n:.3f} s/query; runs {runs}); stages of the last: {stages}")
    print(f"warm: {warm:.3f} s ({warm / n * 1000:.2f} ms/query), models loaded: "
          f"{warm_stats['models_loaded']}; cold/warm {cold / warm:.0f}x")  # fmt: skip
    if refs:
        ref = statistics.median(refs)
        print(f"sampling: ours {gen:.2f} s vs reference (per-prompt generate + "
              f"compute_transition_scores) {ref:.2f} s: {ref / gen:.2f}x "
              f"(runs alternated: ours {', '.join(f'{x:.2f}' for x in gens)}; reference "
              f"{', '.join(f'{x:.2f}' for x in refs)})")  # fmt: skip


def _threads() -> int:
    import torch

    return torch.get_num_threads()


if __name__ == "__main__":
    main()
