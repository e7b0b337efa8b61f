"""BM25 at MS MARCO scale on a synthetic corpus: index time and memory, query throughput
against bm25s (numba backend) and rank_bm25 in the same run, top-10 identity checks.

The corpus comes from scripts/make_synthetic_corpus.py (seeded; generated on the fly, or
read from the TSV it writes). Two modes:

    # 100K / 1M chunks: ours vs bm25s (numba) vs rank_bm25, rounds interleaved
    python scripts/bench_bm25_scale.py --chunks 100000 --rank-bm25-queries 100
    python scripts/bench_bm25_scale.py --chunks 1000000 --rank-bm25-queries 30

    # 8.8M chunks: ours alone, streamed (no Chunk objects) from a TSV written once; top-10
    # of sampled queries checked against an independent float64 numpy computation of
    # rank_bm25's formula
    python scripts/make_synthetic_corpus.py --chunks 8800000 --out /tmp/synth-8.8m.tsv
    /usr/bin/time -v python scripts/bench_bm25_scale.py --chunks 8800000 --stream \
        --corpus-file /tmp/synth-8.8m.tsv

Throughput: 1,000 queries (3-10 Zipfian terms), top --depth (100) per query, best of
--repeat rounds; ours and bm25s use the same numba thread count (--threads, default all
cores). "Ours" is BM25.search end to end (query tokenisation and Ranking objects included);
bm25s's figure is `retrieve` on pre-tokenised queries. Index memory: a second indexing
pass under tracemalloc gives the peak of everything indexing allocates and what the index
keeps (numpy arrays, vocabulary, ids); the ratio peak / kept is the target (<= 2).
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import platform
import sys
import time
import tracemalloc
from array import array
from collections import Counter
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from make_synthetic_corpus import chunks, queries  # noqa: E402

from harness.core.run import canonical  # noqa: E402
from harness.core.types import Query  # noqa: E402
from retrievers.bm25 import BM25  # noqa: E402

K1, B, EPSILON = 1.5, 0.75, 0.25


def rss_peak_gib() -> float:
    """This process's peak resident set (VmHWM), GiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 2**20
    return float("nan")


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def index_memory(pairs) -> tuple[float, float]:
    """(peak MiB allocated while indexing, MiB the index keeps), by tracemalloc."""
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    bm25 = BM25()
    bm25.index_texts(iter(pairs))
    kept, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del bm25
    return (peak - base) / 2**20, (kept - base) / 2**20


def top10_vs(run, ref_rankings) -> tuple[int, float]:
    """(queries whose top-10 ids differ, max |score difference| over the rest)."""
    differ, gap = 0, 0.0
    for qid, ref in ref_rankings.items():
        ours = run[qid]
        if ours.ids[:10] != ref.ids[:10]:
            differ += 1
        else:
            gap = max(gap, float(np.max(np.abs(np.subtract(ours.scores[:10], ref.scores[:10])))))
    return differ, gap


def corpus(args):
    """The (chunk id, text) stream: from --corpus-file (make_synthetic_corpus.py's TSV) or
    generated on the fly."""
    if args.corpus_file is None:
        yield from chunks(args.chunks, seed=args.seed)
        return
    with open(args.corpus_file, encoding="utf-8") as f:
        for line in f:
            cid, _, text = line.rstrip("\n").partition("\t")
            yield cid, text


class Timed:
    """An iterator that adds the time spent producing its items to `.seconds`."""

    def __init__(self, items):
        self.items, self.seconds = iter(items), 0.0

    def __iter__(self):
        return self

    def __next__(self):
        t = time.perf_counter()
        try:
            return next(self.items)
        finally:
            self.seconds += time.perf_counter() - t


def numpy_reference(args, texts: dict[str, str]) -> dict[str, object]:
    """Canonical top-10 of each query in `texts` by rank_bm25's formula in float64 numpy,
    from a second, independent pass over the corpus (own counts, df, idf and floor)."""
    n_chunks = args.chunks
    wanted = {t for text in texts.values() for t in text.split()}
    df: Counter[str] = Counter()
    dl = np.zeros(n_chunks, dtype=np.float64)
    post = {t: (array("i"), array("i")) for t in wanted}  # term -> (documents, counts)
    for d, (_, text) in enumerate(corpus(args)):
        toks = text.split()
        dl[d] = len(toks)
        c = Counter(toks)
        df.update(c.keys())
        for t in wanted.intersection(c):
            post[t][0].append(d)
            post[t][1].append(c[t])
    n = n_chunks
    idf = {t: float(np.log(n - f + 0.5) - np.log(f + 0.5)) for t, f in df.items()}
    # The mean idf exactly rounded (fsum); rank_bm25 adds the idfs one by one, which over a
    # vocabulary of millions moves the floor (and the scores) by about 1e-10.
    floor = EPSILON * (math.fsum(idf.values()) / len(idf))
    idf = {t: (floor if v < 0 else v) for t, v in idf.items()}
    norm = K1 * (1 - B + B * dl / dl.mean())
    out = {}
    for qid, text in texts.items():
        score = np.zeros(n)
        for t in text.split():  # query order, repeats count again: rank_bm25's loop
            if t in idf:
                f = np.zeros(n)
                f[np.frombuffer(post[t][0], dtype=np.int32)] = post[t][1]
                score += idf[t] * (f * (K1 + 1) / (f + norm))
        cut = np.partition(score, n - 10)[n - 10]
        cand = np.flatnonzero(score >= cut)  # every chunk tied at the cut competes on id
        out[qid] = canonical(zip(map(str, cand.tolist()), score[cand].tolist()), 10)
    return out


def stream_mode(args, qs) -> int:
    """Index a streamed corpus, search, report wall times and peak RSS, then check top-10."""
    bm25 = BM25()
    stream = Timed(corpus(args))
    t_index, _ = timed(partial(bm25.index_texts, stream))
    rss_index = rss_peak_gib()
    nnz = len(bm25._docs)
    index_gib = (
        sum(a.nbytes for a in (bm25._indptr, bm25._docs, bm25._weights, bm25._dense))
        + bm25._id_pos.nbytes
        + bm25._by_pos.nbytes
    ) / 2**30
    t_search, run = timed(partial(bm25.search, qs, depth=args.depth))
    rss_search = rss_peak_gib()
    source = "generating" if args.corpus_file is None else "reading"
    print(
        f"index: {t_index:.1f} s wall, of which {stream.seconds:.1f} s {source} the corpus: "
        f"{t_index - stream.seconds:.1f} s indexing; {nnz:,} postings, arrays {index_gib:.2f} GiB"
    )
    print(f"peak RSS after index: {rss_index:.2f} GiB")
    print(
        f"search: {len(qs)} queries, top-{args.depth}: {t_search:.1f} s wall "
        f"({len(qs) / t_search:.1f} queries/s); peak RSS {rss_search:.2f} GiB"
    )
    sample = {q.query_id: q.text for q in qs[: args.check_queries]}
    kept = {qid: run[qid] for qid in sample}
    del bm25, run
    gc.collect()
    t_ref, ref = timed(partial(numpy_reference, args, sample))
    differ, gap = top10_vs(kept, ref)
    print(
        f"top-10 vs independent float64 numpy (rank_bm25's formula), {len(sample)} queries: "
        f"{differ} differ; max |score difference| {gap:.2e} ({t_ref:.0f} s)"
    )
    return 0 if differ == 0 else 1


def compare_mode(args, qs) -> int:
    import bm25s
    import numba
    from rank_bm25 import BM25Okapi

    t_gen, pairs = timed(lambda: list(chunks(args.chunks, seed=args.seed)))
    n_tokens = sum(len(t.split()) for _, t in pairs)
    print(f"corpus: {len(pairs):,} chunks, {n_tokens:,} tokens (generated in {t_gen:.0f} s)")

    ours = BM25()
    t_ours_index, _ = timed(lambda: ours.index_texts(iter(pairs)))

    def bm25s_index():
        tok = bm25s.tokenize(
            [t for _, t in pairs], lower=False, token_pattern=r"\S+", stopwords=None,
            show_progress=False,
        )  # fmt: skip
        model = bm25s.BM25(backend="numba")
        model.index(tok, show_progress=False)
        return model

    t_bm25s_index, model = timed(bm25s_index)
    q_tokens = [q.text.split() for q in qs]
    threads = numba.get_num_threads()

    t_ours, t_bm25s = [], []
    ours.search(qs, depth=args.depth)  # warm-up round: loads compiled code, warms caches
    model.retrieve(q_tokens, k=args.depth, n_threads=threads, show_progress=False)
    for _ in range(args.repeat):  # interleaved: both see the same machine load
        t, run = timed(partial(ours.search, qs, depth=args.depth))
        t_ours.append(t)
        t, _ = timed(
            partial(model.retrieve, q_tokens, k=args.depth, n_threads=threads, show_progress=False)
        )
        t_bm25s.append(t)
    del model
    gc.collect()

    peak_mib, kept_mib = (None, None)
    if not args.no_memory:
        peak_mib, kept_mib = index_memory(pairs)

    n_ref = args.rank_bm25_queries
    t_ref_index = t_ref = None
    differ = gap = None
    if n_ref:
        intern = sys.intern
        t_ref_index, ref = timed(
            lambda: BM25Okapi(
                [intern(w) for w in t.split()] for _, t in pairs
            )  # a generator: rank_bm25 keeps counts, not token lists
        )
        ids = [cid for cid, _ in pairs]
        sample = qs[:n_ref]

        def rank_bm25_search():
            out = {}
            for q in sample:
                s = ref.get_scores(q.text.split())
                out[q.query_id] = (s, np.argsort(s)[::-1][: args.depth])
            return out

        t_ref, raw = timed(rank_bm25_search)
        ref_rankings = {qid: canonical(zip(ids, s.tolist()), 10) for qid, (s, _) in raw.items()}
        differ, gap = top10_vs(run, ref_rankings)

    nq = len(qs)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cpus (shared), numba threads "
        f"{threads}, python {platform.python_version()}, bm25s {bm25s.__version__}"
    )
    print(
        f"| {args.chunks:,} chunks | index (s) | queries/s (best of {args.repeat}) | all runs (s) |"
    )
    print("|---|---|---|---|")
    print(
        f"| harness BM25 | {t_ours_index:.1f} | {nq / min(t_ours):.0f} | "
        f"{', '.join(f'{t:.2f}' for t in t_ours)} |"
    )
    print(
        f"| bm25s numba | {t_bm25s_index:.1f} | {nq / min(t_bm25s):.0f} | "
        f"{', '.join(f'{t:.2f}' for t in t_bm25s)} |"
    )
    if n_ref:
        print(
            f"| rank_bm25 ({n_ref} queries) | {t_ref_index:.1f} | {n_ref / t_ref:.1f} "
            f"| {t_ref:.1f} |"
        )
    print(
        f"query throughput ours / bm25s: {min(t_bm25s) / min(t_ours):.2f}x (best), "
        f"{np.median(t_bm25s) / np.median(t_ours):.2f}x (median)"
    )
    if n_ref:
        print(f"query throughput ours / rank_bm25: {(nq / min(t_ours)) / (n_ref / t_ref):.0f}x")
        print(f"index time rank_bm25 / ours: {t_ref_index / t_ours_index:.1f}x")
    print(f"index time bm25s / ours: {t_bm25s_index / t_ours_index:.1f}x")
    if peak_mib is not None:
        print(
            f"indexing peak (tracemalloc) {peak_mib:.0f} MiB, index kept {kept_mib:.0f} MiB: "
            f"peak / index {peak_mib / kept_mib:.2f}, transient / index "
            f"{(peak_mib - kept_mib) / kept_mib:.2f}; transient "
            f"{(peak_mib - kept_mib) * 2**20 / n_tokens:.1f} bytes/token"
        )
    if n_ref:
        print(
            f"top-10 vs rank_bm25 on {n_ref} queries: {differ} differ; "
            f"max |score difference| {gap:.2e}"
        )
    print(f"peak RSS: {rss_peak_gib():.2f} GiB")
    return 0 if not differ else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="search rounds; the best is kept")
    parser.add_argument("--threads", type=int, default=0, help="numba threads (0: all cores)")
    parser.add_argument(
        "--rank-bm25-queries", type=int, default=50, help="queries timed and checked (0: skip)"
    )
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc pass")
    parser.add_argument(
        "--stream", action="store_true", help="ours only, streamed; check against numpy"
    )
    parser.add_argument("--check-queries", type=int, default=20, help="--stream: queries checked")
    parser.add_argument(
        "--corpus-file",
        type=Path,
        help="--stream: read the corpus from this TSV (make_synthetic_corpus.py --out) and the "
        "queries from it with .queries.tsv appended, instead of generating them",
    )
    args = parser.parse_args()
    if args.threads:
        import numba

        numba.set_num_threads(args.threads)
    if args.corpus_file is None:
        pairs = queries(args.queries, seed=args.seed)
    else:
        lines = Path(f"{args.corpus_file}.queries.tsv").read_text(encoding="utf-8").splitlines()
        pairs = [line.partition("\t")[::2] for line in lines[: args.queries]]
    qs = [Query(qid, text, ()) for qid, text in pairs]
    return stream_mode(args, qs) if args.stream else compare_mode(args, qs)


if __name__ == "__main__":
    sys.exit(main())
