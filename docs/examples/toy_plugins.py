"""Two tiny plug-ins for the harness, used by docs/api.md and the plug-in tests.

`WordOverlap` implements the retriever protocol itself; `HashingEncoder` only embeds text, and
the harness turns it into a dense retriever (embedding cache and search backends included).
"""

from __future__ import annotations

import hashlib
import re

import numpy as np


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


class WordOverlap:
    """Score = number of distinct query words in the chunk, plus `alpha` x its share of the
    query's words. Returns plain dicts; the harness puts them in canonical order."""

    def __init__(self, name: str = "word-overlap", alpha: float = 0.0):
        self.name = name
        self.alpha = float(alpha)
        self._chunks: dict[str, set[str]] = {}

    def index(self, corpus) -> None:
        self._chunks = {cid: _words(chunk.index_text) for cid, chunk in corpus.items()}

    def search(self, queries, *, depth: int):
        out = {}
        for q in queries:
            words = _words(q.text)
            scores = {}
            for cid, chunk_words in self._chunks.items():
                hits = len(words & chunk_words)
                if hits:
                    scores[cid] = hits + self.alpha * hits / max(1, len(words))
            best = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:depth]
            out[q.query_id] = dict(best)
        return out


class HashingEncoder:
    """A bag-of-words embedding by feature hashing (sentence-transformers style encode())."""

    def __init__(self, dim: int = 256):
        self.dim = int(dim)

    def encode(self, texts, **kwargs):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for w in _words(text):
                h = int.from_bytes(hashlib.blake2b(w.encode(), digest_size=4).digest(), "little")
                out[i, h % self.dim] += 1.0
        return out


class NotARetriever:
    """Has neither search() nor encode(): the harness says what is missing."""

    name = "broken"

    def index(self, corpus) -> None:
        pass
