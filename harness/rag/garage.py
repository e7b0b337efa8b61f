"""GaRAGe's measures of a generated answer (docs/rag.md#garage): its sentences, the passages
that may support them (every passage in the prompt; for uRAF and RAF only those labelled
relevant), the passages it cites with [n] markers, and how a sentence's support labels make
an answer factual."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from functools import cache

from harness.core.types import Benchmark

# [1], [2, 3], [1; 4]: the prompt's passages by their rank there
_CITE = re.compile(r"\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\]")
FACTUAL = ("supported", "no_rad")  # the labels a factual answer's sentences all have


@cache
def _segmenter():
    # pysbd: rule-based, offline (nltk's punkt would need a data download); it keeps
    # abbreviations and decimals ("U.S.", "2.1") inside their sentence
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


def sentences(answer: str) -> list[str]:
    """The answer's sentences, citation markers removed, empty ones dropped."""
    text = " ".join(re.sub(r"\s*" + _CITE.pattern, "", answer).split())
    if not text:
        return []
    return [s.strip() for s in _segmenter().segment(text) if re.search(r"\w", s)]


def shown(bench: Benchmark, ids: Sequence[str]) -> list[str]:
    """The ids of the passages a prompt shows, in rank order (the corpus's; the prompt
    leaves the others out and numbers the rest 1, 2, ...)."""
    return [cid for cid in ids if cid in bench.corpus]


def passage(bench: Benchmark, cid: str) -> str:
    chunk = bench.corpus[cid]
    return f"{chunk.title}\n{chunk.text}" if chunk.title else chunk.text


def cited(answer: str, ids: Sequence[str]) -> set[str]:
    """The passages the answer cites: its [n] markers mapped to the n-th passage shown; a
    marker past the last passage cites nothing that was shown (kept as '[n]', a miss)."""
    ranks = {int(n) for group in _CITE.findall(answer) for n in re.split(r"[,;]", group)}
    return {ids[r - 1] if 1 <= r <= len(ids) else f"[{r}]" for r in ranks}


def attribution(cites: set[str], human: Sequence[str]) -> tuple[float, float, float]:
    """Precision, recall and F1 of the passages cited against those the reference answer
    cites; an answer that cites nothing scores 0 on all three."""
    hit = len(cites & set(human))
    p = hit / len(cites) if cites else 0.0
    r = hit / len(set(human))
    return p, r, (2 * p * r / (p + r) if hit else 0.0)


def factual(labels: Sequence[str | None]) -> float:
    """1 when every sentence is supported or needs no attribution (an answer with no sentence
    too), 0 when one is unsupported or contradicted, NaN when neither is known (a sentence's
    label could not be read)."""
    if any(lab is not None and lab not in FACTUAL for lab in labels):
        return 0.0
    return math.nan if any(lab is None for lab in labels) else 1.0


def both(a: float, b: float) -> float:
    """Kleene's AND of two 0/1 values that may be unknown (NaN): 0 when either is 0."""
    if a == 0.0 or b == 0.0:
        return 0.0
    return math.nan if math.isnan(a) or math.isnan(b) else 1.0
