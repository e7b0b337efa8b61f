"""Metrics that read the benchmark's chunks, not only its gold: whether the ranked text holds
an acceptable answer (answer_recall@K, answer_rank) and how much of the top K is outdated for
the query (outdated@K). Definitions: docs/metrics.md#answer-and-freshness-metrics.

Answers and chunk text are normalised alike (lowercase, punctuation to spaces, the articles
a/an/the dropped, whitespace collapsed) and an answer is held when it occurs on word
boundaries; an answer that normalises to nothing ("A", "The The") cannot be looked for.
Only chunks some ranking reaches are normalised, once per call.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping, Sequence

import numpy as np

from harness.core.run import Ranking
from harness.core.types import Benchmark, Chunk, Query
from metrics.registry import Metric

FAMILIES = ("answer_recall", "answer_rank", "outdated")
_ARTICLES = frozenset({"a", "an", "the"})


class _Punctuation(dict):
    """str.translate table: every Unicode punctuation character (category P*) to a space,
    anything else to itself; filled on first sight of a character."""

    def __missing__(self, code: int) -> int | str:
        out: int | str = " " if unicodedata.category(chr(code)).startswith("P") else code
        self[code] = out
        return out


_PUNCTUATION = _Punctuation()


def _words(text: str) -> list[str]:
    return unicodedata.normalize("NFC", text).lower().translate(_PUNCTUATION).split()


def normalize(text: str) -> str:
    """SQuAD-style normal form: NFC, lowercase, punctuation removed, articles a/an/the
    dropped, whitespace collapsed. Punctuation becomes a space rather than nothing, so that
    "Ireland's" and "1990–2000" still hold the words "ireland" and "1990"."""
    return " ".join(w for w in _words(text) if w not in _ARTICLES)


def answer_form(text: str) -> str:
    """A reference or generated answer's normal form for exact match and token F1; one made
    of articles only ("A", as in vitamin A; the band "The The") keeps them, since dropping
    them would leave nothing, and nothing equals everything else that is nothing."""
    return normalize(text) or " ".join(_words(text))


def holds_answer(text: str, forms: Sequence[str]) -> bool:
    """Whether the answer `text` (raw) holds one of the padded reference `forms` on word
    boundaries; a form of articles only must be the whole answer ("a" is in most text)."""
    norm = f" {normalize(text)} "
    return any(f in norm if normalize(f) else f.strip() == answer_form(text) for f in forms)


def answer_forms(query: Query) -> tuple[str, ...]:
    """The query's acceptable answers, normalised and padded with spaces for word-boundary
    containment in chunk text; answers that normalise to nothing (articles or punctuation
    only: "A", "The The") cannot be looked for there and are left out."""
    forms = (normalize(a) for a in query.answers)
    return tuple(dict.fromkeys(f" {f} " for f in forms if f))


class Texts:
    """The benchmark's chunks as normalised, space-padded text, computed on first use only
    (a corpus may be large; the rankings reach a small part of it)."""

    def __init__(self, benchmark: Benchmark):
        self.corpus: Mapping[str, Chunk] = benchmark.corpus
        self._norm: dict[str, str] = {}

    def __getitem__(self, chunk_id: str) -> str:
        text = self._norm.get(chunk_id)
        if text is None:
            chunk = self.corpus.get(chunk_id)
            text = "" if chunk is None else f" {normalize(chunk.index_text)} "
            self._norm[chunk_id] = text
        return text

    def holds(self, chunk_id: str, forms: Sequence[str]) -> bool:
        """Whether the chunk's text holds one of the normalised answer `forms` (a chunk the
        corpus lacks holds none)."""
        text = self[chunk_id]
        return any(f in text for f in forms)


def answer_defined(query: Query, forms: Sequence[str]) -> bool:
    """answer_recall and answer_rank are defined for a query with an answer that the corpus
    can hold (answerable is not "no")."""
    return bool(forms) and query.answerable != "no"


def is_outdated(benchmark: Benchmark, query: Query, chunk_id: str) -> bool:
    """Whether the ranked chunk is outdated for the query; a chunk the corpus lacks is not."""
    chunk = benchmark.corpus.get(chunk_id)
    return chunk is not None and query.is_outdated(chunk)


def first_answer(texts: Texts, ids: Sequence[str], forms: Sequence[str], end: int) -> int | None:
    """0-based position of the first of `ids[:end]` whose text holds an answer, else None;
    scans in rank order and stops there, so chunks below it are never normalised."""
    return next((p for p, cid in enumerate(ids[:end]) if texts.holds(cid, forms)), None)


def evaluate(
    benchmark: Benchmark,
    rankings: Sequence[Ranking | Sequence[str]],
    metrics: Sequence[Metric],
) -> dict[str, np.ndarray]:
    """Metric name -> values in benchmark query order for the corpus families (answer_recall@K,
    answer_rank, outdated@K); `rankings` are parallel to the benchmark's queries (a Ranking or
    the ranked ids)."""
    queries = benchmark.queries
    if len(rankings) != len(queries):
        raise ValueError(f"{len(rankings)} rankings for {len(queries)} queries")
    wrong = [m.name for m in metrics if m.family.name not in FAMILIES]
    if wrong:
        raise ValueError(f"metrics.answers does not compute {', '.join(wrong)}")
    out = {m.name: np.full(len(queries), math.nan) for m in metrics}
    recall = [m for m in metrics if m.family.name == "answer_recall"]
    rank = [m for m in metrics if m.family.name == "answer_rank"]
    stale = [m for m in metrics if m.family.name == "outdated"]
    # how deep the answer search must go: the whole list for answer_rank, else the largest K
    reach = None if rank else max((m.k for m in recall), default=0)
    deepest = max((m.k for m in stale), default=0)
    texts = Texts(benchmark)
    for i, (q, r) in enumerate(zip(queries, rankings)):
        ids = r.ids if isinstance(r, Ranking) else r
        if recall or rank:
            forms = answer_forms(q)
            if answer_defined(q, forms):
                end = len(ids) if reach is None else reach
                p = first_answer(texts, ids, forms, end)
                for m in recall:
                    out[m.name][i] = float(p is not None and p < m.k)
                for m in rank:
                    out[m.name][i] = math.nan if p is None else float(p + 1)
        if stale and q.dated:
            flags = [is_outdated(benchmark, q, c) for c in ids[:deepest]]
            counts = np.concatenate([[0], np.cumsum(flags, dtype=np.int64)])
            for m in stale:
                out[m.name][i] = int(counts[min(m.k, len(flags))]) / m.k
    return out
