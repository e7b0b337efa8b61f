"""GaRAGe's measures of a generated answer (docs/rag.md#garage): its sentences, the passages
that may support them (every passage in the prompt; for uRAF and RAF only those labelled
relevant), the passages it cites with [n] markers, how a sentence's support labels make an
answer factual, and the per-query values from the judge's labels."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np

from harness.core.types import Benchmark
from harness.rag.judges import LABELS, Claim, Item
from metrics.rag import relevant

# per query, from a model judge's labels of the answer with the top K
GARAGE = ("eligibility", "ufactuality", "factuality", "uraf", "raf")
# the passages the answer cites against those the reference answer cites
ATTRIBUTION = ("attribution_precision", "attribution_recall", "attribution_f1")
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


def references(query) -> tuple[str, ...]:
    """The query's acceptable answers as the benchmark writes them, blank ones left out."""
    return tuple(a for a in query.answers if a and a.strip())


def garage_values(bench, run, metrics, answer, has_ref, asked_of, report) -> dict:
    """GaRAGe's per-query values: eligibility (no major issue), ufactuality and uraf
    (every sentence supported or needing no attribution, by the shown passages or by the
    relevant ones alone), factuality and raf (eligible and that)."""
    wanted = [m for m in metrics if m.family.name in GARAGE]
    if not wanted:
        return {}
    n = len(bench.queries)
    ks = sorted({m.k for m in wanted})
    at = [(i, k) for k in ks for i in range(n) if has_ref[i]]
    names = {m.family.name for m in wanted}
    out: dict[str, np.ndarray] = {}
    eligible = {k: np.full(n, np.nan) for k in ks}
    if names & {"eligibility", "factuality", "raf"}:
        items = [Item(bench.queries[i].text, answer(i, k), references(bench.queries[i]))
                 for i, k in at]  # fmt: skip
        labels = asked_of("eligibility", items)
        for (i, k), lab in zip(at, labels):
            eligible[k][i] = np.nan if lab is None else float(lab != "major")
        for k in ks:
            mine = [lab for (_, kk), lab in zip(at, labels) if kk == k]
            report[f"eligibility@{k}"] = {
                "answers": len(mine),
                "unreadable": mine.count(None),
                "labels": {x: mine.count(x) for x in ("none", "minor", "major")},
            }
    contexts = [c for c, f in (("shown", "ufactuality"), ("relevant", "uraf")) if
                names & {f, "factuality" if c == "shown" else "raf"}]  # fmt: skip
    supported: dict[str, dict[int, np.ndarray]] = {}
    for context in contexts:
        claims, owner = [], []
        for i, k in at:
            q = bench.queries[i]
            ids = shown(bench, run[q.query_id].ids[:k])
            if context == "relevant":
                gold = relevant(q)
                ids = [cid for cid in ids if cid in gold]
            texts = tuple(passage(bench, cid) for cid in ids)
            for sentence in sentences(answer(i, k)):
                claims.append(Claim(q.text, sentence, texts))
                owner.append((i, k))
        labels = asked_of("support", claims)
        # nothing shown supports nothing: "supported" with no passage is not believed
        lonely = [j for j, c in enumerate(claims) if not c.context and labels[j] == "supported"]
        for j in lonely:
            labels[j] = "unsupported"
        per: dict[tuple[int, int], list] = {key: [] for key in at}
        for key, lab in zip(owner, labels):
            per[key].append(lab)
        supported[context] = {k: np.full(n, np.nan) for k in ks}
        for (i, k), labs in per.items():
            supported[context][k][i] = factual(labs)
        name = "ufactuality" if context == "shown" else "uraf"
        for k in ks:
            mine = [lab for (_, kk), lab in zip(owner, labels) if kk == k]
            report[f"{name}@{k}"] = {
                "answers": sum(1 for _, kk in at if kk == k),
                "sentences": len(mine),
                "unreadable": mine.count(None),
                "labels": {x: mine.count(x) for x in LABELS["support"] if x is not None},
                "supported_without_passage": sum(1 for j in lonely if owner[j][1] == k),
            }
    for m in wanted:
        family = m.family.name
        if family == "eligibility":
            out[m.name] = eligible[m.k]
        elif family in ("ufactuality", "uraf"):
            out[m.name] = supported["shown" if family == "ufactuality" else "relevant"][m.k]
        else:
            facts = supported["shown" if family == "factuality" else "relevant"][m.k]
            out[m.name] = np.array([both(a, b) for a, b in zip(eligible[m.k], facts)])
    return out


def attribution_values(bench, run, metric, answer) -> np.ndarray:
    """attribution_precision/recall/f1@K per query: the passages the answer with the top K
    cites ([n] markers) against those the reference answer cites; NaN without those."""
    part = ATTRIBUTION.index(metric.family.name)
    out = np.full(len(bench.queries), np.nan)
    for i, q in enumerate(bench.queries):
        if q.citations:
            ids = shown(bench, run[q.query_id].ids[: metric.k])
            out[i] = attribution(cited(answer(i, metric.k), ids), q.citations)[part]
    return out


def citing(bench, ks, answer) -> dict[str, Any]:
    """How many answers scored for attribution cite anything at all, and the reference
    citations that name no chunk of the corpus (no answer can cite those)."""
    scored = [(i, k) for k in ks for i, q in enumerate(bench.queries) if q.citations]
    missing = list(dict.fromkeys(c for q in bench.queries for c in q.citations
                                 if c not in bench.corpus))  # fmt: skip
    return {
        "answers": len(scored),
        "citing": sum(bool(cited(answer(i, k), ["?"] * k)) for i, k in scored),
        "not_in_corpus": len(missing),
        "examples": missing[:3],
    }
