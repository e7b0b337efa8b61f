"""Generate a synthetic MS MARCO-sized corpus and queries: seeded, deterministic, streamed.

Chunks hold 30-90 tokens (60 on average) drawn from a Zipfian vocabulary (P(rank r) ~ 1/r^s,
s = 1.0 over 2^21 terms by default); a term is its rank written in bijective base 26
(rank 0 'a', 25 'z', 26 'aa', ...), so frequent terms are short, as in English. Chunk ids are
"0", "1", ... (MS MARCO passage ids); queries take 3-10 tokens from the same distribution.
Each block of 65,536 chunks has its own seed (derived from --seed), so the text of chunk i
does not depend on how the stream is read.

    python scripts/make_synthetic_corpus.py --chunks 1000000 --out /tmp/synth-1m.tsv
    python scripts/make_synthetic_corpus.py --chunks 8800000 --queries 1000 --out /tmp/synth.tsv

writes `id<TAB>text` lines to --out and the queries to --out with `.queries.tsv` appended.
scripts/bench_bm25_scale.py imports `chunks` and `queries` and streams them without a file.
"""

from __future__ import annotations

import argparse
import string
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

BLOCK = 1 << 16
VOCAB = 1 << 21
EXPONENT = 1.0
MEAN_LEN = 60


def _words(n: int) -> np.ndarray:
    """Term of each rank 0..n-1: the rank in bijective base 26."""
    letters = string.ascii_lowercase
    out = []
    for r in range(n):
        r += 1
        w = []
        while r:
            r, m = divmod(r - 1, 26)
            w.append(letters[m])
        out.append("".join(reversed(w)))
    return np.asarray(out, dtype=object)


class Zipf:
    """Sampler of term ranks with P(r) proportional to 1 / (r + 1)^s."""

    def __init__(self, vocab: int = VOCAB, exponent: float = EXPONENT):
        p = 1.0 / np.arange(1, vocab + 1, dtype=np.float64) ** exponent
        self.cdf = np.cumsum(p / p.sum())
        self.cdf[-1] = 1.0
        self.words = _words(vocab)

    def texts(self, rng: np.random.Generator, lengths: np.ndarray) -> list[str]:
        """One text of lengths[i] sampled terms per i."""
        ranks = np.searchsorted(self.cdf, rng.random(int(lengths.sum())), side="right")
        words = self.words[ranks].tolist()
        out, at = [], 0
        for n in lengths.tolist():
            out.append(" ".join(words[at : at + n]))
            at += n
        return out


def chunks(
    n: int, *, seed: int = 0, vocab: int = VOCAB, exponent: float = EXPONENT
) -> Iterator[tuple[str, str]]:
    """(chunk id, text) for chunks 0..n-1, generated block by block."""
    zipf = Zipf(vocab, exponent)
    seeds = np.random.SeedSequence(seed).spawn((n + BLOCK - 1) // BLOCK)
    for b, ss in enumerate(seeds):
        rng = np.random.default_rng(ss)
        first = b * BLOCK
        size = min(BLOCK, n - first)
        lengths = rng.integers(MEAN_LEN - 30, MEAN_LEN + 31, size=size)
        for i, text in enumerate(zipf.texts(rng, lengths)):
            yield str(first + i), text


def queries(
    n: int, *, seed: int = 0, vocab: int = VOCAB, exponent: float = EXPONENT
) -> list[tuple[str, str]]:
    """(query id, text) for n queries of 3-10 terms."""
    zipf = Zipf(vocab, exponent)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1]))
    lengths = rng.integers(3, 11, size=n)
    return [(f"q{i}", text) for i, text in enumerate(zipf.texts(rng, lengths))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=8_800_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--vocab", type=int, default=VOCAB)
    parser.add_argument("--exponent", type=float, default=EXPONENT)
    parser.add_argument("--out", type=Path, required=True, help="corpus TSV to write")
    args = parser.parse_args()
    opts = {"seed": args.seed, "vocab": args.vocab, "exponent": args.exponent}
    with open(args.out, "w", encoding="utf-8") as f:
        for cid, text in chunks(args.chunks, **opts):
            f.write(f"{cid}\t{text}\n")
    with open(f"{args.out}.queries.tsv", "w", encoding="utf-8") as f:
        for qid, text in queries(args.queries, **opts):
            f.write(f"{qid}\t{text}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
